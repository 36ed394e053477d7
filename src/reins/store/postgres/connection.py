"""Connections to a PostgreSQL ledger: a small pool, one short transaction per call.

Every store call runs one function with a :class:`Session` on a pooled connection, in as few
round trips as it can: most calls are one statement (a transaction of its own), a turn and a
lease too (a server-side function, a statement with CTEs), reads of several statements are one
``REPEATABLE READ READ ONLY`` batch. A connection lost before a commit was sent is replaced and
the call made again, whatever the call: nothing can have landed. One lost while committing is
made again only when the call is idempotent (reads, leases, heartbeats, and ``record``, whose
nonce finds its own committed turn); otherwise the error names the server and says the call was
wholly done or not at all.
"""

from __future__ import annotations

import contextlib
import select
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import psycopg
from psycopg import ClientCursor, Connection, Cursor, errors
from psycopg.pq import TransactionStatus
from psycopg_pool import ConnectionPool, PoolTimeout

from reins.errors import CorruptLedger, IllegalTransition, LedgerError
from reins.store.postgres import adapt
from reins.store.postgres.target import Target

T = TypeVar("T")
CONNECT_TIMEOUT = 10
POOL_SIZE = 4
DEADLOCK_TRIES = 3
# Reads of several statements: one snapshot.
SNAPSHOT = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"


def connect(target: Target) -> Connection[Any]:
    """One connection outside the pool (opening, creating, migrating)."""
    try:
        conn = psycopg.connect(target.conninfo, autocommit=True, connect_timeout=CONNECT_TIMEOUT)
    except psycopg.Error as exc:
        raise LedgerError(
            f"cannot connect to PostgreSQL at {target.server}: {target.scrub(_first_line(exc))}"
            + refused_hint(target, str(exc))
        ) from exc
    adapt.install(conn)
    return conn


# What libpq says when nothing listens where it was sent: a TCP port, or a socket file.
_NOT_LISTENING = ("Connection refused", "No such file or directory", "failed to resolve host")


def refused_hint(target: Target, text: str) -> str:
    """What to do when no PostgreSQL server answered at the ledger's host and port."""
    if not any(sign in text for sign in _NOT_LISTENING):
        return ""
    return (
        f". Is a PostgreSQL server running, and listening on host {target.host} port "
        f"{target.port}? Start it (pg_ctl start, or the system's service), or fix the host "
        "and port in the ledger's URL (--ledger, REINS_LEDGER or reins.toml)"
    )


class Database:
    """The pool of one ledger, and the transactions every store module runs through it."""

    # Calls from different threads each take a connection of the pool (see Ledger).
    calls_at_once = POOL_SIZE

    def __init__(self, target: Target) -> None:
        self.target = target
        self.pool: ConnectionPool[Connection[Any]] = ConnectionPool(
            target.conninfo,
            kwargs={"autocommit": True, "connect_timeout": CONNECT_TIMEOUT},
            min_size=1,
            max_size=POOL_SIZE,
            open=False,
            configure=adapt.install,
            timeout=CONNECT_TIMEOUT,
            num_workers=1,
            name=f"reins {target.schema}",
        )
        try:
            self.pool.open(wait=True, timeout=CONNECT_TIMEOUT)
        except PoolTimeout as exc:
            self.pool.close()
            raise LedgerError(
                f"cannot connect to PostgreSQL at {target.server} within {CONNECT_TIMEOUT}s"
            ) from exc

    @property
    def location(self) -> str:
        return self.target.location

    def read(self, fn: Callable[[Session], T], *, what: str = "reading the ledger") -> T:
        """``fn``, which only reads; made again on a fresh connection if the connection is lost."""
        return self._run(fn, what, True, "nothing was changed")

    def write(
        self,
        fn: Callable[[Session], T],
        *,
        what: str,
        idempotent: bool = True,
        outcome: str = "it was either wholly done or not at all",
    ) -> T:
        """``fn``, which writes in one transaction.

        ``idempotent``: a call whose commit was cut off by a lost connection may be made again
        on a fresh one. ``what`` and ``outcome`` word the error when it may not, or when the
        second try fails too.
        """
        return self._run(fn, what, idempotent, outcome)

    def _run(self, fn: Callable[[Session], T], what: str, idempotent: bool, outcome: str) -> T:
        tries = stale = 0
        while True:
            tries += 1
            session: Session | None = None
            try:
                with self.pool.connection() as conn:
                    # A call that may be made again finds a dead connection by using it (and
                    # is retried): the check costs a system call per call.
                    if not idempotent and _dead(conn) and stale < POOL_SIZE:
                        stale += 1
                        tries -= 1
                        conn.close()  # the pool drops it on return
                        continue
                    session = Session(conn)
                    try:
                        result = fn(session)
                        if session.in_transaction:
                            session.batch(commit=True)
                        return result
                    except BaseException:
                        if (
                            not conn.closed
                            and conn.info.transaction_status != TransactionStatus.IDLE
                        ):
                            with contextlib.suppress(psycopg.Error):  # the pool drops it
                                conn.execute("ROLLBACK")
                        raise
            except PoolTimeout as exc:
                raise LedgerError(
                    f"no connection to PostgreSQL at {self.target.server} within "
                    f"{CONNECT_TIMEOUT}s while {what}; {outcome}"
                ) from exc
            except psycopg.Error as exc:
                lost = isinstance(exc, psycopg.OperationalError) and _is_lost(exc)
                # Nothing can have been committed unless a commit was sent: any call may be
                # made again then. After that, only a call that finds its own commit may.
                committing = session is not None and session.committing
                retry = (not committing and tries <= POOL_SIZE) or (idempotent and tries == 1)
                if lost and retry:
                    # The pool discarded the dead connection; others idle beside it may have
                    # died with it (a server restart): check them all before the next try.
                    self.pool.check()
                    continue
                if isinstance(exc, errors.DeadlockDetected) and tries < DEADLOCK_TRIES:
                    continue  # the server rolled this transaction back: nothing was done
                if lost:
                    again = " (and again on a fresh connection)" if tries > 1 else ""
                    raise LedgerError(
                        f"lost the connection to PostgreSQL at {self.target.server} while "
                        f"{what}{again}: {self.target.scrub(_first_line(exc))}. {outcome}"
                    ) from exc
                raise self.error(exc, what) from exc

    def error(self, exc: psycopg.Error, what: str) -> LedgerError:
        """The reins error for a server's refusal."""
        text = self.target.scrub(_first_line(exc))
        where = f"ledger {self.target.location}"
        if isinstance(exc, errors.IntegrityConstraintViolation) and "reins ratchet" in text:
            return IllegalTransition(f"{where}: {text}")
        if isinstance(exc, errors.LockNotAvailable):
            return LedgerError(
                f"{where}: gave up waiting for a row lock while {what} (another process held "
                f"it past lock_timeout); nothing was changed: {text}"
            )
        if isinstance(exc, errors.QueryCanceled):
            return LedgerError(f"{where}: {what} took longer than statement_timeout: {text}")
        if isinstance(exc, errors.UndefinedTable | errors.UndefinedColumn):
            return CorruptLedger(f"{where} is damaged (a table or column is missing): {text}")
        return LedgerError(f"{where}: {what} failed: {text}")

    def close(self) -> None:
        self.pool.close()


