"""The Store protocol, implemented once over any engine's SQL.

:class:`Ledger` holds everything a store does that is not I/O: the defaults of the clock, the
checks of what a caller passes, the chunking of long inputs, the owner the open found; each
call then goes to one function of the engine's modules (:mod:`reins.store.engine`), which runs
the engine's SQL in one short transaction. An engine subclasses it only to open itself and to
say where it lives (``SQLiteStore.path``, ``PostgresStore.target``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Collection, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Generic, Self

from reins.errors import LedgerError
from reins.store.codec import dump_json
from reins.store.engine import DB, EngineSQL, Entry, JobsSQL, PeopleSQL, Row
from reins.store.model import (
    Activity,
    Attempt,
    Claim,
    Draft,
    ExportClaim,
    Item,
    Lease,
    Page,
    Stats,
)
from reins.store.owner import Owner
from reins.store.query import PageQuery
from reins.store.walk import chunks

if TYPE_CHECKING:  # batch jobs and the reviewer's desk: loaded by the commands that use them
    from reins.store.jobs import BatchJob, BatchRequest, JobDraft, JobState
    from reins.store.lockfault import LockFault
    from reins.store.people import Decisions, Reviewer

ADD_CHUNK = 5_000  # items added per transaction
LOAD_CHUNK = 1_000  # items (with their logs) copied per transaction
KEYS_CHUNK = 500  # keys per statement of last_attempts (SQLite binds one parameter per key)
# After its first, a ledger looks for holders that are gone when a lease finds too few items
# free, at most this often (seconds).
SWEEP_EVERY = 1.0


class Ledger(Generic[DB]):
    """A ledger over the open handle ``db`` of an engine whose SQL is ``sql``.

    ``version``, ``owner`` and ``adopted`` are what opening it found: its schema version, the
    quest it belongs to, and whether this open recorded that quest.
    """

    def __init__(
        self, db: DB, sql: EngineSQL[DB], *, version: int, owner: Owner | None, adopted: bool
    ) -> None:
        self._db = db
        self._sql = sql
        self._version = version
        self._owner = owner
        self._adopted = adopted
        self._swept: float | None = None  # when it last looked for holders that are gone

    @property
    def location(self) -> str:
        return self._db.location

    @property
    def schema_version(self) -> int:
        return self._version

    @property
    def owner(self) -> Owner | None:
        return self._owner

    @property
    def adopted(self) -> bool:
        return self._adopted

    @property
    def calls_at_once(self) -> int:
        """How many calls may run at once on this ledger from different threads: the engine
        handle's ``calls_at_once`` (PostgreSQL: its pool's size), else one (SQLite: one
        connection). The loop runs that many ledger threads."""
        return int(getattr(self._db, "calls_at_once", 1))

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- items ----------------------------------------------------------------------------

    def add(self, seeds: Iterable[tuple[str, Any]]) -> tuple[int, int]:
        added = seen = 0
        for chunk in chunks(_rows(seeds), ADD_CHUNK):
            added += self._sql.items.insert(self._db, chunk)
            seen += len(chunk)
        return added, seen - added

    def get(self, key: str) -> Item:
        return self._sql.items.get(self._db, key)

    def snapshot(self, key: str) -> tuple[Item, list[Attempt]]:
        return self._sql.items.snapshot(self._db, key)

    def page(self, query: PageQuery) -> Page:
        return self._sql.items.page(self._db, query)

    def activity(self, *, samples: int = 48, window: int = 64) -> Activity:
        return self._sql.items.activity(self._db, samples=samples, window=window)

    def recent(self, *, limit: int = 20) -> list[Attempt]:
        return self._sql.items.recent(self._db, limit) if limit > 0 else []

    def last_attempts(self, keys: Collection[str]) -> dict[str, Attempt]:
        found: dict[str, Attempt] = {}
        for chunk in chunks(dict.fromkeys(keys), KEYS_CHUNK):
            found.update((a.key, a) for a in self._sql.items.last_attempts(self._db, chunk))
        return found

    # -- leases ---------------------------------------------------------------------------

    def lease(
        self, owner: str, *, ttl: float, now: float | None = None, excluding: Collection[str] = ()
    ) -> Lease | None:
        t = time.time() if now is None else now
        self._sweep(t, first=True)
        got = self._sql.leases.lease(self._db, owner, ttl=ttl, now=t, excluding=excluding)
        if got is None and self._sweep(t):
            got = self._sql.leases.lease(self._db, owner, ttl=ttl, now=t, excluding=excluding)
        return got

    def lease_many(
        self,
        owners: Sequence[str],
        *,
        ttl: float,
        now: float | None = None,
        excluding: Collection[str] = (),
    ) -> list[tuple[Lease, list[Attempt]]]:
        if len(set(owners)) != len(owners):
            raise LedgerError(f"lease_many names an owner twice: {list(owners)!r}")
        if not owners:
            return []
        t = time.time() if now is None else now
        self._sweep(t, first=True)
        leases = self._sql.leases
        got = leases.lease_many(self._db, owners, ttl=ttl, now=t, excluding=excluding)
        if len(got) < len(owners) and self._sweep(t):
            served = {lease.item.lease_owner for lease, _ in got}
            rest = [o for o in owners if o not in served]
            more = leases.lease_many(self._db, rest, ttl=ttl, now=t, excluding=excluding)
            place = {o: n for n, o in enumerate(owners)}
            got = sorted([*got, *more], key=lambda g: place[g[0].item.lease_owner or ""])
        return got

    def heartbeat(self, key: str, owner: str, *, ttl: float, now: float | None = None) -> bool:
        t = time.time() if now is None else now
        return self._sql.leases.heartbeat(self._db, key, owner, ttl=ttl, now=t)

    def release(self, key: str, owner: str) -> bool:
        return self._sql.leases.release(self._db, key, owner)

    def release_all(self, owner: str) -> int:
        return self._sql.leases.release_all(self._db, owner)

    def soonest_expiry(self, *, excluding: Collection[str] = ()) -> float | None:
        return self._sql.leases.soonest_expiry(self._db, excluding=excluding)

    def lease_holders(self) -> list[str]:
        return self._sql.leases.holders(self._db)

    def _sweep(self, now: float, *, first: bool = False) -> bool:
        """End now the live leases of holders :func:`reins.store.holder.gone` says are gone (a
        process of this host killed while it held them), so that the lease about to be taken
        may take their items at once rather than when the leases run out; whether it ended any.

        A ledger looks on its first lease (``first``: a rerun takes a killed run's items
        first) and then, when a lease finds too few items free, at most once every
        SWEEP_EVERY seconds; so a lease costs no more while items are free. It reads each
        owner once (through the lease index) and writes only when some holder is gone.
        """
        if first and self._swept is not None:
            return False
        if not first and self._swept is not None and self._swept <= now < self._swept + SWEEP_EVERY:
            return False
        self._swept = now
        owners = self._sql.leases.holders(self._db)
        if not owners:
            return False
        from reins.store.holder import gone  # only once some lease is held

        dead = [o for o in owners if gone(o)]
        return bool(dead) and self._sql.leases.expire(self._db, dead, now=now) > 0

    # -- the reviewer's desk ---------------------------------------------------------------

    def reserve(self, key: str, owner: str, *, ttl: float, now: float | None = None) -> Item:
        t = time.time() if now is None else now
        return self._people().reserve(self._db, key, owner, ttl=ttl, now=t)

    def decisions(self, *, before: int | None = None, limit: int = 50) -> Decisions:
        if limit < 1:
            raise LedgerError(f"a page of decisions holds at least one, not {limit}")
        return self._people().decisions(self._db, before=before, limit=limit)

    def reviewers(self, *, since: str = "") -> list[Reviewer]:
        return self._people().reviewers(self._db, since=since)

    def _people(self) -> PeopleSQL[DB]:
        if self._sql.people_sql is None:
            raise LedgerError(
                f"ledger {self.location}: its engine keeps no reviewer's desk (claims and a "
                "person's actions); use an SQLite or a PostgreSQL ledger"
            )
        return self._sql.people_sql()

    # -- recording ------------------------------------------------------------------------

    def record(
        self, draft: Draft, claim: Claim, *, now: float | None = None
    ) -> tuple[Item, Attempt]:
        t = time.time() if now is None else now
        return self._sql.record.record(self._db, draft, claim, now=t)

    # -- counters and metadata ------------------------------------------------------------

    def stats(self, *, now: float | None = None) -> Stats:
        return self._sql.counters.stats(self._db, now=time.time() if now is None else now)

    def meta(self, key: str) -> str | None:
        return self._sql.counters.meta(self._db, key)

    def set_meta(self, key: str, value: str) -> None:
        self._sql.counters.set_meta(self._db, key, value)

    def swap_meta(self, key: str, old: str | None, new: str | None) -> bool:
        return self._sql.counters.swap_meta(self._db, key, old, new)

    def check(self) -> list[str]:
        return self._sql.counters.check(self._db)

    # -- export bookkeeping ---------------------------------------------------------------

    def claim_export(self, path: str, offset: int, limit: int) -> ExportClaim | None:
        return self._sql.exports.claim_export(self._db, path, offset, limit)

    def open_exports(self, path: str) -> list[ExportClaim]:
        return self._sql.exports.open_exports(self._db, path)

    def open_export_paths(self) -> list[str]:
        return self._sql.exports.open_export_paths(self._db)

    def finish_export(self, batch: int) -> None:
        self._sql.exports.finish_export(self._db, batch)

    def exported_count(self) -> int:
        return self._sql.exports.exported_count(self._db)

    def refused_locks(self) -> list[LockFault]:
        return self._sql.exports.refused_locks(self._db)

    # -- batch jobs -----------------------------------------------------------------------

    def open_job(
        self,
        job: JobDraft,
        *,
        limit: int,
        hold: float,
        ttl: float | None = None,
        now: float | None = None,
        excluding: Collection[str] = (),
    ) -> tuple[BatchJob, list[str]] | None:
        from reins.store.jobs import WINDOW

        ttl = WINDOW if ttl is None else ttl
        if limit < 1:
            raise LedgerError(f"a batch job takes at least one item, not {limit}")
        t = time.time() if now is None else now
        self._sweep(t, first=True)
        for again in (False, True):
            if again and not self._sweep(t):  # nothing was free: a holder may be gone
                break
            tag = os.urandom(5).hex()  # in the job's provider-side names: see reins.store.jobs
            opened = self._jobs().open_job(
                self._db, job, tag, limit=limit, ttl=ttl, hold=hold, now=t, excluding=excluding
            )
            if opened is not None:
                return opened
        return None

    def fill_job(
        self, job: int, requests: Sequence[BatchRequest], *, now: float | None = None
    ) -> BatchJob:
        ids = [r.custom_id for r in requests]
        if len(set(ids)) != len(ids):
            raise LedgerError(f"batch job {job}: two requests share a custom id")
        t = time.time() if now is None else now
        return self._jobs().fill_job(self._db, job, requests, now=t)

    def advance_job(
        self,
        job: int,
        state: JobState,
        *,
        file_id: str | None = None,
        batch_id: str | None = None,
        note: str | None = None,
    ) -> BatchJob:
        return self._jobs().advance_job(
            self._db, job, state, file_id=file_id, batch_id=batch_id, note=note
        )

    def hold_job(self, job: int, holder: str, *, ttl: float, now: float | None = None) -> bool:
        t = time.time() if now is None else now
        sql = self._jobs()
        if sql.hold_job(self._db, job, holder, ttl=ttl, now=t):
            return True
        # Held by another: take it over at once if that holder is a process of this host that
        # is gone (as a lease's, see _sweep); else its hold runs out as it always did.
        from reins.store.holder import gone

        dead = [h for h in sql.holders(self._db, now=t) if gone(h)]
        if not dead:
            return False
        sql.expire(self._db, dead, now=t)
        return sql.hold_job(self._db, job, holder, ttl=ttl, now=t)

    def jobs(self, *, open_only: bool = True) -> list[BatchJob]:
        return self._jobs().jobs(self._db, open_only=open_only)

    def job_requests(self, job: int) -> list[BatchRequest]:
        return self._jobs().job_requests(self._db, job)

    def _jobs(self) -> JobsSQL[DB]:
        if self._sql.jobs_sql is None:
            raise LedgerError(
                f"ledger {self.location}: its engine keeps no batch jobs, so `reins loop "
                "--batch` cannot run on it; use an SQLite or a PostgreSQL ledger"
            )
        return self._sql.jobs_sql()

    # -- copying between engines ----------------------------------------------------------

    def load(self, entries: Iterable[Entry]) -> int:
        """Insert items with their logs as they are (``reins ledger copy``) into an empty
        ledger. Inserting terminal rows is allowed: the ratchet guards updates, not inserts."""
        if not self._sql.record.empty(self._db):
            raise LedgerError(f"ledger {self.location} is not empty: copy only into a new ledger")
        return sum(self._sql.record.load(self._db, chunk) for chunk in chunks(entries, LOAD_CHUNK))


def _rows(seeds: Iterable[tuple[str, Any]]) -> Iterator[Row]:
    """Each seed as the row an engine inserts; a key that cannot be one is refused."""
    for key, payload in seeds:
        if not isinstance(key, str) or not key:
            raise LedgerError(f"an item key must be a non-empty string, got {key!r}")
        yield key, None if payload is None else dump_json(payload)
