"""The SQLite ledger: one file, WAL, one short write transaction per recorded turn.

Several processes may share one ledger. Writes take SQLite's write lock up front
(``BEGIN IMMEDIATE``) so that a read-decide-write sequence is never interleaved with another
writer; readers never block writers (WAL).
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from reins.errors import (
    CorruptLedger,
    IllegalTransition,
    LeaseConflict,
    LedgerError,
    NotFound,
    NotTodo,
)
from reins.ledger.model import Attempt, AttemptKind, Item, State, Transition
from reins.ledger.schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION

SQLITE_MAGIC = b"SQLite format 3\x00"
SCAN_CHUNK = 5_000

_ITEM_COLUMNS = (
    "key, state, tries, payload, turns, created_at, updated_at, locked_at, "
    "lease_owner, lease_expires, export_batch"
)
_ATTEMPT_COLUMNS = (
    "turn, kind, driver, state_after, tries_after, outcome, root_cause, facts, feedback, "
    "submission, error, policy, backend, prompt_digest, input_tokens, output_tokens, cost, "
    "latency, started_at, recorded_at, extra"
)


def now_iso() -> str:
    """The current UTC time as ISO 8601 with milliseconds and a ``Z``."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def dump_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=False)


@dataclass(frozen=True, slots=True)
class Lease:
    """What ``lease_next`` hands a driver: the item, and how often it asked without submitting."""

    item: Item
    nexts_since_submit: int
    renewed: bool


@dataclass(frozen=True, slots=True)
class Stats:
    """Counters for ``status``: read from tables the triggers keep, never from a scan."""

    counts: dict[State, int]
    tries: dict[int, int]
    rules: dict[str, tuple[int, int]]
    attempts: int
    input_tokens: int
    output_tokens: int
    cost: float
    leased: int

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def remaining(self) -> int:
        return self.counts.get(State.TODO, 0)


def _item(row: sqlite3.Row | tuple[Any, ...]) -> Item:
    payload = row[3]
    return Item(
        key=row[0],
        state=State(row[1]),
        tries=row[2],
        payload=json.loads(payload) if payload is not None else None,
        turns=row[4],
        created_at=row[5],
        updated_at=row[6],
        locked_at=row[7],
        lease_owner=row[8],
        lease_expires=row[9],
        exported=row[10] is not None,
    )


def _attempt(key: str, row: tuple[Any, ...]) -> Attempt:
    return Attempt(
        key=key,
        turn=row[0],
        kind=AttemptKind(row[1]),
        driver=row[2],
        state_after=State(row[3]),
        tries_after=row[4],
        outcome=row[5],
        root_cause=row[6],
        facts=tuple(json.loads(row[7])) if row[7] else (),
        feedback=row[8],
        submission=row[9],
        error=row[10],
        policy=row[11],
        backend=row[12],
        prompt_digest=row[13],
        input_tokens=row[14],
        output_tokens=row[15],
        cost=row[16],
        latency=row[17],
        started_at=row[18],
        recorded_at=row[19],
        extra=json.loads(row[20]) if row[20] else {},
    )


def _check_header(path: Path) -> None:
    """Refuse, without opening it for writing, a file that is not a reins ledger."""
    try:
        with path.open("rb") as f:
            header = f.read(100)
    except OSError as exc:
        raise LedgerError(f"cannot read ledger {path}: {exc.strerror or exc}") from exc
    if len(header) < 100 or not header.startswith(SQLITE_MAGIC):
        raise CorruptLedger(
            f"{path} is not a reins ledger (it is not an SQLite database). "
            "Point --ledger at a reins ledger, or move this file away and run `reins scan`."
        )
    app_id = int.from_bytes(header[68:72], "big")
    if app_id != APPLICATION_ID:
        raise CorruptLedger(
            f"{path} is an SQLite database but not a reins ledger (application id {app_id:#x}). "
            "It was left untouched; point --ledger at a reins ledger."
        )


