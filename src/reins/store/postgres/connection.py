"""Connections to a PostgreSQL ledger: a small pool, one short transaction per call.

Every store call runs one function inside one transaction on a pooled connection
(:meth:`Database.read`: ``REPEATABLE READ READ ONLY``, one snapshot; :meth:`Database.write`:
``READ COMMITTED``, rows locked with ``FOR UPDATE`` where a decision is made). A connection
that turns out dead before anything was sent is replaced and the call made again, whatever the
call. One lost mid-call is retried on a fresh connection only when the call is idempotent
(reads, leases, heartbeats, and ``record``, whose nonce finds its own committed turn);
otherwise the error names the server and says the call was wholly done or not at all.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any, TypeVar

import psycopg
from psycopg import Connection, Cursor, errors
from psycopg.pq import TransactionStatus
from psycopg_pool import ConnectionPool, PoolTimeout

from reins.errors import CorruptLedger, IllegalTransition, LedgerError
from reins.store.postgres import adapt
from reins.store.postgres.target import Target

T = TypeVar("T")
CONNECT_TIMEOUT = 10
POOL_SIZE = 4
DEADLOCK_TRIES = 3


def connect(target: Target) -> Connection[Any]:
    """One connection outside the pool (opening, creating, migrating)."""
    try:
        conn = psycopg.connect(target.conninfo, autocommit=True, connect_timeout=CONNECT_TIMEOUT)
    except psycopg.Error as exc:
        raise LedgerError(
            f"cannot connect to PostgreSQL at {target.server}: {target.scrub(_first_line(exc))}"
        ) from exc
    adapt.install(conn)
    return conn


class Database:
    """The pool of one ledger, and the transactions every store module runs through it."""

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

    def read(self, fn: Callable[[Cursor[Any]], T], *, what: str = "reading the ledger") -> T:
        """``fn`` in one read-only snapshot; retried once if the connection is lost."""
        return self._run(fn, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", what, True)

    def write(
        self,
        fn: Callable[[Cursor[Any]], T],
        *,
        what: str,
        idempotent: bool = True,
        outcome: str = "it was either wholly done or not at all",
    ) -> T:
        """``fn`` in one write transaction.

        ``idempotent``: a call cut off by a lost connection may be made again on a fresh one.
        ``what`` and ``outcome`` word the error when it may not, or the retry fails too.
        """
        return self._run(fn, "BEGIN", what, idempotent, outcome)

    def _run(
        self,
        fn: Callable[[Cursor[Any]], T],
        begin: str,
        what: str,
        idempotent: bool,
        outcome: str = "it was either wholly done or not at all",
    ) -> T:
        tries = 0
        while True:
            tries += 1
            sent = False
            try:
                with self.pool.connection() as conn:
                    try:
                        conn.execute(begin)
                        sent = True
                        with conn.cursor() as cur:
                            result = fn(cur)
                        conn.execute("COMMIT")
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
                retry = (not sent and tries <= POOL_SIZE) or (idempotent and tries == 1)
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
