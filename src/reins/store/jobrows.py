"""Batch jobs and their requests to and from the rows both engines keep them in.

Apart from :mod:`reins.store.codec` so that a command which touches no batch job (``next``,
``submit``: once per agent turn) does not build the job dataclasses at start-up.
"""

from __future__ import annotations

from typing import Any

from reins.store.jobs import BatchJob, BatchRequest, JobState

# Column order shared by both engines' batch job tables, as every job query selects them.
JOB_COLUMNS = (
    "id, tag, backend, model, driver, state, requests, created_at, updated_at, expires_at, "
    "composed_at, file_id, batch_id, note, holder, held_until"
)
REQUEST_COLUMNS = "custom_id, key, turns, prompt_digest, seed"


def job_of(row: tuple[Any, ...] | Any) -> BatchJob:
    """A batch job from a row in :data:`JOB_COLUMNS` order."""
    return BatchJob(
        id=row[0],
        tag=row[1],
        backend=row[2],
        model=row[3],
        driver=row[4],
        state=JobState(row[5]),
        requests=row[6],
        created_at=row[7],
        updated_at=row[8],
        expires_at=row[9],
        composed_at=row[10],
        file_id=row[11],
        batch_id=row[12],
        note=row[13],
        holder=row[14],
        held_until=row[15],
    )


def request_of(row: tuple[Any, ...] | Any) -> BatchRequest:
    """A job's request from a row in :data:`REQUEST_COLUMNS` order."""
    return BatchRequest(row[0], row[1], row[2], row[3], row[4])


def request_row(job: int, r: BatchRequest) -> tuple[Any, ...]:
    """The request's values, after its job's id, in :data:`REQUEST_COLUMNS` order."""
    return (job, r.custom_id, r.key, r.turns, r.prompt_digest, r.seed)
