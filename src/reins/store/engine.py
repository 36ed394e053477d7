"""What an engine supplies to the one Store implementation: a handle and its SQL modules.

:class:`~reins.store.ledger.Ledger` implements the Store protocol once, over any engine. An
engine brings an open handle on its database (:class:`Handle`: where it lives, how to close it)
and one module (or object) per group of the protocol, each a set of functions that take the
handle first: :class:`ItemsSQL`, :class:`LeasesSQL`, :class:`RecordSQL`, :class:`CountersSQL`,
:class:`ExportsSQL` and, for batch rounds, :class:`JobsSQL`, for the reviewer's desk,
:class:`PeopleSQL`. They hold the engine's SQL and its
transactions, nothing else: defaults,
clocks, chunking, checks of what a caller passed and everything else that is not I/O is the
ledger's. mypy checks each engine's modules against these protocols where
:class:`EngineSQL` gathers them (``reins.store.sqlite``, ``reins.store.postgres``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from reins.store.model import Activity, Attempt, Claim, Draft, ExportClaim, Item, Lease, Page, Stats
from reins.store.query import PageQuery

if TYPE_CHECKING:  # batch jobs and the reviewer's desk: loaded by the commands that use them
    from reins.store.jobs import BatchJob, BatchRequest, JobDraft, JobState
    from reins.store.lockfault import LockFault
    from reins.store.people import Decisions, Reviewer


class Handle(Protocol):
    """An engine's open database."""

    @property
    def location(self) -> str:
        """Where the ledger lives: a file path or a URL (never with its password)."""
        ...

    def close(self) -> None: ...


DB = TypeVar("DB", bound=Handle)
# The handle as the modules' functions take it (a protocol's argument is contravariant).
H = TypeVar("H", bound=Handle, contravariant=True)
Row = tuple[str, str | None]  # an item to add: its key and its payload as JSON (None: none)
Entry = tuple[Item, Sequence[Attempt]]  # an item with its whole log, for a copy


class ItemsSQL(Protocol[H]):
    def insert(self, db: H, rows: list[Row]) -> int:
        """Add ``rows`` in one transaction, in their order; keys present stay untouched.
        Returns how many were added."""
        ...

    def get(self, db: H, key: str) -> Item: ...

    def snapshot(self, db: H, key: str) -> tuple[Item, list[Attempt]]: ...

    def page(self, db: H, query: PageQuery) -> Page: ...

    def activity(self, db: H, *, samples: int, window: int) -> Activity: ...

    def recent(self, db: H, limit: int) -> list[Attempt]: ...

    def last_attempts(self, db: H, keys: list[str]) -> list[Attempt]: ...


class LeasesSQL(Protocol[H]):
    def lease(
        self, db: H, owner: str, *, ttl: float, now: float, excluding: Collection[str]
    ) -> Lease | None: ...

    def lease_many(
        self, db: H, owners: Sequence[str], *, ttl: float, now: float, excluding: Collection[str]
    ) -> list[tuple[Lease, list[Attempt]]]:
        """In one transaction, what :meth:`lease` gives each of ``owners`` (distinct) in turn,
        each with its item's log; owners that got nothing left out."""
        ...

    def heartbeat(self, db: H, key: str, owner: str, *, ttl: float, now: float) -> bool: ...

    def release(self, db: H, key: str, owner: str) -> bool: ...

    def release_all(self, db: H, owner: str) -> int: ...

    def soonest_expiry(self, db: H, *, excluding: Collection[str]) -> float | None: ...

    def holders(self, db: H) -> list[str]:
        """Every owner that holds a lease (live or not), each once: through the lease index,
        one entry per owner, however many items each holds."""
        ...

    def expire(self, db: H, owners: Sequence[str], *, now: float) -> int:
        """End the live leases of ``owners`` at ``now``, as if they had run out then (owner and
        token stay, as on any expired lease); returns how many."""
        ...


