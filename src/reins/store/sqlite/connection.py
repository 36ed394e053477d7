"""Opening an SQLite ledger: refuse what is not ours before writing a byte, create, migrate.

A file is read as bytes first: the SQLite magic, reins' application id and the schema version
all sit in the 100-byte header, so a foreign, damaged or newer file is refused without a
connection ever being opened (a connection would switch it to WAL). New ledgers are built
under a temporary name with mode 0600 and renamed in place, so a crash leaves none half-made.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from reins.errors import CorruptLedger, IllegalTransition, LedgerError, NotFound
from reins.store.codec import now_iso
from reins.store.sqlite.schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION

SQLITE_MAGIC = b"SQLite format 3\x00"
# The ledger holds what the inputs held (personal data, say): readable by its owner only.
MODE = 0o600


class Database:
    """One connection to one ledger file, with its read and write transactions."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self.conn = conn

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


def open_database(path: Path, *, create: bool) -> tuple[Database, int]:
    """Open (with ``create``, make) the ledger at ``path``; returns it and its schema version.

    Raises:
        NotFound: no file and ``create`` is false.
        CorruptLedger: not a reins ledger, damaged, or newer than this reins.
    """
    if not path.exists():
        if not create:
            raise NotFound(f"no ledger at {path}. Run `reins scan` to create it.")
        _create(path)
    version = _check_header(path)
    conn = None
    try:
        conn = _connect(path)
        version = conn.execute("PRAGMA user_version").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        # Closed now, not when the traceback is collected: an open connection keeps the
        # -wal and -shm files it made beside a ledger we promise to leave untouched.
        if conn is not None:
            conn.close()
        raise CorruptLedger(f"ledger {path} is damaged: {exc}. It was left untouched.") from exc
    if version > SCHEMA_VERSION:  # bumped in a WAL not yet checkpointed into the header
        conn.close()
        raise CorruptLedger(_too_new(path, version))
    db = Database(path, conn)
    if version < SCHEMA_VERSION:
        try:
            _migrate(db)
        except BaseException:
            db.close()
            raise
    return db, SCHEMA_VERSION


def _check_header(path: Path) -> int:
    """The schema version of a reins ledger, read from its header; refuse anything else."""
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
    return version


def _too_new(path: Path, version: int) -> str:
    return (
        f"ledger {path} has schema version {version}, but this reins understands up to "
        f"{SCHEMA_VERSION}. Upgrade reins-quest; the ledger was left untouched."
    )


def _create(path: Path) -> None:
    """Build a new ledger beside ``path`` and rename it in place, so a crash leaves none."""
    if not path.parent.exists():
        raise LedgerError(f"cannot create ledger {path}: folder {path.parent} does not exist")
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


def _migrate(db: Database) -> None:
    with db.write() as conn:
        current = conn.execute("PRAGMA user_version").fetchone()[0]
        for target in range(current + 1, SCHEMA_VERSION + 1):
            run_script(conn, target)
            conn.execute(f"PRAGMA user_version = {target}")


def run_script(conn: sqlite3.Connection, version: int) -> None:
    """Run migration ``version`` inside the caller's transaction, statement by statement."""
    # executescript would COMMIT the surrounding transaction.
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


BUSY_TIMEOUT = 60.0


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(
        path, isolation_level=None, timeout=BUSY_TIMEOUT, check_same_thread=False
    )
    try:
        _use_wal(conn)
        # NORMAL in WAL mode survives a killed process (every commit is in the WAL);
        # only a power cut can lose the last commits, never consistency.
        conn.execute("PRAGMA synchronous = NORMAL")
    except BaseException:
        conn.close()
        raise
    return conn


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


def _ledger_error(path: Path, exc: sqlite3.DatabaseError) -> LedgerError:
    if isinstance(exc, sqlite3.IntegrityError) and "ratchet" in str(exc):
        return IllegalTransition(f"ledger {path}: {exc}")
    if isinstance(exc, sqlite3.OperationalError):
        return LedgerError(f"ledger {path}: {exc}")
    return CorruptLedger(f"ledger {path} is damaged: {exc}")
