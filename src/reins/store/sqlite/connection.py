"""Opening an SQLite ledger: refuse what is not ours before writing a byte, create, migrate.

A file is read as bytes first: the SQLite magic, reins' application id and the schema version
all sit in the 100-byte header, so a foreign or newer file is refused without a connection ever
being opened. Then a connection reads, and writes nothing yet: the quest the ledger belongs to
(:mod:`reins.store.owner`) and, when the open is about to write, whether its tables are those
of the version it claims (:mod:`reins.store.sqlite.shape`). Only a ledger that passes is
migrated (in its own journal mode, so a failed migration rolls back to the very bytes it had),
then switched to WAL. New ledgers are built under a temporary name with mode 0600 and renamed
in place, so a crash leaves none half-made.
"""

from __future__ import annotations

import os
import shlex
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, NamedTuple

from reins.errors import ConfigError, CorruptLedger, IllegalTransition, LedgerError, NotFound
from reins.store import owner as owners
from reins.store.codec import now_iso
from reins.store.owner import Owner, refuse_other
from reins.store.sqlite import shape
from reins.store.sqlite.schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION, run_script

SQLITE_MAGIC = b"SQLite format 3\x00"
# The ledger holds what the inputs held (personal data, say): readable by its owner only.
MODE = 0o600
BUSY_TIMEOUT = 60.0


class Database:
    """One connection to one ledger file, with its read and write transactions."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self.conn = conn

    @property
    def location(self) -> str:
        return str(self.path)

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, holding SQLite's write lock from its first statement."""
        conn = self.conn
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.DatabaseError as exc:
            raise _ledger_error(self.path, exc) from exc
        try:
            yield conn
        except sqlite3.DatabaseError as exc:
            _rollback(conn)
            raise _ledger_error(self.path, exc) from exc
        except BaseException:
            _rollback(conn)
            raise
        try:
            conn.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            _rollback(conn)
            raise _ledger_error(self.path, exc) from exc

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """One read transaction: a consistent snapshot across several queries."""
        conn = self.conn
        try:
            conn.execute("BEGIN")
            try:
                yield conn
            finally:
                conn.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            raise _ledger_error(self.path, exc) from exc

    def one(self, sql: str, args: tuple[object, ...] = ()) -> Any:
        """The first row of one read-only statement, in its own implicit transaction."""
        try:
            return self.conn.execute(sql, args).fetchone()
        except sqlite3.DatabaseError as exc:
            raise _ledger_error(self.path, exc) from exc

    def close(self) -> None:
        self.conn.close()


class Opened(NamedTuple):
    """An opened ledger: its connection, schema version and owner, and whether this open
    recorded that owner in a ledger that had none (to be said once)."""

    db: Database
    version: int
    owner: Owner | None
    adopted: bool


def open_database(path: Path, *, create: bool, owner: Owner | None = None) -> Opened:
    """Open (with ``create``, make) the ledger at ``path`` for ``owner``.

    Nothing is written until the file is known to be a reins ledger of a version this reins
    opens, whose tables are those its version claims, and which belongs to ``owner`` (or to
    no one yet). Only then is it migrated, switched to WAL, and given ``owner`` if it had none.

    Raises:
        NotFound: no file and ``create`` is false.
        CorruptLedger: not a reins ledger, damaged, newer than this reins, or its tables are
            not those of the version it claims.
        WrongQuest: it belongs to another owner.
        LedgerError: a migration failed (it was rolled back: the file is as it was).
    """
    if not path.exists():
        if not create:
            raise NotFound(f"no ledger at {path}. {_to_make(path)}")
        _create(path, owner)
    in_wal = _check_header(path)
    conn = None
    try:
        # No WAL switch yet: a connection that only reads leaves a rollback-journal file as it
        # was, and the -wal and -shm files of a WAL one go when it closes.
        conn = sqlite3.connect(
            path, isolation_level=None, timeout=BUSY_TIMEOUT, check_same_thread=False
        )
        db = Database(path, conn)
        recorded, adopted = _prepare(db, owner, in_wal)
        _use_wal(conn)
        # NORMAL in WAL mode survives a killed process (every commit is in the WAL);
        # only a power cut can lose the last commits, never consistency.
        conn.execute("PRAGMA synchronous = NORMAL")
    except BaseException as exc:
        # Closed now, not when the traceback is collected: an open connection keeps the
        # -wal and -shm files it made beside a ledger we promise to leave untouched.
        if conn is not None:
            conn.close()
        if isinstance(exc, sqlite3.DatabaseError):
            raise CorruptLedger(f"ledger {path} is damaged: {exc}. It was left untouched.") from exc
        raise
    return Opened(db, SCHEMA_VERSION, recorded, adopted)


def _prepare(db: Database, owner: Owner | None, in_wal: bool) -> tuple[Owner | None, bool]:
    """Check the ledger, then migrate it and record ``owner`` where needed, in one write;
    returns the ledger's owner and whether this open recorded it."""
    with db.read() as conn:
        version, recorded = _version_and_owner(conn)
        if version > SCHEMA_VERSION:  # bumped in a WAL not yet checkpointed into the header
            raise CorruptLedger(_too_new(db.path, version))
        refuse_other(str(db.path), recorded, owner)
        adopt = owner is not None and recorded is None
        if version < SCHEMA_VERSION or adopt or not in_wal:  # this open is about to write
            _check_shape(db.path, version, shape.read(conn))
    if version == SCHEMA_VERSION and not adopt:
        return recorded, False
    with db.write() as conn:  # again under the write lock: another process may have been first
        current, recorded = _version_and_owner(conn)
        refuse_other(str(db.path), recorded, owner)
        try:
            for target in range(current + 1, SCHEMA_VERSION + 1):
                run_script(conn, target)
                conn.execute(f"PRAGMA user_version = {target}")
        except sqlite3.Error as exc:  # raised on, the write rolls back to the bytes it had
            raise LedgerError(
                f"ledger {db.path}: migrating it from schema version {current} to "
                f"{SCHEMA_VERSION} failed ({exc}); it was rolled back and the ledger left "
                "untouched. Fix the cause (a read-only file or folder, a full disk, a table or "
                "trigger of your own) and run the command again, or keep using the reins that "
                "made it."
            ) from exc
        adopted = owner is not None and recorded is None
        if owner is not None and recorded is None:
            _record_owner(conn, owner)
            recorded = owner
    return recorded, adopted