class Session:
    """One try of one store call on one pooled connection (in autocommit mode).

    Every method is one round trip: a lone statement (:meth:`rows`, :meth:`count`) runs with
    server-side parameters, prepared after a few uses, in a transaction of its own unless one is
    open; :meth:`batch` sends several statements at once (client-side parameters), opening a
    transaction with ``begin`` and ending it with ``commit``. A round trip costs more than the
    statements: each one hands the GIL back and forth with the event loop of a busy loop.
    """

    def __init__(self, conn: Connection[Any]) -> None:
        self.conn = conn
        # One cursor per connection, kept while the connection lives: making one per call
        # copies the connection's adapters every time.
        cur = _CURSORS.get(conn)
        if cur is None or cur.closed:
            cur = _CURSORS[conn] = conn.cursor()
        self.cur = cur
        self._client: ClientCursor[Any] | None = None
        self.in_transaction = False
        # A commit may have been sent (an explicit COMMIT, or a write outside a transaction):
        # if the connection is lost now, whether it landed is unknown.
        self.committing = False

    def rows(
        self,
        query: str,
        params: Sequence[Any] | Mapping[str, Any] = (),
        *,
        prepare: bool | None = None,
    ) -> list[Any]:
        """The rows of one statement; ``prepare=False``: never a prepared statement (preparing
        one costs a round trip of its own, once per connection)."""
        self.committing = self.committing or not self.in_transaction
        return self.cur.execute(query, params, prepare=prepare).fetchall()

    def count(self, query: str, params: Sequence[Any] = ()) -> int:
        """How many rows one statement changed."""
        self.committing = self.committing or not self.in_transaction
        return self.cur.execute(query, params).rowcount

    def batch(
        self,
        *statements: str | tuple[str, Sequence[Any] | Mapping[str, Any]],
        begin: str | None = None,
        commit: bool = False,
    ) -> list[list[Any]]:
        """Run ``statements`` in one round trip; the rows of each (empty for a command)."""
        if self._client is None:
            self._client = ClientCursor(self.conn)
        parts = [begin] if begin else []
        for statement in statements:
            if isinstance(statement, str):
                parts.append(statement)
            else:
                parts.append(self._client.mogrify(statement[0], statement[1]))
        if commit:
            parts.append("COMMIT")
        if begin:
            self.in_transaction = True
        if commit or not self.in_transaction:
            self.committing = True
        self.cur.execute(";\n".join(parts))
        if commit:
            self.in_transaction = False
        results: list[list[Any]] = []
        while True:
            results.append(self.cur.fetchall() if self.cur.description is not None else [])
            if not self.cur.nextset():
                break
        return results[(1 if begin else 0) : len(results) - (1 if commit else 0)]


_CURSORS: weakref.WeakKeyDictionary[Connection[Any], Cursor[Any]] = weakref.WeakKeyDictionary()


def _dead(conn: Connection[Any]) -> bool:
    """Whether an idle connection was ended by the server while it sat in the pool.

    An idle connection receives nothing; a readable socket holds the server's goodbye (an
    ended backend, a restart) or its end. Telling before sending keeps a call that cannot be
    made twice (adding items, claiming an export claim) from failing on a connection that was
    dead before it was used.
    """
    if conn.closed:
        return True
    try:
        readable, _, _ = select.select([conn.fileno()], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


def _is_lost(exc: psycopg.OperationalError) -> bool:
    """Whether ``exc`` means the connection is gone (not a refusal on a live one)."""
    if isinstance(exc, errors.AdminShutdown | errors.IdleInTransactionSessionTimeout):
        return True
    if isinstance(exc, errors.QueryCanceled | errors.LockNotAvailable):
        return False
    return exc.sqlstate is None or exc.sqlstate.startswith(("08", "57P"))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