class Ledger:
    """A reins ledger in one SQLite file.

    Open it with :meth:`open`; use it as a context manager or call :meth:`close`.
    """

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self._conn = conn

    # -- opening ---------------------------------------------------------------------------

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, create: bool = False) -> Ledger:
        """Open the ledger at ``path``; with ``create``, make a new one if none is there.

        Raises:
            NotFound: no file and ``create`` is false.
            CorruptLedger: the file is not a reins ledger, is damaged, or is newer than reins.
        """
        p = Path(path)
        if not p.exists():
            if not create:
                raise NotFound(f"no ledger at {p}. Run `reins scan` to create it.")
            cls._create(p)
        _check_header(p)
        try:
            conn = _connect(p)
            version = conn.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            raise CorruptLedger(f"ledger {p} is damaged: {exc}. It was left untouched.") from exc
        if version > SCHEMA_VERSION:
            conn.close()
            raise CorruptLedger(
                f"ledger {p} has schema version {version}, but this reins understands up to "
                f"{SCHEMA_VERSION}. Upgrade reins-quest; the ledger was left untouched."
            )
        ledger = cls(p, conn)
        if version < SCHEMA_VERSION:
            ledger._migrate(version)
        return ledger

    @classmethod
    def _create(cls, path: Path) -> None:
        """Build a new ledger beside ``path`` and rename it in place, so a crash leaves none."""
        if not path.parent.exists():
            raise LedgerError(f"cannot create ledger {path}: folder {path.parent} does not exist")
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            conn = sqlite3.connect(tmp, isolation_level=None)
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute("BEGIN")
            for version in sorted(MIGRATIONS):
                _run_script(conn, version)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("INSERT INTO meta (key, value) VALUES ('created_at', ?)", (now_iso(),))
            conn.execute("COMMIT")
            conn.close()
            # Two processes may race to create: the first rename wins and the second keeps it.
            if path.exists():
                tmp.unlink()
            else:
                os.replace(tmp, path)
        except sqlite3.Error as exc:
            tmp.unlink(missing_ok=True)
            raise LedgerError(f"cannot create ledger {path}: {exc}") from exc
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise LedgerError(f"cannot create ledger {path}: {exc.strerror or exc}") from exc

    def _migrate(self, version: int) -> None:
        with self.write():
            current = self._conn.execute("PRAGMA user_version").fetchone()[0]
            for target in range(current + 1, SCHEMA_VERSION + 1):
                _run_script(self._conn, target)
                self._conn.execute(f"PRAGMA user_version = {target}")

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- transactions ----------------------------------------------------------------------

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, holding SQLite's write lock from its first statement."""
        conn = self._conn
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.DatabaseError as exc:
            raise _ledger_error(self.path, exc) from exc
        try:
            yield conn
        except sqlite3.DatabaseError as exc:
            conn.execute("ROLLBACK")
            raise _ledger_error(self.path, exc) from exc
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        try:
            conn.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            conn.execute("ROLLBACK")
            raise _ledger_error(self.path, exc) from exc

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """One read transaction: a consistent snapshot across several queries."""
        conn = self._conn
        try:
            conn.execute("BEGIN")
            try:
                yield conn
            finally:
                conn.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            raise _ledger_error(self.path, exc) from exc

    # -- items -----------------------------------------------------------------------------

    def add(self, seeds: Iterable[tuple[str, Any]]) -> tuple[int, int]:
        """Add items from ``(key, payload)`` pairs, streaming; existing keys stay untouched.

        Returns:
            ``(added, already_present)``; duplicates inside ``seeds`` count as present.
        """
        added = seen = 0
        chunk: list[tuple[str, str | None, str, str]] = []
        stamp = now_iso()  # one per chunk: a clock read per item costs seconds per million
        for key, payload in seeds:
            if not isinstance(key, str) or not key:
                raise LedgerError(f"an item key must be a non-empty string, got {key!r}")
            chunk.append((key, None if payload is None else dump_json(payload), stamp, stamp))
            if len(chunk) >= SCAN_CHUNK:
                added += self._insert(chunk)
                seen += len(chunk)
                chunk.clear()
                stamp = now_iso()
        if chunk:
            added += self._insert(chunk)
            seen += len(chunk)
        return added, seen - added

    def _insert(self, rows: list[tuple[str, str | None, str, str]]) -> int:
        with self.write() as conn:
            cur = conn.executemany(
                "INSERT OR IGNORE INTO items (key, payload, created_at, updated_at) "
                "VALUES (?, ?, ?, ?)",
                rows,
            )
            return cur.rowcount

    def get(self, key: str) -> Item:
        """The item with ``key``. Raises NotFound."""
        with self.read() as conn:
            row = conn.execute(
                f"SELECT {_ITEM_COLUMNS} FROM items WHERE key = ?", (key,)
            ).fetchone()
        if row is None:
            raise NotFound(f"no item with key {key!r} in {self.path}")
        return _item(row)

    def items(self, state: State | None = None, *, limit: int | None = None) -> Iterator[Item]:
        """Items in the order they were added, optionally of one state.

        Read page by page, each page in its own short read, so a caller may write to the
        ledger while it iterates.
        """
        where = "" if state is None else " AND state = ?"
        args: list[Any] = [] if state is None else [state.value]
        last, left = 0, limit
        while left is None or left > 0:
            page = 1000 if left is None else min(1000, left)
            with self.read() as conn:
                rows = conn.execute(
                    f"SELECT {_ITEM_COLUMNS}, id FROM items WHERE id > ?{where} "
                    "ORDER BY id LIMIT ?",
                    [last, *args, page],
                ).fetchall()
            if not rows:
                return
            last = rows[-1][-1]
            left = None if left is None else left - len(rows)
            yield from (_item(r) for r in rows)

    def log(self, key: str) -> list[Attempt]:
        """Every attempt of the item, oldest first. Raises NotFound."""
        return self.snapshot(key)[1]

    def snapshot(self, key: str) -> tuple[Item, list[Attempt]]:
        """The item and its log, read in one consistent snapshot. Raises NotFound."""
        with self.read() as conn:
            row = conn.execute(
                f"SELECT {_ITEM_COLUMNS}, id FROM items WHERE key = ?", (key,)
            ).fetchone()
            if row is None:
                raise NotFound(f"no item with key {key!r} in {self.path}")
            rows = conn.execute(
                f"SELECT {_ATTEMPT_COLUMNS} FROM attempts WHERE item_id = ? ORDER BY turn",
                (row[-1],),
            ).fetchall()
        return _item(row), [_attempt(key, r) for r in rows]

    # -- leases ----------------------------------------------------------------------------

    def lease_next(self, driver: str, *, ttl: float, now: float | None = None) -> Lease | None:
        """Lease the next TODO item to ``driver`` for ``ttl`` seconds.

        A driver that already holds a live lease gets the same item again (one item in
        progress per driver); otherwise the oldest TODO item that nobody holds, or whose
        lease has expired. Returns None when no TODO item is free.
        """
        t = time.time() if now is None else now
        with self.write() as conn:
            row = conn.execute(
                f"SELECT {_ITEM_COLUMNS} FROM items WHERE lease_owner = ? AND state = 'TODO' "
                "AND lease_expires > ? ORDER BY id LIMIT 1",
                (driver, t),
            ).fetchone()
            renewed = row is not None
            if row is None:
                row = conn.execute(
                    f"SELECT {_ITEM_COLUMNS} FROM items WHERE state = 'TODO' "
                    "AND (lease_owner IS NULL OR lease_expires <= ?) ORDER BY id LIMIT 1",
                    (t,),
                ).fetchone()
            if row is None:
                return None
            conn.execute(
                "UPDATE items SET lease_owner = ?, lease_expires = ? WHERE key = ?",
                (driver, t + ttl, row[0]),
            )
            nexts = conn.execute(
                "INSERT INTO drivers (name, nexts, last_seen) VALUES (?, 1, ?) "
                "ON CONFLICT (name) DO UPDATE SET nexts = nexts + 1, "
                "last_seen = excluded.last_seen RETURNING nexts",
                (driver, now_iso()),
            ).fetchone()[0]
            item = _item(row)
        leased = Item(**{**_asdict(item), "lease_owner": driver, "lease_expires": t + ttl})
        return Lease(leased, nexts, renewed)

    def renew(self, key: str, driver: str, *, ttl: float, now: float | None = None) -> bool:
        """Extend ``driver``'s lease on ``key`` (a heartbeat). False if the lease was lost."""
        t = time.time() if now is None else now
        with self.write() as conn:
            cur = conn.execute(
                "UPDATE items SET lease_expires = ? WHERE key = ? AND lease_owner = ? "
                "AND state = 'TODO'",
                (t + ttl, key, driver),
            )
            return cur.rowcount == 1

    def release(self, key: str, driver: str) -> None:
        """Give back ``driver``'s lease on ``key``, if it holds one."""
        with self.write() as conn:
            conn.execute(
                "UPDATE items SET lease_owner = NULL, lease_expires = NULL "
                "WHERE key = ? AND lease_owner = ?",
                (key, driver),
            )

    def release_all(self, driver: str) -> int:
        """Give back every lease ``driver`` holds; returns how many."""
        with self.write() as conn:
            return conn.execute(
                "UPDATE items SET lease_owner = NULL, lease_expires = NULL WHERE lease_owner = ?",
                (driver,),
            ).rowcount

    # -- recording a turn ------------------------------------------------------------------

    def record(
        self,
        key: str,
        decide: Callable[[Item], tuple[Transition, Attempt]],
        *,
        driver: str,
        owner: str | None = None,
        expected_turns: int | None = None,
        now: float | None = None,
    ) -> tuple[Item, Attempt]:
        """Record one turn of ``key`` in one transaction: attempt, item state, export mark.

        ``decide`` sees the item as it stands inside the transaction and returns the
        transition and the attempt to append (its ``turn``, ``state_after`` and
        ``tries_after`` are filled in here). ``owner`` is the lease holder when it differs
        from the driver name recorded on the attempt (the loop leases per slot).

        Raises:
            NotTodo: the item is terminal (the ratchet).
            LeaseConflict: another driver holds a live lease, or the item gained turns since
                ``expected_turns`` was read.
        """
        t = time.time() if now is None else now
        with self.write() as conn:
            row = conn.execute(
                f"SELECT {_ITEM_COLUMNS}, id FROM items WHERE key = ?", (key,)
            ).fetchone()
            if row is None:
                raise NotFound(f"no item with key {key!r} in {self.path}")
            item, item_id = _item(row), row[-1]
            if item.state.terminal:
                raise NotTodo(
                    f"item {key!r} is {item.state}, not TODO: terminal items are locked for good"
                )
            holder = owner or driver
            if item.lease_owner not in (None, holder) and (item.lease_expires or 0) > t:
                raise LeaseConflict(
                    f"item {key!r} is leased to {item.lease_owner!r} for another "
                    f"{(item.lease_expires or 0) - t:.0f}s; take another item with `reins next`"
                )
            if expected_turns is not None and item.turns != expected_turns:
                raise LeaseConflict(
                    f"item {key!r} gained a turn since it was read (turn {item.turns}, "
                    f"expected {expected_turns}); nothing was recorded"
                )
            transition, attempt = decide(item)
            check_transition(item, transition)
            tries = item.tries + transition.tries_delta
            stamp = now_iso()
            attempt = Attempt(
                **{
                    **_asdict(attempt),
                    "key": key,
                    "turn": item.turns + 1,
                    "driver": driver,
                    "state_after": transition.state,
                    "tries_after": tries,
                    "recorded_at": stamp,
                }
            )
            _insert_attempt(conn, item_id, attempt)
            locked = transition.state.terminal
            keep_lease = not locked and holder == item.lease_owner
            conn.execute(
                "UPDATE items SET state = ?, tries = ?, turns = turns + 1, updated_at = ?, "
                "locked_at = ?, lease_owner = ?, lease_expires = ? WHERE id = ?",
                (
                    transition.state.value,
                    tries,
                    stamp,
                    stamp if locked else None,
                    item.lease_owner if keep_lease else None,
                    item.lease_expires if keep_lease else None,
                    item_id,
                ),
            )
            _count_usage(conn, attempt)
            if attempt.kind is AttemptKind.JUDGED:
                conn.execute("UPDATE drivers SET nexts = 0 WHERE name = ?", (driver,))
            new_item = Item(
                **{
                    **_asdict(item),
                    "state": transition.state,
                    "tries": tries,
                    "turns": item.turns + 1,
                    "updated_at": stamp,
                    "locked_at": stamp if locked else None,
                    "lease_owner": item.lease_owner if keep_lease else None,
                    "lease_expires": item.lease_expires if keep_lease else None,
                }
            )
        return new_item, attempt

    # -- status ----------------------------------------------------------------------------

    def stats(self, *, now: float | None = None) -> Stats:
        """Counts per state, tries histogram, rule counts, usage: all from kept counters."""
        t = time.time() if now is None else now
        with self.read() as conn:
            counts = {State(s): n for s, n in conn.execute("SELECT state, n FROM state_counts")}
            tries = dict(conn.execute("SELECT tries, n FROM tries_counts WHERE n > 0"))
            rules = {
                r: (f, root)
                for r, f, root in conn.execute(
                    "SELECT rule, fired, root FROM rule_counts ORDER BY fired DESC, rule"
                )
            }
            usage = conn.execute(
                "SELECT attempts, input_tokens, output_tokens, cost FROM usage_totals"
            ).fetchone()
            leased = conn.execute(
                "SELECT count(*) FROM items WHERE lease_owner IS NOT NULL AND lease_expires > ?",
                (t,),
            ).fetchone()[0]
        return Stats(
            counts={s: counts.get(s, 0) for s in State},
            tries=tries,
            rules=rules,
            attempts=usage[0],
            input_tokens=usage[1],
            output_tokens=usage[2],
            cost=usage[3],
            leased=leased,
        )

    def meta(self, key: str) -> str | None:
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        with self.write() as conn:
            conn.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    # -- export bookkeeping (the file side lives in reins.ledger.export) -------------------

    def open_batches(self, path: str) -> list[tuple[int, int]]:
        """Unfinished export batches to ``path``: ``(batch id, file offset)``."""
        return list(
            self._conn.execute(
                "SELECT id, offset FROM export_batches WHERE path = ? AND done = 0 ORDER BY id",
                (path,),
            )
        )

    def open_batch_paths(self) -> list[str]:
        return [
            r[0]
            for r in self._conn.execute(
                "SELECT DISTINCT path FROM export_batches WHERE done = 0 ORDER BY path"
            )
        ]

    def claim_batch(self, path: str, offset: int, limit: int) -> tuple[int, list[Item]] | None:
        """Claim up to ``limit`` terminal, unexported items for a batch written at ``offset``."""
        with self.write() as conn:
            ids = [
                r[0]
                for r in conn.execute(
                    "SELECT id FROM items WHERE state != 'TODO' AND export_batch IS NULL "
                    "ORDER BY id LIMIT ?",
                    (limit,),
                )
            ]
            if not ids:
                return None
            batch = conn.execute(
                "INSERT INTO export_batches (path, offset, created_at) VALUES (?, ?, ?) "
                "RETURNING id",
                (path, offset, now_iso()),
            ).fetchone()[0]
            conn.executemany(
                "UPDATE items SET export_batch = ? WHERE id = ?", [(batch, i) for i in ids]
            )
        return batch, self.batch_items(batch)

    def batch_items(self, batch: int) -> list[Item]:
        return [
            _item(r)
            for r in self._conn.execute(
                f"SELECT {_ITEM_COLUMNS} FROM items WHERE export_batch = ? ORDER BY id", (batch,)
            )
        ]

    def locking_attempt(self, key: str) -> Attempt | None:
        """The attempt that locked a terminal item (its last one)."""
        row = self._conn.execute(
            f"SELECT {_ATTEMPT_COLUMNS} FROM attempts WHERE item_id = "
            "(SELECT id FROM items WHERE key = ?) ORDER BY turn DESC LIMIT 1",
            (key,),
        ).fetchone()
        return None if row is None else _attempt(key, row)

    def finish_batch(self, batch: int) -> None:
        with self.write() as conn:
            conn.execute("UPDATE export_batches SET done = 1 WHERE id = ?", (batch,))

    def exported_count(self) -> int:
        return int(
            self._conn.execute(
                "SELECT count(*) FROM items i JOIN export_batches b ON b.id = i.export_batch "
                "WHERE b.done = 1"
            ).fetchone()[0]
        )


