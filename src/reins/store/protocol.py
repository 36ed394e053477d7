"""The Store protocol: the only way the turn, the loop and every surface touch persistent state.

:class:`reins.store.ledger.Ledger` implements it once, over an engine's SQL
(:mod:`reins.store.engine`); two engines supply it (:mod:`reins.store.sqlite`,
:mod:`reins.store.postgres`), and both are held to one conformance suite
(:mod:`reins.testing.conformance`). Every method is one short
transaction; none holds a lock across calls.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

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
from reins.values import JSON

if TYPE_CHECKING:  # batch jobs and the reviewer's desk: loaded by the commands that use them
    from reins.store.jobs import BatchJob, BatchRequest, JobDraft, JobState
    from reins.store.lockfault import LockFault
    from reins.store.people import Decisions, Reviewer


class Store(Protocol):
    """A ledger: items, their append-only logs, leases, counters and export bookkeeping."""

    @property
    def location(self) -> str:
        """Where the ledger lives: a file path or a URL (never with its password)."""
        ...

    @property
    def schema_version(self) -> int: ...

    @property
    def owner(self) -> Owner | None:
        """The quest the ledger belongs to, as recorded when it was made (or adopted); None for
        a ledger from before owners were recorded that was opened without one."""
        ...

    @property
    def adopted(self) -> bool:
        """Whether this open recorded :attr:`owner` in a ledger that had none (say so once)."""
        ...

    def close(self) -> None: ...

    # -- items ----------------------------------------------------------------------------

    def add(self, seeds: Iterable[tuple[str, JSON]]) -> tuple[int, int]:
        """Add items from ``(key, payload)`` pairs, streaming; existing keys stay untouched.

        Returns ``(added, already_present)``; duplicates inside ``seeds`` count as present.
        """
        ...

    def get(self, key: str) -> Item:
        """The item with ``key``. Raises NotFound."""
        ...

    def snapshot(self, key: str) -> tuple[Item, list[Attempt]]:
        """The item and its log, oldest first, read in one consistent snapshot."""
        ...

    def page(self, query: PageQuery) -> Page:
        """One page of the items ``query`` asks for (:class:`~reins.store.query.PageQuery`):
        in the order they were added, or newest first, after its cursor.

        A text search reads items in order until the page is full, so a rare text costs a
        scan; every other filter follows an index.
        """
        ...

    def activity(self, *, samples: int = 48, window: int = 64) -> Activity:
        """The log's attempts over time: all of them when there are at most
        ``samples * window``, else ``samples`` runs of ``window`` consecutive attempts spread
        evenly over the log. Costs the same at any size (the runs are read by their ids)."""
        ...

    def recent(self, *, limit: int = 20) -> list[Attempt]:
        """The log's newest ``limit`` attempts, newest first (read from its end by id, so it
        costs the same at any size)."""
        ...

    def last_attempts(self, keys: Collection[str]) -> dict[str, Attempt]:
        """The last attempt of each item in ``keys``, by key; an item without a turn (or a key
        that names no item) is absent. One indexed read per item, however long its log."""
        ...

    # -- leases ---------------------------------------------------------------------------

    def lease(
        self, owner: str, *, ttl: float, now: float | None = None, excluding: Collection[str] = ()
    ) -> Lease | None:
        """Lease the next TODO item to ``owner`` for ``ttl`` seconds, or None if none is free.

        An owner that holds a live lease gets the same item again (one item in progress per
        owner); otherwise the oldest TODO item nobody holds or whose lease expired, and whose
        key is not in ``excluding`` (the items a loop run has set aside). A lease whose holder
        is a process of this host that is gone (:func:`reins.store.holder.gone`) counts as
        expired: a store looks for such holders on its first lease, and again when a lease
        finds too few items free (at most once a second), and ends their leases.
        """
        ...

    def lease_many(
        self,
        owners: Sequence[str],
        *,
        ttl: float,
        now: float | None = None,
        excluding: Collection[str] = (),
    ) -> list[tuple[Lease, list[Attempt]]]:
        """Lease an item to each of ``owners`` in one transaction, as :meth:`lease` would to
        each in turn (its own live lease again, else the oldest free TODO item not in
        ``excluding``, no item to two of them), each with its item's log, oldest first.

        In the order of ``owners``; an owner left without an item (none free) is left out.
        Raises LedgerError when an owner is named twice.
        """
        ...

    def heartbeat(self, key: str, owner: str, *, ttl: float, now: float | None = None) -> bool:
        """Extend ``owner``'s lease on ``key``. False if the lease was lost."""
        ...

    def release(self, key: str, owner: str) -> bool:
        """Give back ``owner``'s lease on ``key``; False if it held none."""
        ...

    def release_all(self, owner: str) -> int:
        """Give back every lease ``owner`` holds; returns how many."""
        ...

    def soonest_expiry(self, *, excluding: Collection[str] = ()) -> float | None:
        """When the first lease on a TODO item runs out (or ran out), among owners not
        ``excluding``; None when no TODO item is leased."""
        ...

    def lease_holders(self) -> list[str]:
        """Every owner that holds a lease on an item (live or run out), each once, read through
        the lease index (one step per owner, however many items each holds): with
        ``page(PageQuery(leased_to=owner))``, who holds which items."""
        ...

    # -- the reviewer's desk (reins.store.people) -------------------------------------------

    def reserve(self, key: str, owner: str, *, ttl: float, now: float | None = None) -> Item:
        """Claim REVIEW item ``key`` for the person ``owner`` for ``ttl`` seconds: a lease for
        people, which others see and which refuses their decisions on it while it is live.
        The holder claiming again renews it; :meth:`release` gives it back; the holder's
        decision ends it. Returns the item after.

        Raises:
            NotFound: no such item. IllegalTransition: the item is not REVIEW.
            LeaseConflict: another person holds a live claim on it.
        """
        ...

    def decisions(self, *, before: int | None = None, limit: int = 50) -> Decisions:
        """A person's actions (``human`` attempts), newest first: at most ``limit``, before the
        cursor ``before`` (a page's ``next``). Read through an index of those actions, so it
        costs the same however long the log."""
        ...

    def reviewers(self, *, since: str = "") -> list[Reviewer]:
        """Each person who acted: their actions by name, how many were recorded at or after
        ``since`` (an ISO 8601 stamp in UTC, as the ledger's; "" counts all), and the last;
        the busiest first."""
        ...

    # -- recording ------------------------------------------------------------------------

    def record(
        self, draft: Draft, claim: Claim, *, now: float | None = None
    ) -> tuple[Item, Attempt]:
        """Record one turn in one transaction: the attempt, the item's state, its counters.

        Raises:
            NotFound: no such item. NotTodo: the item is terminal (the ratchet).
            LeaseConflict: another owner holds a live lease. TurnMoved: the item gained a turn
            since ``claim.turns`` was read. IllegalTransition: tries would go down.
        """
        ...

    # -- counters and metadata ------------------------------------------------------------

    def stats(self, *, now: float | None = None) -> Stats: ...

    def meta(self, key: str) -> str | None: ...

    def set_meta(self, key: str, value: str) -> None: ...

    def swap_meta(self, key: str, old: str | None, new: str | None) -> bool:
        """Set ``key`` to ``new`` (None: remove it) only if it holds ``old`` now (None: it is
        absent), in one transaction; whether it did. What a hold of the whole ledger (``reins
        land``'s) and a journal many hosts append to are made of."""
        ...

    def check(self) -> list[str]:
        """Verify the ledger's invariants by scanning it; returns what is wrong (empty: sound)."""
        ...

    # -- export bookkeeping (the file side is reins.store.export) -------------------------

    def claim_export(self, path: str, offset: int, limit: int) -> ExportClaim | None:
        """Mark up to ``limit`` items as a batch written at ``offset``: terminal, unexported
        ones whose lock an attempt produced (never one of :meth:`refused_locks`), then TODO ones
        whose withdrawal is owed to ``path`` (that item's owed entry goes, and so does the entry
        of an owed item that locked again since, by an attempt: see
        :mod:`reins.store.withdrawal`)."""
        ...

    def open_exports(self, path: str) -> list[ExportClaim]:
        """Batches to ``path`` that were claimed but never finished (a writer died)."""
        ...

    def open_export_paths(self) -> list[str]: ...

    def finish_export(self, batch: int) -> None:
        """Mark ``batch`` written; its TODO items (withdrawals) lose their mark with it."""
        ...

    def exported_count(self) -> int: ...

    def refused_locks(self) -> list[LockFault]:
        """The terminal, unexported items whose lock no attempt produced, which no export
        writes (:mod:`reins.store.provenance`), oldest first."""
        ...

    # -- batch jobs (the provider batches of ``reins loop --batch``: reins.store.jobs) -------

    def open_job(
        self,
        job: JobDraft,
        *,
        limit: int,
        hold: float,
        ttl: float = ...,
        now: float | None = None,
        excluding: Collection[str] = (),
    ) -> tuple[BatchJob, list[str]] | None:
        """Open a batch job and lease up to ``limit`` free TODO items to it (its
        :attr:`~reins.store.jobs.BatchJob.owner`), oldest first and none in ``excluding``,
        for ``ttl`` seconds (default the providers' batch window), in one transaction; the job
        is held by ``job.holder`` for ``hold`` seconds. Returns the job and the keys leased,
        oldest first; None, and no job, when no item is free."""
        ...

    def fill_job(
        self, job: int, requests: Sequence[BatchRequest], *, now: float | None = None
    ) -> BatchJob:
        """Record the requests of a ``leased`` job, which becomes ``composed`` (at ``now``).

        Raises:
            IllegalTransition: the job is not ``leased``. NotFound: no such job.
        """
        ...

    def advance_job(
        self,
        job: int,
        state: JobState,
        *,
        file_id: str | None = None,
        batch_id: str | None = None,
        note: str | None = None,
    ) -> BatchJob:
        """Move a job forward to ``state`` (or write again where it is), recording the ids
        and note given (None keeps what it had); a final state gives back every lease the job
        holds, in the same transaction.

        Raises:
            IllegalTransition: ``state`` is behind the job's. NotFound: no such job.
        """
        ...

    def hold_job(self, job: int, holder: str, *, ttl: float, now: float | None = None) -> bool:
        """Hold ``job`` for ``holder`` for ``ttl`` seconds (0 gives a hold up), if nobody else
        holds it; False if another holder's hold is live. A hold whose holder is a process of
        this host that is gone is taken over at once."""
        ...

    def jobs(self, *, open_only: bool = True) -> list[BatchJob]:
        """The batch jobs, oldest first: those not in a final state, or (``open_only`` false)
        every one."""
        ...

    def job_requests(self, job: int) -> list[BatchRequest]:
        """The requests of ``job``, by custom id."""
        ...

    # -- copying between engines ----------------------------------------------------------

    def load(self, entries: Iterable[tuple[Item, Sequence[Attempt]]]) -> int:
        """Write items with their whole logs verbatim into an empty ledger; returns how many.

        Only ``reins ledger copy`` uses it: leases and export marks are not carried over.
        """
        ...
