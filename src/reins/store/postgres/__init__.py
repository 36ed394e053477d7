"""The PostgreSQL engine: many hosts share one ledger on one server, one schema per quest run.

Open it with a URL: ``postgresql://user:password@host:5432/db?schema=NAME``. The schema is the
URL's ``schema`` parameter, else the ``schema`` argument (the quest's name), else ``reins``,
folded to a safe identifier (:func:`reins.store.postgres.target.schema_name`); every session
runs with it as its search path, so tables go unqualified and the invariant queries of
:mod:`reins.store.checks` run as they are. Other parameters go to libpq as usual (``sslmode``,
``options=-c lock_timeout=5s`` to change a timeout).

Each session gets server-side timeouts, so that a stuck client cannot hold a row lock for ever:
``idle_in_transaction_session_timeout`` 30 s, ``lock_timeout`` 10 s, ``statement_timeout``
60 s. Every store call is one short transaction on a connection from a small pool (at most
four; the loop calls the store from one thread). Leases are taken with ``SELECT … FOR UPDATE
SKIP LOCKED``; a turn locks its item ``FOR UPDATE``, checks the claim and the ratchet, and
writes the attempt, the item and the counters before it commits. Triggers enforce the ratchet
and keep the status counters as in SQLite. A connection lost in the middle of a turn is
retried once on a fresh connection with the same draft, whose nonce finds a turn that did
commit; failing that, the error names the server (never the password) and says the turn is
either wholly recorded or absent.

Needs ``psycopg[binary,pool]`` (the extra ``reins-quest[postgres]``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Any

from reins.store.model import (
    Activity,
    Attempt,
    Claim,
    Draft,
    ExportBatch,
    Item,
    Lease,
    Page,
    State,
    Stats,
)
from reins.store.owner import Owner
from reins.store.postgres import counters, exports, items, leases, record
from reins.store.postgres.connection import Database
from reins.store.postgres.setup import Opened, open_schema
from reins.store.postgres.target import Target, parse


class PostgresStore:
    """A reins ledger in one schema of a PostgreSQL database. Open it with :meth:`open`."""

    def __init__(self, db: Database, opened: Opened) -> None:
        self._db = db
        self._version = opened.version
        self._owner = opened.owner
        self._adopted = opened.adopted

    @classmethod
    def open(
        cls,
        url: str,
        *,
        create: bool = False,
        schema: str | None = None,
        owner: Owner | None = None,
    ) -> PostgresStore:
        """Open the ledger at ``url`` for ``owner``; with ``create``, make its schema if it is
        missing. A new ledger records ``owner``; one that recorded none yet takes it (see
        :attr:`adopted`); one that recorded another is refused, untouched.

        Raises:
            ConfigError: the URL is malformed. NotFound: no ledger there and ``create`` is
            false. CorruptLedger: the schema holds something else, a newer ledger, or tables
            that are not those of its version. WrongQuest: the ledger belongs to another owner.
            LedgerError: the server cannot be reached; a migration failed (rolled back).
        """
        target = parse(url, schema)
        opened = open_schema(target, create=create, owner=owner)
        return cls(Database(target), opened)

    @property
    def target(self) -> Target:
        return self._db.target

    @property
    def location(self) -> str:
        return self._db.target.location

    @property
    def schema(self) -> str:
        return self._db.target.schema

    @property
    def schema_version(self) -> int:
        return self._version

    @property
    def owner(self) -> Owner | None:
        return self._owner

    @property
    def adopted(self) -> bool:
        return self._adopted

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add(self, seeds: Iterable[tuple[str, Any]]) -> tuple[int, int]:
        return items.add(self._db, seeds)

    def get(self, key: str) -> Item:
        return items.get(self._db, key)

    def snapshot(self, key: str) -> tuple[Item, list[Attempt]]:
        return items.snapshot(self._db, key)

    def page(
        self,
        *,
        state: State | None = None,
        rule: str | None = None,
        leased_to: str | None = None,
        after: int | None = None,
        limit: int = 100,
        round: int | None = None,
        contains: str | None = None,
        descending: bool = False,
    ) -> Page:
        return items.page(
            self._db,
            state=state,
            rule=rule,
            leased_to=leased_to,
            after=after,
            limit=limit,
            round_=round,
            contains=contains,
            descending=descending,
        )

    def activity(self, *, samples: int = 48, window: int = 64) -> Activity:
        return items.activity(self._db, samples=samples, window=window)

    def lease(
        self,
        owner: str,
        *,
        ttl: float,
        now: float | None = None,
        excluding: Collection[str] = (),
    ) -> Lease | None:
        return leases.lease(self._db, owner, ttl=ttl, now=now, excluding=excluding)

    def heartbeat(self, key: str, owner: str, *, ttl: float, now: float | None = None) -> bool:
        return leases.heartbeat(self._db, key, owner, ttl=ttl, now=now)

    def release(self, key: str, owner: str) -> bool:
        return leases.release(self._db, key, owner)

    def release_all(self, owner: str) -> int:
        return leases.release_all(self._db, owner)

    def soonest_expiry(self, *, excluding: Collection[str] = ()) -> float | None:
        return leases.soonest_expiry(self._db, excluding=excluding)

    def record(
        self, draft: Draft, claim: Claim, *, now: float | None = None
    ) -> tuple[Item, Attempt]:
        return record.record(self._db, draft, claim, now=now)

    def stats(self, *, now: float | None = None) -> Stats:
        return counters.stats(self._db, now=now)

    def meta(self, key: str) -> str | None:
        return counters.meta(self._db, key)

    def set_meta(self, key: str, value: str) -> None:
        counters.set_meta(self._db, key, value)

    def check(self) -> list[str]:
        return counters.check(self._db)

    def claim_batch(self, path: str, offset: int, limit: int) -> ExportBatch | None:
        return exports.claim_batch(self._db, path, offset, limit)

    def open_batches(self, path: str) -> list[ExportBatch]:
        return exports.open_batches(self._db, path)

    def open_batch_paths(self) -> list[str]:
        return exports.open_batch_paths(self._db)

    def finish_batch(self, batch: int) -> None:
        exports.finish_batch(self._db, batch)

    def exported_count(self) -> int:
        return exports.exported_count(self._db)

    def load(self, entries: Iterable[tuple[Item, Sequence[Attempt]]]) -> int:
        return record.load(self._db, entries)
