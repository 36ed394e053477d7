"""The open batch jobs a run finds: which ones ``reins batch cancel`` cancels, and what a run
says of those it leaves open and of those another backend sent."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from reins.backends.batch import BatchAPI
from reins.errors import ConfigError, NotFound
from reins.store.jobs import BatchJob


def cancellable(every: Sequence[BatchJob], ids: Collection[int], api: BatchAPI) -> list[BatchJob]:
    """The jobs of ``every`` to cancel: those in ``ids`` (none: every open one), oldest first.

    Raises:
        NotFound: an id names no job. ConfigError: a job named is final, or a job to cancel
        was sent to another backend or model than ``api``'s.
    """
    by_id = {j.id: j for j in every}
    for n in ids:
        if n not in by_id:
            raise NotFound(f"no batch job {n} in this ledger: `reins batch status` lists them")
        if by_id[n].state.final:
            raise ConfigError(f"batch job {n} is {by_id[n].state} already: nothing to cancel")
    jobs = [j for j in every if not j.state.final and (not ids or j.id in ids)]
    for job in jobs:
        if (job.backend, job.model) != (api.name, api.model):
            raise ConfigError(
                f"batch job {job.id} was sent to {job.backend}:{job.model}: cancel it with "
                f"--model {job.backend}:{job.model} (and its options: base_url, key_env)"
            )
    return jobs


def other_backend(job: BatchJob) -> str:
    """What a run says of an open job it leaves alone: another backend or model sent it."""
    return (
        f"batch job {job.id} was sent to {job.backend}:{job.model}; its {job.requests} item(s) "
        f"stay leased to it. Carry it on with --model {job.backend}:{job.model}, or cancel it "
        "with `reins batch cancel`"
    )


def left_open(left: Sequence[BatchJob]) -> str:
    """What a run says, as it ends, of the jobs it leaves open."""
    jobs = ", ".join(f"{j.id} ({j.backend} {j.batch_id or 'unsent'})" for j in left)
    return (
        f"batch job(s) {jobs} still open, {sum(j.requests for j in left)} item(s) leased to "
        "them: run the same command again to record their results, or cancel them with "
        "`reins batch cancel`"
    )


def failed_job(job: BatchJob) -> str:
    """What a run says of the job it was driving when the provider failed it: discarded (it
    was never sent, its items are TODO again), or still open."""
    if job.state.final:
        return (
            f"Batch job {job.id} was never sent: it is {job.state}, its {job.requests} item(s) "
            "TODO again, for `reins loop` without --batch if the server has no batch API"
        )
    return (
        f"Batch job {job.id} ({job.state}) stays open: run the same command again to carry it "
        "on, or cancel it with `reins batch cancel`"
    )
