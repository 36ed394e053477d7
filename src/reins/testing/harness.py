"""What the Store conformance suite needs of an engine beyond the Store protocol itself.

An engine's author implements :class:`StoreHarness` once (how to make a fresh ledger, a foreign
one, a newer one; how to prove a location untouched; how to run SQL by hand) and the whole
suite in :mod:`reins.testing.conformance` runs against it. :class:`SQLiteHarness` is the one
for the built-in SQLite engine.
"""

from __future__ import annotations

import hashlib
import itertools
import sqlite3
from pathlib import Path
from typing import Protocol

from reins.store.owner import Owner
from reins.store.protocol import Store


class StoreHarness(Protocol):
    """Makes ledgers of one engine in the states the conformance suite needs."""

    name: str
    # Schema versions older than the current one that :meth:`make_at_version` can build.
    earlier_versions: tuple[int, ...]

    def create(self) -> str:
        """A fresh location holding a new, empty ledger; returns the location."""
        ...

    def missing(self) -> str:
        """A location where no ledger is yet (opening it with ``create`` makes one there)."""
        ...

    def open(self, location: str, *, create: bool = False, owner: Owner | None = None) -> Store:
        """Open the ledger at ``location`` for ``owner`` as another process would (a new
        connection)."""
        ...

    def fingerprint(self, location: str) -> str:
        """A digest of everything stored at ``location``: equal digests mean untouched."""
        ...

    def make_foreign(self) -> str:
        """A location holding data that is not a reins ledger."""
        ...

    def make_newer(self) -> str:
        """A location holding a reins ledger whose schema is newer than this reins knows."""
        ...

    def make_damaged(self) -> str | None:
        """A location holding a damaged ledger, or None if the engine cannot make one."""
        ...

    def make_mislabelled(self) -> str | None:
        """A current ledger whose recorded schema version claims an older schema than its
        tables hold (set back by hand), as an older reins would leave it; None if the engine
        cannot make one."""
        ...

    def make_unmigratable(self) -> str | None:
        """A ledger at an earlier schema version whose migration fails part-way (a trigger of
        its user's own refuses one of the migration's writes); None if the engine cannot make
        one."""
        ...

    def make_at_version(self, version: int) -> str:
        """A ledger at an earlier schema ``version``. From version 1 on it holds items ``a``,
        ``b`` and ``c``, ``a`` locked PASS by one judged attempt and ``b`` given one judged
        FAIL whose root cause is ``not-bad``; version 0 is a marked ledger with no tables."""
        ...

    def execute(self, location: str, statement: str) -> None:
        """Run hand-written SQL on the ledger, committing it; raises if the engine refuses."""
        ...


