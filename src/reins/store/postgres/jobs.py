"""Batch jobs in PostgreSQL: a job and the leases of its items in one transaction.

The items are taken with ``FOR UPDATE SKIP LOCKED``, as a lease takes one, so two processes
opening jobs at once lease disjoint items; the job row is made only when some item was free.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence

from reins.store.codec import now_iso
from reins.store.jobrows import JOB_COLUMNS, REQUEST_COLUMNS, job_of, request_of
from reins.store.jobs import BatchJob, BatchRequest, JobDraft, JobState, owner_of, refusal, sources
from reins.store.postgres.connection import Database, Session

# The job's owner is written as reins.store.jobs.owner_of writes it.
_OPEN = """
WITH free AS (
    SELECT id FROM items
    WHERE state = 'TODO' AND (lease_owner IS NULL OR lease_expires <= %(now)s)
      AND NOT key = ANY(%(excluding)s::text[])
    ORDER BY id LIMIT %(limit)s FOR UPDATE SKIP LOCKED
), job AS (
    INSERT INTO batch_jobs (tag, backend, model, driver, state, created_at, updated_at,
        expires_at, holder, held_until)
    SELECT %(tag)s, %(backend)s, %(model)s, %(driver)s, 'leased', %(stamp)s, %(stamp)s,
        %(until)s, %(holder)s, %(held)s
    WHERE EXISTS (SELECT 1 FROM free)
    RETURNING id
), taken AS (
    UPDATE items i SET lease_owner = 'batch:' || job.id, lease_expires = %(until)s,
        lease_token = %(token)s
    FROM free, job WHERE i.id = free.id
    RETURNING i.id, i.key
)
SELECT * FROM taken ORDER BY id
"""
_RELEASE = (
    "UPDATE items SET lease_owner = NULL, lease_expires = NULL, lease_token = NULL "
    "WHERE lease_owner = %s"
)


def open_job(
    db: Database,
    job: JobDraft,
    tag: str,
    *,
    limit: int,
    ttl: float,
    hold: float,
    now: float,
    excluding: Collection[str],
) -> tuple[BatchJob, list[str]] | None:
    token = os.urandom(6).hex()
    args = {
        "now": now,
        "excluding": list(excluding),
        "limit": limit,
        "tag": tag,
        "backend": job.backend,
        "model": job.model,
        "driver": job.driver,
        "stamp": now_iso(),
        "until": now + ttl,
        "holder": job.holder,
        "held": now + hold,
        "token": token,
    }

    def take(s: Session) -> tuple[BatchJob, list[str]] | None:
        rows, found = s.batch(
            (_OPEN, args),
            (f"SELECT {JOB_COLUMNS} FROM batch_jobs WHERE tag = %s", (tag,)),
            begin="BEGIN",
            commit=True,
        )
        if not rows:
            return None
        return job_of(found[0]), [key for _, key in rows]

    # Never made twice: a lost answer leaves a job whose items stay leased to it until a rerun
    # finds it unfilled and discards it.
    return db.write(
        take, what="opening a batch job", idempotent=False,
        outcome="the job was either opened, and the next run discards it, or not at all",
    )  # fmt: skip


def fill_job(db: Database, job: int, requests: Sequence[BatchRequest], *, now: float) -> BatchJob:
    def fill(s: Session) -> BatchJob:
        (rows,) = s.batch(
            (
                "UPDATE batch_jobs SET state = 'composed', requests = %s, composed_at = %s, "
                f"updated_at = %s WHERE id = %s AND state = 'leased' RETURNING {JOB_COLUMNS}",
                (len(requests), now, now_iso(), job),
            ),
            begin="BEGIN",
        )
        if not rows:
            raise refusal(job, _state(s, job), JobState.COMPOSED)
        s.count(
            f"INSERT INTO batch_requests (job_id, {REQUEST_COLUMNS}) SELECT %s, * FROM "
            "unnest(%s::text[], %s::text[], %s::integer[], %s::text[], %s::bigint[])",
            (
                job,
                [r.custom_id for r in requests],
                [r.key for r in requests],
                [r.turns for r in requests],
                [r.prompt_digest for r in requests],
                [r.seed for r in requests],
            ),
        )
        return job_of(rows[0])

    return db.write(fill, what=f"recording the requests of batch job {job}")


def advance_job(
    db: Database,
    job: int,
    state: JobState,
    *,
    file_id: str | None,
    batch_id: str | None,
    note: str | None,
) -> BatchJob:
    def advance(s: Session) -> BatchJob:
        (rows,) = s.batch(
            (
                "UPDATE batch_jobs SET state = %s, file_id = coalesce(%s, file_id), "
                "batch_id = coalesce(%s, batch_id), note = coalesce(%s, note), updated_at = %s "
                f"WHERE id = %s AND state = ANY(%s::text[]) RETURNING {JOB_COLUMNS}",
                (state.value, file_id, batch_id, note, now_iso(), job, list(sources(state))),
            ),
            begin="BEGIN",
        )
        if not rows:
            raise refusal(job, _state(s, job), state)
        if state.final:  # its items' leases end with it
            s.count(_RELEASE, (owner_of(job),))
        return job_of(rows[0])

    return db.write(advance, what=f"moving batch job {job} to {state}")


def hold_job(db: Database, job: int, holder: str, *, ttl: float, now: float) -> bool:
    changed = db.write(
        lambda s: s.count(
            "UPDATE batch_jobs SET holder = %s, held_until = %s WHERE id = %s AND (holder IS "
            "NULL OR holder = %s OR held_until IS NULL OR held_until <= %s)",
            (holder, now + ttl, job, holder, now),
        ),
        what=f"holding batch job {job}",
    )
    return changed == 1


_NOT_FINAL = "state NOT IN ('collected', 'cancelled', 'discarded')"


def holders(db: Database, *, now: float) -> list[str]:
    rows = db.read(
        lambda s: s.rows(
            f"SELECT DISTINCT holder FROM batch_jobs WHERE {_NOT_FINAL} AND holder IS NOT NULL "
            "AND held_until > %s",
            (now,),
        )
    )
    return [row[0] for row in rows]


def expire(db: Database, holders: Sequence[str], *, now: float) -> int:
    return db.write(
        lambda s: s.count(
            f"UPDATE batch_jobs SET held_until = %s WHERE {_NOT_FINAL} AND held_until > %s "
            "AND holder = ANY(%s::text[])",
            (now, now, list(holders)),
        ),
        what=f"ending the holds of {len(holders)} holder(s) that are gone",
    )


def jobs(db: Database, *, open_only: bool) -> list[BatchJob]:
    where = f" WHERE {_NOT_FINAL}" if open_only else ""
    rows = db.read(lambda s: s.rows(f"SELECT {JOB_COLUMNS} FROM batch_jobs{where} ORDER BY id"))
    return [job_of(r) for r in rows]


def job_requests(db: Database, job: int) -> list[BatchRequest]:
    rows = db.read(
        lambda s: s.rows(
            f"SELECT {REQUEST_COLUMNS} FROM batch_requests WHERE job_id = %s "
            'ORDER BY custom_id COLLATE "C"',
            (job,),
        )
    )
    return [request_of(r) for r in rows]


def _state(s: Session, job: int) -> JobState | None:
    rows = s.rows("SELECT state FROM batch_jobs WHERE id = %s", (job,))
    return JobState(rows[0][0]) if rows else None