def _version_and_owner(conn: sqlite3.Connection) -> tuple[int, Owner | None]:
    version: int = conn.execute("PRAGMA user_version").fetchone()[0]
    has_meta = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
    ).fetchone()
    if has_meta is None:  # schema version 0: a marked file, no tables yet
        return version, None
    rows = conn.execute(
        "SELECT key, value FROM meta WHERE key IN (?, ?)", (owners.NAME_KEY, owners.ORIGIN_KEY)
    ).fetchall()
    return version, owners.read(dict(rows))


def _record_owner(conn: sqlite3.Connection, owner: Owner) -> None:
    conn.executemany(
        "INSERT INTO meta (key, value) VALUES (?, ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [(owners.NAME_KEY, owner.name), (owners.ORIGIN_KEY, owner.origin)],
    )


def _check_shape(path: Path, version: int, found: shape.Shape) -> None:
    """Refuse a file whose tables are not those of the schema ``version`` it claims."""
    problems = shape.problems(version, found)
    if not problems:
        return
    head = f"ledger {path} says schema version {version}, but {'; '.join(problems)}"
    actual = shape.matching_version(found)
    if actual is not None:
        raise CorruptLedger(
            f"{head}: its tables are those of version {actual}. It was left untouched. If only "
            f"its version number is wrong, set it: sqlite3 {shlex.quote(str(path))} "
            f"'PRAGMA user_version = {actual}'; otherwise restore it from a backup."
        )
    raise CorruptLedger(
        f"{head}. It was left untouched; restore it from a backup, or move it away and run "
        "`reins scan` for a new one."
    )


def _check_header(path: Path) -> bool:
    """Refuse anything but a reins ledger of a version we open, from its header; returns
    whether the file is in WAL mode."""
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
    # Offset 60 is PRAGMA user_version: a newer ledger is refused before anything opens it.
    version = int.from_bytes(header[60:64], "big")
    if version > SCHEMA_VERSION:
        raise CorruptLedger(_too_new(path, version))
    return header[18:20] == b"\x02\x02"  # the file format's read and write versions: 2 is WAL


def _too_new(path: Path, version: int) -> str:
    return (
        f"ledger {path} has schema version {version}, but this reins understands up to "
        f"{SCHEMA_VERSION}. Upgrade reins-quest; the ledger was left untouched."
    )


def _to_make(path: Path) -> str:
    """What makes a ledger at ``path``: ``reins scan``, once its folder exists."""
    if path.parent.is_dir():
        return "Run `reins scan` to create it."
    return f"Its folder {path.parent} does not exist: {_folder_first(path)}, then `reins scan`."


def _folder_first(path: Path) -> str:
    return (
        f"create it first (mkdir -p {shlex.quote(str(path.parent))}), or point --ledger at a "
        "file in a folder that exists"
    )


def _create(path: Path, owner: Owner | None) -> None:
    """Build a new ledger beside ``path`` and rename it in place, so a crash leaves none."""
    if not path.parent.is_dir():
        raise ConfigError(
            f"cannot create ledger {path}: its folder {path.parent} does not exist: "
            f"{_folder_first(path)}"
        )
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        # Made with its mode before SQLite opens it; SQLite gives -wal and -shm the same mode.
        os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, MODE))
        conn = sqlite3.connect(tmp, isolation_level=None)
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute("BEGIN")
        for version in sorted(MIGRATIONS):
            run_script(conn, version)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("INSERT INTO meta (key, value) VALUES ('created_at', ?)", (now_iso(),))
        if owner is not None:
            _record_owner(conn, owner)
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


def _use_wal(conn: sqlite3.Connection) -> None:
    """Switch the ledger to WAL mode (a no-op once it is).

    Two connections switching one ledger in rollback-journal mode at once (two processes
    opening an older ledger) both hold a shared lock and want an exclusive one: SQLite refuses
    one of them at once, without its busy timeout, lest they deadlock. That one tries again
    once the other is done, when the ledger is in WAL mode already.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def _rollback(conn: sqlite3.Connection) -> None:
    """End a failed write transaction: SQLite has ended it already after some errors (a full
    disk, an I/O error), and a ROLLBACK then fails and hides the cause."""
    if conn.in_transaction:
        with suppress(sqlite3.Error):
            conn.execute("ROLLBACK")


def _ledger_error(path: Path, exc: sqlite3.DatabaseError) -> LedgerError:
    if isinstance(exc, sqlite3.IntegrityError) and "ratchet" in str(exc):
        return IllegalTransition(f"ledger {path}: {exc}")
    if isinstance(exc, sqlite3.OperationalError):
        return LedgerError(f"ledger {path}: {exc}")
    return CorruptLedger(f"ledger {path} is damaged: {exc}")