class RecordSQL(Protocol[H]):
    def record(self, db: H, draft: Draft, claim: Claim, *, now: float) -> tuple[Item, Attempt]: ...

    def empty(self, db: H) -> bool:
        """Whether the ledger holds no item (a copy goes only into an empty one)."""
        ...

    def load(self, db: H, chunk: list[Entry]) -> int:
        """Write ``chunk`` verbatim in one transaction; returns how many items."""
        ...


class CountersSQL(Protocol[H]):
    def stats(self, db: H, *, now: float) -> Stats: ...

    def meta(self, db: H, key: str) -> str | None: ...

    def set_meta(self, db: H, key: str, value: str) -> None: ...

    def swap_meta(self, db: H, key: str, old: str | None, new: str | None) -> bool: ...

    def check(self, db: H) -> list[str]: ...


class ExportsSQL(Protocol[H]):
    def claim_export(self, db: H, path: str, offset: int, limit: int) -> ExportClaim | None: ...

    def open_exports(self, db: H, path: str) -> list[ExportClaim]: ...

    def open_export_paths(self, db: H) -> list[str]: ...

    def finish_export(self, db: H, batch: int) -> None: ...

    def exported_count(self, db: H) -> int: ...

    def refused_locks(self, db: H) -> list[LockFault]: ...


class JobsSQL(Protocol[H]):
    def open_job(
        self,
        db: H,
        job: JobDraft,
        tag: str,
        *,
        limit: int,
        ttl: float,
        hold: float,
        now: float,
        excluding: Collection[str],
    ) -> tuple[BatchJob, list[str]] | None:
        """In one transaction: lease up to ``limit`` free TODO items (oldest first, none in
        ``excluding``) to a new job, for ``ttl`` seconds, held by ``job.holder`` for ``hold``;
        the job and the keys leased, oldest first. None, and no job, when no item is free."""
        ...

    def fill_job(
        self, db: H, job: int, requests: Sequence[BatchRequest], *, now: float
    ) -> BatchJob: ...

    def advance_job(
        self,
        db: H,
        job: int,
        state: JobState,
        *,
        file_id: str | None,
        batch_id: str | None,
        note: str | None,
    ) -> BatchJob: ...

    def hold_job(self, db: H, job: int, holder: str, *, ttl: float, now: float) -> bool: ...

    def holders(self, db: H, *, now: float) -> list[str]:
        """The holders of live holds on open jobs, each once."""
        ...

    def expire(self, db: H, holders: Sequence[str], *, now: float) -> int:
        """End the live holds of ``holders`` on open jobs at ``now``; returns how many."""
        ...

    def jobs(self, db: H, *, open_only: bool) -> list[BatchJob]: ...

    def job_requests(self, db: H, job: int) -> list[BatchRequest]: ...


class PeopleSQL(Protocol[H]):
    def reserve(self, db: H, key: str, owner: str, *, ttl: float, now: float) -> Item:
        """In one transaction: ``owner``'s claim on REVIEW item ``key`` until ``now + ttl``,
        if nobody else holds it live; the item after. Raises what
        :func:`reins.store.people.refusal` says, or NotFound."""
        ...

    def decisions(self, db: H, *, before: int | None, limit: int) -> Decisions: ...

    def reviewers(self, db: H, *, since: str) -> list[Reviewer]: ...


@dataclass(frozen=True, slots=True)
class EngineSQL(Generic[DB]):
    """An engine's SQL, one module per group of the Store protocol, for handles of type DB."""

    items: ItemsSQL[DB]
    leases: LeasesSQL[DB]
    record: RecordSQL[DB]
    counters: CountersSQL[DB]
    exports: ExportsSQL[DB]
    # Loaded on first use (most commands touch no batch job); an engine written before batch
    # rounds has none, and its ledger refuses batch jobs.
    jobs_sql: Callable[[], JobsSQL[DB]] | None = None
    # Likewise the reviewer's desk (claims, a person's actions): the dashboard and `review` only.
    people_sql: Callable[[], PeopleSQL[DB]] | None = None
