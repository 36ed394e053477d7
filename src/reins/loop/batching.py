"""Batch rounds: the loop's items sent a round at a time as one provider batch, at half price.

A round leases the items it takes to a batch job (:mod:`reins.store.jobs`) for the provider's
window, composes their prompts from the log exactly as the loop does, records them, and sends
them as one batch (:mod:`reins.loop.batchjob`); when the batch ends, each result is judged and
recorded as one turn, and the next round is composed from what was recorded, so a FAIL's facts
feed the next round's prompt. The breakers hold: generation errors on N items in a row stop the
run after the round (and no more errors are recorded), N judge errors in a row stop recording
at once (the rest wait at the provider for a rerun); an item whose generation fails N rounds
in a row is set aside. A run first carries on the open jobs its ledger holds for this backend
(the jobs a run holds, and those it waits for: :mod:`reins.loop.holds`). A hard stop (a
signal) leaves a sent batch running at the provider, its items leased to it. This module is
the run's driver: its rounds, one after the other, and what a job asks of it; a job's sending
and polling is :mod:`reins.loop.batchjob`'s, its results' recording :mod:`reins.loop.collect`'s.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Collection

from reins.backends.base import Backend
from reins.backends.batch import batch_api_of
from reins.backends.redact import Redactor
from reins.errors import BackendError, LedgerError
from reins.loop.batchjob import JobDriver
from reins.loop.breakers import sets_aside, tripped
from reins.loop.collect import Ended, Flow
from reins.loop.course import Course
from reins.loop.crashpoint import crash_point
from reins.loop.events import BatchEvent, ResultsEvent, StopReason, Summary
from reins.loop.generator import TextGenerator, samples_as_told
from reins.loop.holds import Holds
from reins.loop.inflight import InFlight
from reins.loop.ledger_thread import LedgerThread
from reins.loop.openjobs import cancellable, failed_job, left_open
from reins.loop.options import LoopOptions
from reins.loop.progress import Reporter
from reins.loop.rounds import compose_round
from reins.loop.tally import budget_message
from reins.quest import Quest
from reins.store.holder import holder_name
from reins.store.jobs import BatchJob, JobDraft
from reins.store.model import AttemptKind
from reins.store.protocol import Store
from reins.turn.record import Recorded

# The stops after which a job's results are no longer recorded: the run is going away.
_LEAVING = (StopReason.INTERRUPTED, StopReason.ERROR)


class BatchRun(Course):
    """One ``reins loop --batch`` run over one ledger, with one backend."""

    def __init__(
        self,
        store: Store,
        quest: Quest,
        backend: Backend,
        *,
        options: LoopOptions | None = None,
        reporter: Reporter | None = None,
    ) -> None:
        super().__init__(store, quest, LedgerThread(), options or LoopOptions(), reporter)
        self.api = batch_api_of(backend)
        self.policy = self.options.retry or quest.retry
        samples_as_told(TextGenerator(backend), self.policy, batch=True)
        self.driver = self.options.driver
        self.poll = self.options.poll
        # A rerun on this host takes its jobs over once this process is gone.
        self.holds = Holds(store, self.db, holder_name(self.driver), self.options.lease_ttl)
        self.inflight = InFlight()
        self.errors_in_row: dict[str, int] = {}
        self.left: list[BatchJob] = []  # jobs still running at the provider when it stopped
        self.taken: set[str] = set()
        self._redactor = Redactor()

    def stop(self, reason: StopReason, message: str = "", *, signal: str | None = None) -> None:
        """Ask the run to stop (see :meth:`Course.stop`); when it is going away, its waits and
        polls end too."""
        super().stop(reason, message, signal=signal)
        if reason in _LEAVING:
            self.inflight.drop()

    @property
    def stopping(self) -> bool:
        """Whether the run is going away: a job stops waiting and recording."""
        return self.reason in _LEAVING

    async def sleep(self, seconds: float) -> bool:
        return await self.inflight.sleep(seconds) and not self.stopping

    # -- the run ---------------------------------------------------------------------------

    async def run(self) -> Summary:
        """Carry on this backend's open jobs, then work in rounds until nothing is left, a cap
        or a breaker, or a stop."""
        self.inflight.open()
        self._started = time.monotonic()
        keeper = asyncio.create_task(self._keep())
        try:
            self.stats = await self.db(self.store.stats)
            self.reporter.start(self.status())
            waiting = await self._resume()
            while self.reason is None:
                spent = self.tally.budget_spent(self.options.budget)
                if spent is not None:
                    self.stop(spent, budget_message(self.options.budget, spent))
                    break
                driver = await self._open_round()
                if driver is not None:
                    await self._drive(driver)
                elif not waiting or not await self.holds.wait_for(
                    waiting, wait=self.options.wait, note=self.note, sleep=self.sleep
                ):
                    break
                waiting = await self._resume()
        except Exception as exc:
            self.fail(exc)
        finally:
            keeper.cancel()
            await asyncio.gather(keeper, return_exceptions=True)
            try:
                await self._wind_up()
            finally:
                self.db.close()
        summary = self.summary()
        self.reporter.finish(summary)
        if self.failure is not None:
            raise self.failure
        return summary

    async def _resume(self) -> list[BatchJob]:
        """Carry on every open job of this backend that no other process holds; returns those
        another process holds (it may have died: its hold runs out then)."""
        waiting: list[BatchJob] = []

        def going() -> bool:
            return self.reason is None

        async for job in self.holds.resumable(self.api, waiting, going=going, note=self.note):
            await self._drive(JobDriver(self, self.api, job))
        return waiting

    async def adopt(self, job: BatchJob, batch_id: str, note: str) -> bool:
        """Record ``batch_id`` as ``job``'s batch (see :meth:`Holds.adopt`): :meth:`_resume`
        drives it next."""
        return await self.holds.adopt(job, batch_id, note)

    async def _drive(self, driver: JobDriver) -> Ended:
        try:
            ended = await driver.drive()
        except BackendError as exc:
            raise BackendError(f"{exc}. {failed_job(driver.job)}", backend=exc.backend) from exc
        if ended in (Ended.LEFT, Ended.HELD):
            self.left.append(driver.job)
        await self.export_locked()
        self.stats = await self.db(self.store.stats)
        return ended

    async def cancel(self, ids: Collection[int], *, wait: bool) -> list[tuple[BatchJob, Ended]]:
        """Cancel the open jobs ``ids`` (none: every open job of this backend); see
        :meth:`JobDriver.cancel`. Returns each job as it ended, and how."""
        self.inflight.open()
        keeper = asyncio.create_task(self._keep())
        done: list[tuple[BatchJob, Ended]] = []
        try:
            every = await self.db(self.store.jobs, open_only=False)
            for job in cancellable(every, ids, self.api):
                if not await self.holds.take(job.id):
                    raise LedgerError(
                        f"batch job {job.id} is driven by another process ({job.holder}): "
                        "stop it first (Ctrl-C leaves the batch running), then cancel"
                    )
                driver = JobDriver(self, self.api, job)
                ended = await driver.cancel(wait=wait)
                done.append((driver.job, ended))
                if self.reason is not None:
                    break
        finally:
            keeper.cancel()
            await asyncio.gather(keeper, return_exceptions=True)
            try:
                await self._wind_up()
            finally:
                self.db.close()
        return done

    # -- a round ---------------------------------------------------------------------------

    async def _open_round(self) -> JobDriver | None:
        """Lease the round's items to a new job, compose and record their requests."""
        limit = self._round_limit()
        if limit < 1:
            return None
        draft = JobDraft(self.api.name, self.api.model, self.driver, self.holds.holder)
        opened = await self.holds.open(draft, limit=limit, excluding=tuple(self.set_aside))
        if opened is None:
            return None
        job, keys = opened
        crash_point("leased")
        lines, requests = await self.db(
            compose_round, self.store, self.quest, self.api, self.policy, job, keys,
            taken=self.taken, max_items=self.options.budget.max_items,
        )  # fmt: skip
        if not requests:  # every item it leased is past --max-items: the run is done
            await self.holds.discard(job.id, "no request")
            return None
        job = await self.holds.fill(job.id, requests)
        crash_point("composed")
        self.tally.turns_started += len(requests)
        self.tally.items_started += len({r.key for r in requests} - self.taken)
        self.taken.update(r.key for r in requests)
        return JobDriver(self, self.api, job, lines, requests)

    def _round_limit(self) -> int:
        """How many items the next round may take: the round size, within the caps (items
        past ``max_items`` are given back as the round is composed)."""
        budget, limit = self.options.budget, self.options.round_size
        if budget.max_turns is not None:
            limit = min(limit, budget.max_turns - self.tally.turns_started)
        if budget.max_items is not None:
            limit = min(limit, budget.max_items)
        return limit

    # -- what a job asks of the run ----------------------------------------------------------

    def counted(self, recorded: Recorded) -> Flow:
        """Count a recorded result, report it, and apply the breakers and set-aside."""
        self.count_turn(recorded, backend=self.api.name, seed=recorded.attempt.notes.seed or 0,
                        cause=None)  # fmt: skip
        a, key = recorded.attempt, recorded.item.key
        if a.kind is AttemptKind.GENERATION_ERROR:
            self.errors_in_row[key] = self.errors_in_row.get(key, 0) + 1
            self._maybe_set_aside(recorded)
        elif a.judged:
            self.errors_in_row.pop(key, None)
        if not a.judged:
            trip = tripped(self.tally, self.options, a)
            if trip is not None:
                self.stop(*trip)
                return Flow.HALT if trip[0] is StopReason.JUDGE_BREAKER else Flow.NO_ERRORS
        return Flow.NO_ERRORS if self.reason is StopReason.BREAKER else Flow.GO

    def _maybe_set_aside(self, recorded: Recorded) -> None:
        item, errors = recorded.item, self.errors_in_row[recorded.item.key]
        if item.key in self.set_aside or not sets_aside(self.options, errors):
            return
        self.set_aside.append(item.key)
        self.report_aside(item, errors, recorded.attempt.error)

    def report(self, event: BatchEvent | ResultsEvent) -> None:
        if isinstance(event, ResultsEvent):
            self.reporter.results(event)
        else:
            self.reporter.batch(event)

    def note(self, text: str) -> None:
        self.reporter.note(text)

    def scrub(self, text: str) -> str:
        return self._redactor(text)

    async def _keep(self) -> None:
        """Renew the holds of the jobs this run drives, and redraw, until cancelled."""
        try:
            while True:
                await asyncio.sleep(min(0.25, self.options.beat))
                await self.holds.renew()
                self.reporter.tick(self.status())
        except LedgerError as exc:
            self.fail(exc)

    async def _wind_up(self) -> None:
        await self.db(self.holds.give_up)
        await self.export_locked(final=True)
        self.stats = await self.db(self.store.stats)

    def summary(self) -> Summary:
        """How the run ended, and the jobs it left running at the provider."""
        summary = super().summary()
        if not self.left:
            return summary
        left = left_open(self.left)
        if summary.reason is StopReason.INTERRUPTED:
            by = f" by {self.signal}" if self.signal else ""
            message = f"stopped{by}: {left}"
        else:
            message = f"{summary.message}; {left}"
        return dataclasses.replace(summary, message=message)