class SQLiteHarness:
    """The harness of the SQLite engine: each ledger is a file in ``folder``."""

    name = "sqlite"
    earlier_versions: tuple[int, ...] = (0, 1, 2, 3)

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._names = itertools.count()

    def _fresh(self) -> Path:
        return self.folder / f"ledger-{next(self._names)}.reins.db"

    def create(self) -> str:
        from reins.store.sqlite import SQLiteStore

        path = self._fresh()
        SQLiteStore.open(path, create=True).close()
        return str(path)

    def missing(self) -> str:
        return str(self._fresh())

    def open(self, location: str, *, create: bool = False, owner: Owner | None = None) -> Store:
        from reins.store.sqlite import SQLiteStore

        return SQLiteStore.open(location, create=create, owner=owner)

    def fingerprint(self, location: str) -> str:
        h = hashlib.sha256()
        for path in sorted(Path(location).parent.glob(Path(location).name + "*")):
            h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
            h.update(str(path.stat().st_mode).encode())
        return h.hexdigest()

    def make_foreign(self) -> str:
        path = self._fresh()
        conn = sqlite3.connect(path)
        conn.execute("CREATE TABLE notes (body TEXT)")
        conn.execute("INSERT INTO notes VALUES ('mine, not a ledger')")
        conn.commit()
        conn.close()
        return str(path)

    def make_newer(self) -> str:
        from reins.store.sqlite.schema import SCHEMA_VERSION

        location = self.create()
        # A newer reins left it in rollback-journal mode: opening must not switch it to WAL.
        conn = sqlite3.connect(location)
        conn.execute("PRAGMA journal_mode = DELETE")
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
        conn.commit()
        conn.close()
        return location

    def make_damaged(self) -> str | None:
        location = self.create()
        with open(location, "r+b") as f:
            f.seek(100)
            f.write(b"\xde\xad\xbe\xef" * 256)  # the first page's b-tree header and cells
        return location

    def make_mislabelled(self) -> str | None:
        location = self.create()
        # In rollback-journal mode, where a connection that switched it to WAL would show.
        conn = sqlite3.connect(location)
        conn.execute("PRAGMA journal_mode = DELETE")
        conn.execute("PRAGMA user_version = 2")
        conn.commit()
        conn.close()
        return location

    def make_unmigratable(self) -> str | None:
        location = self.make_at_version(2)  # left in rollback-journal mode, as v2 was made
        self.execute(
            location,
            "CREATE TRIGGER mine BEFORE UPDATE ON usage_totals "
            "BEGIN SELECT RAISE(ABORT, 'usage_totals is mine'); END",
        )
        return location

    def make_at_version(self, version: int) -> str:
        from reins.store.sqlite.schema import APPLICATION_ID, MIGRATIONS, statements

        path = self._fresh()
        conn = sqlite3.connect(path, isolation_level=None)
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute("BEGIN")
        for v in range(1, version + 1):
            for statement in statements(MIGRATIONS[v]):
                conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {version}")
        if version >= 1:
            _seed_v1(conn)
        if version >= 2:  # what v2 keeps beside the log: each item's last root cause
            conn.execute("UPDATE items SET root_cause = 'not-bad' WHERE key = 'b'")
        if version >= 3:  # what v3 counts beside the log: the attempts per kind
            conn.execute("UPDATE usage_totals SET judged = 2")
        conn.execute("COMMIT")
        conn.close()
        return str(path)

    def execute(self, location: str, statement: str) -> None:
        conn = sqlite3.connect(location)
        try:
            conn.execute(statement)
            conn.commit()
        finally:
            conn.close()


def _seed_v1(conn: sqlite3.Connection) -> None:
    """Items a, b, c at schema v1: a locked PASS, b with one judged FAIL (root not-bad)."""
    stamp = "2026-01-01T00:00:00.000Z"
    for key, state, tries, turns in (("a", "PASS", 0, 1), ("b", "TODO", 1, 1), ("c", "TODO", 0, 0)):
        conn.execute(
            "INSERT INTO items (key, state, tries, turns, payload, created_at, updated_at, "
            "locked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (key, state, tries, turns, f'{{"word":"{key}"}}', stamp, stamp,
             stamp if state != "TODO" else None),
        )  # fmt: skip
    conn.execute(
        "INSERT INTO attempts (item_id, turn, kind, driver, state_after, tries_after, outcome, "
        "recorded_at) VALUES (1, 1, 'judged', 'old', 'PASS', 0, 'PASS', ?)",
        (stamp,),
    )
    conn.execute(
        "INSERT INTO attempts (item_id, turn, kind, driver, state_after, tries_after, outcome, "
        "root_cause, facts, recorded_at) VALUES (2, 1, 'judged', 'old', 'TODO', 1, 'FAIL', "
        "'not-bad', ?, ?)",
        ('[{"rule":"not-bad","where":"answer","expected":"good","actual":"bad"}]', stamp),
    )
    # The counters v1 kept beside the log (state and tries are counted by its triggers).
    conn.execute("INSERT INTO rule_counts (rule, fired, root) VALUES ('not-bad', 1, 1)")
    conn.execute("UPDATE usage_totals SET attempts = 2")
