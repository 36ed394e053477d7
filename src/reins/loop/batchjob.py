"""One batch job, driven to its end: sent, polled, its results judged and recorded.

Every step is written to the ledger as it is taken (:mod:`reins.store.jobs`), so a process
killed at any moment (the crash points of :mod:`reins.loop.crashpoint`) leaves a job the next
run carries on from where the ledger says it stands:

- ``leased``: its requests were never recorded: it is discarded, its items given back.
- ``composed`` / ``uploaded``: something may have been sent. The requests file is looked for
  by its name, and every batch at the provider that may be the job's is tried
  (:mod:`reins.loop.recover`: by its metadata or file at OpenAI, by its size and time and then
  the custom ids of its results at Anthropic); what is found is carried on. Only when no batch
  can hold them are the requests sent, with the prompts composed again from the log (a pure
  function of it: a prompt that composes differently now is not sent, the job is discarded).
- ``sent``: the batch is polled, and its results recorded.

Its results are recorded by :class:`reins.loop.collect.JobRecorder`, each as one turn.
"""

from __future__ import annotations

from reins.backends.batch import BatchAPI, BatchLine, RemoteBatch, Results
from reins.errors import BackendError
from reins.loop.collect import Ended, JobRecorder, Run
from reins.loop.crashpoint import crash_point
from reins.loop.options import MAX_POLL, POLL_FAILURES, POLL_GROWTH
from reins.loop.recover import Found, Search
from reins.store.jobs import BatchJob, BatchRequest, JobState
from reins.turn.compose import compose

CREATE_TRIES = 3
Sent = tuple[RemoteBatch, Results | None]  # the job's batch, and its results if read already