# -- helpers -------------------------------------------------------------------------------


def check_transition(item: Item, transition: Transition) -> None:
    """The ratchet: a machine may move a TODO item anywhere, a terminal item nowhere.

    Raises:
        IllegalTransition: the item is terminal, or tries would go down.
    """
    if item.state.terminal:
        raise IllegalTransition(
            f"item {item.key!r} is {item.state}: a terminal item never changes "
            f"(refused {item.state} -> {transition.state})"
        )
    if transition.tries_delta < 0:
        raise IllegalTransition(f"item {item.key!r}: tries never go down")


def _asdict(obj: Any) -> dict[str, Any]:
    return {name: getattr(obj, name) for name in obj.__slots__}


def _run_script(conn: sqlite3.Connection, version: int) -> None:
    # executescript would COMMIT the surrounding transaction; run statement by statement.
    script = MIGRATIONS[version]
    buffer = ""
    for line in script.splitlines(keepends=True):
        if line.lstrip().startswith("--"):
            continue
        buffer += line
        if sqlite3.complete_statement(buffer):
            conn.execute(buffer)
            buffer = ""
    if buffer.strip():
        raise LedgerError(f"migration {version} ends with an incomplete statement")


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, timeout=60.0, check_same_thread=False)
    conn.execute("PRAGMA journal_mode = WAL")
    # NORMAL in WAL mode survives a killed process (every commit is in the WAL);
    # only a power cut can lose the last commits, never consistency.
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn


def _insert_attempt(conn: sqlite3.Connection, item_id: int, a: Attempt) -> None:
    conn.execute(
        "INSERT INTO attempts (item_id, turn, kind, driver, state_after, tries_after, outcome, "
        "root_cause, facts, feedback, submission, error, policy, backend, prompt_digest, "
        "input_tokens, output_tokens, cost, latency, started_at, recorded_at, extra) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            item_id,
            a.turn,
            a.kind.value,
            a.driver,
            a.state_after.value,
            a.tries_after,
            a.outcome,
            a.root_cause,
            dump_json(list(a.facts)) if a.facts else None,
            a.feedback,
            a.submission,
            a.error,
            a.policy,
            a.backend,
            a.prompt_digest,
            a.input_tokens,
            a.output_tokens,
            a.cost,
            a.latency,
            a.started_at,
            a.recorded_at,
            dump_json(a.extra) if a.extra else None,
        ),
    )
    rules: dict[str, int] = {}
    for fact in a.facts:
        rule = fact.get("rule", "")
        if rule:
            rules[rule] = rules.get(rule, 0) + 1
    for rule, n in rules.items():
        root = 1 if rule == a.root_cause else 0
        conn.execute(
            "INSERT INTO rule_counts (rule, fired, root) VALUES (?, ?, ?) "
            "ON CONFLICT (rule) DO UPDATE SET fired = fired + excluded.fired, "
            "root = root + excluded.root",
            (rule, n, root),
        )


def _count_usage(conn: sqlite3.Connection, a: Attempt) -> None:
    conn.execute(
        "UPDATE usage_totals SET attempts = attempts + 1, input_tokens = input_tokens + ?, "
        "output_tokens = output_tokens + ?, cost = cost + ?",
        (a.input_tokens or 0, a.output_tokens or 0, a.cost or 0.0),
    )


def _ledger_error(path: Path, exc: sqlite3.DatabaseError) -> LedgerError:
    if isinstance(exc, sqlite3.IntegrityError) and "ratchet" in str(exc):
        return IllegalTransition(f"ledger {path}: {exc}")
    if isinstance(exc, sqlite3.OperationalError):
        return LedgerError(f"ledger {path}: {exc}")
    return CorruptLedger(f"ledger {path} is damaged: {exc}")
