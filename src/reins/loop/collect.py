"""Recording a batch job's results: each one judged and recorded as one turn, then the job closed.

A result is recorded as one turn exactly as the loop records one (:func:`reins.turn.record`),
claimed for the job's lease with the turn count its prompt was composed on: a result for an
item that moved since is refused, and a result recorded before a crash is refused the second
time, so no result is ever recorded twice. Errored and expired requests are generation
errors; a cancelled one is no turn at all (its item is given back with the job).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Protocol

from reins.backends.batch import BatchAPI, BatchOutcome, BatchResult, RemoteBatch, Results
from reins.errors import IllegalTransition, LeaseConflict, NotTodo, TurnMoved
from reins.gate import excerpt
from reins.loop.crashpoint import crash_point
from reins.loop.events import BatchEvent, ResultsEvent
from reins.loop.generate import ERROR_LIMIT, usage_of
from reins.loop.ledger_thread import LedgerThread
from reins.loop.recording import DRIVER
from reins.loop.resultlines import Sorted, missing_error, problems, sort
from reins.quest import Quest
from reins.store.jobs import BatchJob, BatchRequest, JobState
from reins.store.model import Usage
from reins.store.protocol import Store
from reins.turn.failures import GenerationFailure
from reins.turn.judge import judge
from reins.turn.record import Origin, Recorded, record
from reins.values import Completion

REFUSED = (TurnMoved, NotTodo, LeaseConflict, IllegalTransition)


class Ended(StrEnum):
    """How driving a job ended."""

    COLLECTED = "collected"  # every result recorded (or refused); the job is closed
    CANCELLED = "cancelled"  # cancelled at the provider; what finished is recorded
    DISCARDED = "discarded"  # nothing was sent (or nothing of it found)
    LEFT = "left"  # the run stopped: the batch runs on at the provider, the job stays open
    HELD = "held"  # the judge breaker tripped: the rest of its results wait at the provider


class Flow(StrEnum):
    """What the run says after counting a recorded turn."""

    GO = "go"
    NO_ERRORS = "no-errors"  # the breaker tripped: record no more generation errors
    HALT = "halt"  # stop recording (the judge breaker, a hard stop)


class Run(Protocol):
    """What a job needs of the run that drives it (:class:`reins.loop.batching.BatchRun`)."""

    store: Store
    quest: Quest
    db: LedgerThread
    policy: str
    driver: str
    poll: float

    @property
    def stopping(self) -> bool: ...

    def sleep(self, seconds: float) -> Awaitable[bool]: ...

    def adopt(self, job: BatchJob, batch_id: str, note: str) -> Awaitable[bool]:
        """Record ``batch_id`` as the provider batch of ``job`` (which another job's search
        found), unless a live process holds the job; whether it was recorded."""
        ...

    def counted(self, recorded: Recorded) -> Flow: ...

    def report(self, event: BatchEvent | ResultsEvent) -> None: ...

    def note(self, text: str) -> None: ...

    def scrub(self, text: str) -> str: ...


@dataclass(slots=True)
class ResultsTally:
    """What collecting one job did."""

    recorded: int = 0
    refused: int = 0  # the item moved since its prompt was composed (or its turn landed)
    canceled: int = 0
    skipped: int = 0  # errors not recorded once the breaker tripped
    # What the results files held besides one result per request (see reins.loop.resultlines).
    odd: Sorted | None = None


class JobRecorder:
    """Records the results of ``job`` (sent with ``api``) for ``run``; keeps the job as the
    ledger last wrote it."""

    def __init__(
        self, run: Run, api: BatchAPI, job: BatchJob, requests: list[BatchRequest] | None = None
    ) -> None:
        self.run, self.api, self.job = run, api, job
        self.done = 0
        self._requests = requests  # as this process recorded them; else read from the ledger

    async def requests(self) -> list[BatchRequest]:
        """The job's requests: as composed by this process, else as the ledger keeps them."""
        if self._requests is None:
            self._requests = await self.run.db(self.run.store.job_requests, self.job.id)
        return self._requests

    async def discard(self, why: str) -> Ended:
        self.job = await self._advance(JobState.DISCARDED, note=why)
        self.report("discarded", None, why)
        return Ended.DISCARDED

    async def refused(self, error: str) -> Ended:
        """The provider refused the batch itself: each request's turn is a generation error
        (no try used) until the breaker trips, then the job is discarded."""
        for r in await self.requests():
            if await self._record(r, None, error) in (Flow.HALT, Flow.NO_ERRORS):
                break
        return await self.discard(f"the provider refused the batch: {error}")

    async def collect(self, remote: RemoteBatch, got: Results | None = None) -> Ended:
        """Record every result of the ended batch (``got``: its results, if they were read
        already), then close the job."""
        if got is None:
            got = await self.api.results(remote)
        crash_point("downloaded")
        requests = {r.custom_id: r for r in await self.requests()}
        odd = sort(got, requests)
        tally = ResultsTally(odd=odd)
        self._tell(odd, remote)
        flow = Flow.GO
        for request, result in odd.mine:
            flow = await self._result(request, result, remote, tally, flow)
            if flow is Flow.HALT:
                return Ended.LEFT if self.run.stopping else Ended.HELD
        if got.results and not odd.mine and requests:
            return await self._close(remote, tally, "none of its results is this job's")
        answered = odd.answered
        for cid, request in requests.items():
            line = odd.unreadable.get(cid)
            if cid in answered:
                continue
            if remote.cancelled and line is None:
                tally.canceled += 1
                continue
            error = missing_error(self.api.name, remote, line, odd.unnamed)
            flow = await self._result(request, BatchResult(cid, BatchOutcome.ERRORED, error=error),
                                      remote, tally, flow)  # fmt: skip
            if flow is Flow.HALT:
                return Ended.LEFT if self.run.stopping else Ended.HELD
        return await self._close(remote, tally, None)

    def _tell(self, odd: Sorted, remote: RemoteBatch) -> None:
        """Report each kind of trouble in the results files, once for the job."""
        job = self.job
        for p in problems(odd):
            message = self.run.scrub(f"batch job {job.id}: {p.message}")
            self.run.report(ResultsEvent(job.id, job.backend, remote.id, p.kind, p.count,
                                         p.lines, p.custom_ids, message))  # fmt: skip

    async def _result(
        self, request: BatchRequest, result: BatchResult, remote: RemoteBatch, tally: ResultsTally,
        flow: Flow,
    ) -> Flow:  # fmt: skip
        if result.outcome is BatchOutcome.CANCELED:
            tally.canceled += 1
            return flow
        completion = result.completion if result.outcome is BatchOutcome.SUCCEEDED else None
        if completion is None and flow is Flow.NO_ERRORS:
            tally.skipped += 1
            return flow
        error = (
            None if completion is not None else result.error or f"batch request {result.outcome}"
        )
        counted = await self._record(request, completion, error, remote.id)
        if counted is None:
            tally.refused += 1
            return flow
        tally.recorded += 1
        crash_point("result")
        if counted is Flow.HALT:
            return Flow.HALT
        return Flow.NO_ERRORS if Flow.NO_ERRORS in (counted, flow) else Flow.GO

    async def _record(
        self, request: BatchRequest, completion: Completion | None, error: str | None,
        batch_id: str | None = None,
    ) -> Flow | None:  # fmt: skip
        """Record one result as one turn (None: refused, the item moved); the run's word."""
        if completion is not None and self.job.composed_at is not None:
            completion = replace(completion, latency=max(time.time() - self.job.composed_at, 0.0))
        recorded = await self.run.db(self._record_now, request, completion, error, batch_id)
        if recorded is None:
            return None
        self.done += 1
        if self.run.stopping:
            self.run.counted(recorded)
            return Flow.HALT
        return self.run.counted(recorded)

    def _record_now(
        self, request: BatchRequest, completion: Completion | None, error: str | None,
        batch_id: str | None,
    ) -> Recorded | None:  # fmt: skip
        """On the ledger thread: judge the answer and record the turn, pinned to the turn
        count the prompt was composed on."""
        run = self.run
        item = run.store.get(request.key)
        if item.turns != request.turns or item.state.terminal:
            return None  # it moved since (or this very result landed before a crash)
        origin = self._origin(request, completion, batch_id)
        try:
            if completion is None:
                failure = GenerationFailure(excerpt(run.scrub(error or "no answer"), ERROR_LIMIT))
                return record(run.store, run.quest, item, failure, origin, driver=run.driver,
                              owner=self.job.owner)  # fmt: skip
            verdict, text = judge(run.quest, item, completion.text)
            return record(run.store, run.quest, item, verdict, origin, driver=run.driver,
                          owner=self.job.owner, submission=text)  # fmt: skip
        except REFUSED:
            return None

    def _origin(
        self, request: BatchRequest, completion: Completion | None, batch_id: str | None
    ) -> Origin:
        """How the turn was made: the prompt's digest and seed as composed, the usage at the
        batch price, the provider batch it came in."""
        model = None
        if completion is not None and completion.model and completion.model != self.api.name:
            model = completion.model
        notes = DRIVER.notes(seed=request.seed, model=model)
        usage = usage_of(self.api.name, completion) if completion else Usage(self.api.name)
        return Origin(
            policy=self.run.policy,
            prompt_digest=request.prompt_digest,
            usage=usage,
            started_at=self.job.created_at,
            notes=replace(notes, batch=batch_id or self.job.batch_id),
            gate_digest=self.run.quest.gate_digest,
        )

    async def _close(self, remote: RemoteBatch, tally: ResultsTally, why: str | None) -> Ended:
        state = JobState.CANCELLED if remote.cancelled else JobState.COLLECTED
        note = f"{remote.status}: {tally.recorded} recorded"
        odd = tally.odd or Sorted()
        extra = [
            f"{n} {what}"
            for n, what in (
                (tally.refused, "refused (the item had moved)"),
                (tally.canceled, "canceled"),
                (tally.skipped, "errors not recorded (the breaker tripped)"),
                (len(odd.repeated), "repeated custom ids (the first result of each used)"),
                (len(odd.foreign), "results of requests this job did not send"),
                (sum(not b.cut for b in odd.bad), "malformed lines"),
                (sum(b.cut for b in odd.bad), "lines cut off"),
            )
            if n
        ]
        note = "; ".join([note, *extra, *([why] if why else [])])
        self.job = await self._advance(state, note=note)
        crash_point("collected")
        self.report("cancelled" if remote.cancelled else "collected", remote, note)
        return Ended.CANCELLED if remote.cancelled else Ended.COLLECTED

    async def _advance(
        self, state: JobState, *, file_id: str | None = None, batch_id: str | None = None,
        note: str | None = None,
    ) -> BatchJob:  # fmt: skip
        return await self.run.db(self.run.store.advance_job, self.job.id, state, file_id=file_id,
                                 batch_id=batch_id, note=note)  # fmt: skip

    def report(self, phase: str, remote: RemoteBatch | None, message: str = "") -> None:
        job = self.job
        elapsed = time.time() - job.composed_at if job.composed_at is not None else 0.0
        self.run.report(
            BatchEvent(
                phase=phase,
                job=job.id,
                backend=job.backend,
                model=job.model,
                batch_id=remote.id if remote is not None else job.batch_id,
                status=remote.status if remote is not None else None,
                requests=job.requests,
                done=self.done,
                counts=dict(remote.counts) if remote is not None else {},
                elapsed=max(elapsed, 0.0),
                message=message,
            )
        )
