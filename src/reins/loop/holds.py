"""The batch jobs a batch run holds: one process drives a job at a time.

A job is held (:meth:`reins.store.protocol.Store.hold_job`) for the run's hold time, renewed
while the run drives it and given back at the run's end; a rerun takes over at once the jobs
of a holder of this host that is gone (:mod:`reins.store.holder`), any other job once its hold
runs out. A run carries on the open jobs of its ledger that its backend and model sent and
that no live process holds (:meth:`Holds.resumable`), waits for those another process holds
(:meth:`Holds.wait_for`), and records a batch that another job's search found as that job's
(:meth:`Holds.adopt`).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable

from reins.backends.batch import BatchAPI
from reins.loop.ledger_thread import LedgerThread
from reins.loop.lines import clock
from reins.loop.openjobs import other_backend
from reins.loop.waiting import WAIT_NOTE_EVERY
from reins.store.jobs import BatchJob, BatchRequest, JobDraft, JobState
from reins.store.protocol import Store


class Holds:
    """The jobs one run holds, as ``holder``, each for ``ttl`` seconds at a time."""

    def __init__(self, store: Store, db: LedgerThread, holder: str, ttl: float) -> None:
        self.store, self.db, self.holder, self.ttl = store, db, holder, ttl
        self.held: set[int] = set()
        self._told: set[int] = set()  # jobs of another backend, said once
        self._noted = float("-inf")

    async def take(self, job: int) -> bool:
        """Hold ``job`` from now on; False when another live process holds it."""
        if not await self.db(self.store.hold_job, job, self.holder, ttl=self.ttl):
            return False
        self.held.add(job)
        return True

    async def open(
        self, draft: JobDraft, *, limit: int, excluding: tuple[str, ...]
    ) -> tuple[BatchJob, list[str]] | None:
        """A new job, held, and the keys of the items leased to it (None: none are free)."""
        opened = await self.db(self.store.open_job, draft, limit=limit, hold=self.ttl,
                               excluding=excluding)  # fmt: skip
        if opened is not None:
            self.held.add(opened[0].id)
        return opened

    async def discard(self, job: int, note: str) -> None:
        """End ``job``, which sent nothing, and hold it no more."""
        await self.db(self.store.advance_job, job, JobState.DISCARDED, note=note)
        self.held.discard(job)

    async def fill(self, job: int, requests: list[BatchRequest]) -> BatchJob:
        """Record ``job``'s requests (see :meth:`reins.store.protocol.Store.fill_job`)."""
        return await self.db(self.store.fill_job, job, requests)

    async def renew(self) -> None:
        """Renew the hold of every job this run holds."""
        for job in tuple(self.held):
            await self.db(self.store.hold_job, job, self.holder, ttl=self.ttl)

    def give_up(self) -> None:
        """Give every hold back (on the ledger thread): the run is ending."""
        for job in self.held:
            self.store.hold_job(job, self.holder, ttl=0)

    async def resumable(
        self,
        api: BatchAPI,
        waiting: list[BatchJob],
        *,
        going: Callable[[], bool],
        note: Callable[[str], None],
    ) -> AsyncIterator[BatchJob]:
        """Each open job of ``api``'s backend and model that no other process holds, held now
        and read again (another job's search may have found its batch), for the run to carry
        on before the next; those another process holds are put in ``waiting``. Jobs another
        backend or model sent are said once and left; none once ``going`` says the run stops.
        """
        for listed in await self.db(self.store.jobs):
            if not going() or listed.id in self.held:
                continue
            if (listed.backend, listed.model) != (api.name, api.model):
                if listed.id not in self._told:
                    self._told.add(listed.id)
                    note(other_backend(listed))
                continue
            if not await self.take(listed.id):
                waiting.append(listed)
                continue
            job = next(j for j in await self.db(self.store.jobs, open_only=False)
                       if j.id == listed.id)  # fmt: skip
            if not job.state.final:
                yield job

    async def adopt(self, job: BatchJob, batch_id: str, note: str) -> bool:
        """Record ``batch_id`` as ``job``'s batch unless a live process holds the job (it finds
        the batch itself); a hold taken for it is given back (the run carries it on next)."""
        mine = job.id in self.held
        if not mine and not await self.db(self.store.hold_job, job.id, self.holder, ttl=self.ttl):
            return False
        try:
            every = await self.db(self.store.jobs, open_only=False)
            now = next(j for j in every if j.id == job.id)
            if now.state not in (JobState.COMPOSED, JobState.UPLOADED) or now.batch_id:
                return False  # another process recorded its batch since
            await self.db(self.store.advance_job, job.id, JobState.SENT, batch_id=batch_id,
                          note=note)  # fmt: skip
        finally:
            if not mine:
                await self.db(self.store.hold_job, job.id, self.holder, ttl=0)
        return True

    async def wait_for(
        self,
        jobs: list[BatchJob],
        *,
        wait: bool,
        note: Callable[[str], None],
        sleep: Callable[[float], Awaitable[bool]],
    ) -> bool:
        """Nothing is free: wait for the hold of another process on ``jobs`` to run out
        (saying so now and then), unless ``wait`` is off. False: stop instead."""
        if not wait:
            held = ", ".join(f"{j.id} ({j.holder})" for j in jobs)
            note(f"batch job(s) {held} are driven by another process (--no-wait)")
            return False
        soonest = min(j.held_until or 0.0 for j in jobs) - time.time()
        now = time.monotonic()
        if now - self._noted >= WAIT_NOTE_EVERY:
            self._noted = now
            job = jobs[0]
            note(
                f"waiting: batch job {job.id} is held by {job.holder} (a process that may have "
                f"died); the hold runs out in {clock(max(soonest, 0.0))} unless it is renewed"
            )
        return await sleep(min(max(soonest, 0.0) + 0.05, 1.0))
