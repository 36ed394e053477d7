"""Finding at the provider what a killed process sent for a job: every candidate tried first.

A job whose requests are recorded but whose provider batch is not (``composed``, ``uploaded``)
may have been sent all the same: the process that made the batch may have died before it
recorded the provider's answer. Before its requests go out, every batch at the provider that
may hold them is tried, so that nothing a provider already has is paid for twice:

- OpenAI keeps the job's tag in a batch's metadata and names the requests file after it: a
  batch that carries the tag, or is made of the job's file, is the job's.
- Anthropic keeps nothing on a batch: every batch of the job's size made since its requests
  were recorded is a candidate, and only its results tell whose it is (each custom id begins
  with the tag of the job that sent it), once it has ended. A candidate still running is
  polled until it ends, as a sent batch is; nothing is sent meanwhile.

An ended candidate whose custom ids name another open job of the ledger is recorded as that
job's batch (unless a live process holds that job: it finds the batch itself), so its results
are used for the requests they answer; one that no job of the ledger sent is passed over. The
requests are sent only once no candidate is left that could hold them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from reins.backends.batch import BatchAPI, RemoteBatch, Results
from reins.errors import BackendError
from reins.loop.collect import Run
from reins.loop.options import MAX_POLL, POLL_FAILURES, POLL_GROWTH
from reins.loop.rounds import tag_of
from reins.store.jobs import BatchJob, JobState

SHOWN = 5  # candidates a note names at most


@dataclass(frozen=True, slots=True)
class Found:
    """What the provider holds of a job: ``remote``, its batch (None: no batch holds its
    requests, they may be sent), with its ``results`` when they were read to tell whose it
    was; ``running``: the candidates not ended yet, when the search did not wait for them."""

    remote: RemoteBatch | None
    results: Results | None = None
    running: tuple[RemoteBatch, ...] = ()


class Tried(StrEnum):
    """What one candidate turned out to be."""

    OURS = "ours"
    OTHER = "other"  # recorded as another job's, another job's now, or no job of the ledger's
    RUNNING = "running"  # not ended: its results cannot say yet


class Search:
    """The search for ``job``'s batch at the provider behind ``api``, for ``run``."""

    def __init__(self, run: Run, api: BatchAPI, job: BatchJob) -> None:
        self.run, self.api, self.job = run, api, job

    async def __call__(self, file_id: str | None, *, wait: bool = True) -> Found | None:
        """The job's batch, or none; with ``wait``, candidates still running are polled until
        they end (None: the run stopped first), else they are returned unsettled."""
        job = self.job
        since = job.composed_at if job.composed_at is not None else job.expires_at - 90_000
        candidates = await self.api.find(job.tag, file_id, since=since, total=job.requests)
        delay, failures, told = self.run.poll, 0, False
        while True:
            running = []
            for remote in candidates:
                tried, results = await self._try(remote, file_id)
                if tried is Tried.OURS:
                    return Found(remote, results)
                if tried is Tried.RUNNING:
                    running.append(remote)
            if not running:
                return Found(None)
            if not wait:
                return Found(None, running=tuple(running))
            if not told:
                told = True
                self._waiting(running)
            if self.run.stopping or not await self.run.sleep(delay):
                return None
            delay = min(delay * POLL_GROWTH, max(MAX_POLL, self.run.poll))
            candidates = []
            for remote in running:
                try:
                    candidates.append(await self.api.retrieve(remote.id))
                except BackendError as exc:
                    failures += 1
                    if not exc.retryable or failures >= POLL_FAILURES:
                        raise
                    candidates.append(remote)

    async def _try(self, remote: RemoteBatch, file_id: str | None) -> tuple[Tried, Results | None]:
        """Whether ``remote`` is the job's batch (with its results, if they were read)."""
        job = self.job
        jobs = await self.run.db(self.run.store.jobs, open_only=False)
        if any(j.batch_id == remote.id for j in jobs):
            return Tried.OTHER, None  # recorded already: a job's own batch
        if remote.tag == job.tag or (file_id is not None and remote.input_file_id == file_id):
            return Tried.OURS, None  # the provider keeps the job's tag or file: exact
        if remote.tag is not None:
            return Tried.OTHER, None  # another job's tag in its metadata
        if not remote.ended:
            return Tried.RUNNING, None
        results = await self.api.results(remote)
        ids = [r.custom_id for r in results.results] + [b.custom_id or "" for b in results.bad]
        tags = {tag_of(cid) for cid in ids}
        if job.tag in tags:
            return Tried.OURS, results
        for other in jobs:
            if other.tag in tags and other.state in (JobState.COMPOSED, JobState.UPLOADED):
                await self._hand_over(other, remote)
        return Tried.OTHER, None

    async def _hand_over(self, other: BatchJob, remote: RemoteBatch) -> None:
        """Record ``remote`` as ``other``'s batch: its results are that job's requests'."""
        note = f"found by batch job {self.job.id}, whose search its results' custom ids named"
        if await self.run.adopt(other, remote.id, note):
            self.run.note(
                f"batch job {self.job.id}: {self.api.name} batch {remote.id}, made by a process "
                f"killed before it recorded it, holds the requests of batch job {other.id}: "
                f"recorded as job {other.id}'s, so its results are used, not sent for again"
            )

    def _waiting(self, running: list[RemoteBatch]) -> None:
        ids = ", ".join(r.id for r in running[:SHOWN])
        more = f" and {len(running) - SHOWN} more" if len(running) > SHOWN else ""
        self.run.note(
            f"batch job {self.job.id}: {len(running)} {self.api.name} batch(es) of its size "
            f"made since its requests were recorded ({ids}{more}) may hold them: a process "
            "killed before it recorded its batch may have sent it. Only their results say "
            "whose they are, once they end: waiting for them, nothing is sent again meanwhile"
        )