class JobDriver(JobRecorder):
    """Drives ``job`` with ``api``; ``lines`` and ``requests`` are its requests as just
    composed and recorded (a fresh job: nothing of it was sent), None for a job found open in
    the ledger."""

    def __init__(
        self,
        run: Run,
        api: BatchAPI,
        job: BatchJob,
        lines: list[BatchLine] | None = None,
        requests: list[BatchRequest] | None = None,
    ) -> None:
        super().__init__(run, api, job, requests)
        self.fresh = lines is not None
        self._lines = lines

    async def drive(self) -> Ended:
        """Send the job if it was not, wait for its batch, record its results."""
        if self.job.state is JobState.LEASED:
            return await self.discard("its requests were never recorded")
        got: Results | None = None
        if self.job.state in (JobState.COMPOSED, JobState.UPLOADED):
            if self.run.stopping:
                return await self._stopped("the run stopped before it was sent")
            sent = await self.send()
            if isinstance(sent, Ended):
                return sent
            remote, got = sent
        else:
            assert self.job.batch_id is not None
            remote = await self.api.retrieve(self.job.batch_id)
            self.report("resumed", remote)
        ended = await self.wait(remote)
        if ended is None:
            self.report("left", remote, "still running at the provider")
            return Ended.LEFT
        return await self.collect(ended, got if ended is remote else None)

    async def cancel(self, *, wait: bool) -> Ended:
        """Cancel the job: at the provider if it was sent (or a killed process sent it), then
        with ``wait`` record what finished before the cancel took; else leave that to the next
        run. A job never sent is discarded."""
        if self.job.state is JobState.LEASED:
            return await self.discard("cancelled before its requests were recorded")
        if self.job.state in (JobState.COMPOSED, JobState.UPLOADED):
            file_id = self.job.file_id
            if file_id is None and self.api.uploads:
                file_id = await self.api.find_upload(self.job.tag)
            found = await Search(self.run, self.api, self.job)(file_id, wait=wait)
            if found is None:
                return Ended.LEFT
            if found.remote is None and found.running:
                ids = ", ".join(r.id for r in found.running)
                self.report("left", None, f"it may have been sent as {self.api.name} batch(es) "
                            f"{ids}, still running: only their results say whose they are, "
                            "once they end: a cancel that waits waits for them")  # fmt: skip
                return Ended.LEFT
            if found.remote is None:
                return await self.discard("cancelled before it was sent")
            self.job = await self._advance(JobState.SENT, file_id=file_id, batch_id=found.remote.id)
        assert self.job.batch_id is not None
        try:
            remote = await self.api.cancel(self.job.batch_id)
        except BackendError as exc:
            if exc.retryable:
                raise
            remote = await self.api.retrieve(self.job.batch_id)  # it ended: nothing to cancel
        if not remote.ended:
            self.job = await self._advance(JobState.SENT, note=remote.status)
            self.report("poll", remote, "cancel requested")
        ended = await self.wait(remote) if wait else remote if remote.ended else None
        if ended is None:
            return Ended.LEFT
        return await self.collect(ended)

    # -- sending -----------------------------------------------------------------------------

    async def send(self) -> Sent | Ended:
        """Send the job's batch, or carry on what a killed process sent: the batch, and its
        results if they were read to find it; else how the job ended (discarded, or left: the
        run stopped while a batch that may be its own still ran)."""
        file_id = self.job.file_id
        if self.api.uploads:
            if file_id is None and not self.fresh:
                file_id = await self.api.find_upload(self.job.tag)
            if file_id is None:
                lines = await self.lines()
                if lines is None:
                    return Ended.DISCARDED
                file_id = await self._upload(lines)
                crash_point("uploaded")
            self.job = await self._advance(JobState.UPLOADED, file_id=file_id)
            crash_point("upload-recorded")
        found = Found(None) if self.fresh else await self._search(file_id)
        if found is None:
            return await self._stopped("the run stopped while a batch that may be its own ran")
        if found.remote is None and self.run.stopping:  # stopped while uploading: make none
            await self.discard("the run stopped before its batch was made")
            return Ended.DISCARDED
        remote, got = found.remote, found.results
        for attempt in range(1, CREATE_TRIES + 1):
            if remote is not None:
                break
            made = await self._create(file_id, last=attempt == CREATE_TRIES)
            if isinstance(made, Ended):
                return made
            if made is not None:
                remote = made
                break
            # The failure may have come after the batch was made: look before trying again.
            found = await self._search(file_id)
            if found is None:
                return await self._stopped("the run stopped while its batch may have been made")
            remote, got = found.remote, found.results
        assert remote is not None
        crash_point("created")
        self.job = await self._advance(JobState.SENT, batch_id=remote.id, note=remote.status)
        crash_point("sent")
        self.report("sent", remote)
        return remote, got

    async def _upload(self, lines: list[BatchLine]) -> str:
        """Upload the requests file. No batch can be made of a file the provider does not
        hold, so an upload that fails (a server with no Batch API answers 404) discards the
        job, its items given back at once, before the error is raised."""
        try:
            return await self.api.upload(self.job.tag, lines)
        except BackendError as exc:
            await self.discard(f"its requests could not be sent: {exc}")
            raise

    async def _create(self, file_id: str | None, *, last: bool) -> RemoteBatch | Ended | None:
        """Make the batch: it, or how the job ended (the provider refused it), or None after
        a transient failure (raised on the ``last`` try)."""
        lines = [] if self.api.uploads else await self.lines()
        if lines is None:
            return Ended.DISCARDED
        self.fresh = False  # from here on the provider may hold a batch of it: never discard it
        try:
            return await self.api.create(self.job.tag, file_id, lines)
        except BackendError as exc:
            if not exc.retryable:
                await self.refused(str(exc))
                return Ended.DISCARDED
            if last:
                raise
        await self.run.sleep(self.run.poll)
        return None

    async def _search(self, file_id: str | None) -> Found | None:
        return await Search(self.run, self.api, self.job)(file_id)

    async def _stopped(self, why: str) -> Ended:
        """The run stops before the job is sent: a job this process composed and never tried
        to send is discarded (nothing of it left the process); any other is left for the next
        run, since a batch of it may be at the provider."""
        if self.fresh:
            return await self.discard(why)
        self.report("left", None, why)
        return Ended.LEFT

    async def lines(self) -> list[BatchLine] | None:
        """The job's requests, composed again from the log if this process did not compose
        them; None (and the job discarded) when a prompt now composes differently."""
        if self._lines is not None:
            return self._lines
        lines = await self.run.db(self._compose_again, await self.requests())
        if lines is None:
            await self.discard("its prompts compose differently now (the quest or the log moved)")
            return None
        self._lines = lines
        return lines

    def _compose_again(self, requests: list[BatchRequest]) -> list[BatchLine] | None:
        run, lines = self.run, []
        for r in requests:
            item, log = run.store.snapshot(r.key)
            if item.turns != r.turns or item.lease_owner != self.job.owner:
                return None
            prompt = compose(run.quest, item, log, policy=run.policy)
            if prompt.digest() != r.prompt_digest:
                return None
            lines.append(BatchLine(r.custom_id, prompt, r.seed))
        return lines

    # -- waiting ---------------------------------------------------------------------------

    async def wait(self, remote: RemoteBatch) -> RemoteBatch | None:
        """Poll until the batch ends (None: the run stopped first)."""
        delay, failures = self.run.poll, 0
        while not remote.ended:
            if self.run.stopping or not await self.run.sleep(delay):
                return None
            delay = min(delay * POLL_GROWTH, max(MAX_POLL, self.run.poll))
            try:
                polled = await self.api.retrieve(remote.id)
            except BackendError as exc:
                failures += 1
                if not exc.retryable or failures >= POLL_FAILURES:
                    raise
                self.run.note(f"batch job {self.job.id}: polling failed ({exc}); trying again")
                continue
            failures = 0
            if (polled.status, polled.counts) != (remote.status, remote.counts):
                self.report("poll", polled)
            if polled.status != remote.status:
                self.job = await self._advance(JobState.SENT, note=polled.status)
            remote = polled
        return remote
