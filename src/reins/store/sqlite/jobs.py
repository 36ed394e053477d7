"""Batch jobs in SQLite: a job and the leases of its items in one write transaction."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Collection, Sequence

from reins.store.codec import now_iso
from reins.store.jobrows import JOB_COLUMNS, REQUEST_COLUMNS, job_of, request_of, request_row
from reins.store.jobs import BatchJob, BatchRequest, JobDraft, JobState, owner_of, refusal, sources
from reins.store.sqlite.connection import Database

_FREE = (
    "SELECT 1 FROM items WHERE state = 'TODO' AND (lease_owner IS NULL OR lease_expires <= ?)"
    "{skip} LIMIT 1"
)
_INSERT = (
    "INSERT INTO batch_jobs (tag, backend, model, driver, state, created_at, updated_at, "
    "expires_at, holder, held_until) VALUES (?, ?, ?, ?, 'leased', ?, ?, ?, ?, ?) "
    f"RETURNING {JOB_COLUMNS}"
)
# The oldest free TODO items, leased in one statement (SQLite returns them in no set order).
_LEASE = (
    "UPDATE items SET lease_owner = ?, lease_expires = ?, lease_token = ? WHERE id IN ("
    "SELECT id FROM items WHERE state = 'TODO' AND (lease_owner IS NULL OR lease_expires <= ?)"
    "{skip} ORDER BY id LIMIT ?) RETURNING id, key"
)
_RELEASE = (
    "UPDATE items SET lease_owner = NULL, lease_expires = NULL, lease_token = NULL "
    "WHERE lease_owner = ?"
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
    # One JSON parameter however many keys are excluded (SQLite caps the number of parameters).
    skip = " AND key NOT IN (SELECT value FROM json_each(?))" if excluding else ""
    keys = (json.dumps(list(excluding)),) if excluding else ()
    stamp = now_iso()
    with db.write() as conn:
        if conn.execute(_FREE.format(skip=skip), (now, *keys)).fetchone() is None:
            return None
        opened = job_of(
            conn.execute(
                _INSERT,
                (tag, job.backend, job.model, job.driver, stamp, stamp, now + ttl, job.holder,
                 now + hold),
            ).fetchone()
        )  # fmt: skip
        token = os.urandom(6).hex()
        rows = conn.execute(
            _LEASE.format(skip=skip), (owner_of(opened.id), now + ttl, token, now, *keys, limit)
        ).fetchall()
    return opened, [key for _, key in sorted(rows)]


def fill_job(db: Database, job: int, requests: Sequence[BatchRequest], *, now: float) -> BatchJob:
    with db.write() as conn:
        row = conn.execute(
            "UPDATE batch_jobs SET state = 'composed', requests = ?, composed_at = ?, "
            f"updated_at = ? WHERE id = ? AND state = 'leased' RETURNING {JOB_COLUMNS}",
            (len(requests), now, now_iso(), job),
        ).fetchone()
        if row is None:
            raise refusal(job, _state(conn, job), JobState.COMPOSED)
        conn.executemany(
            f"INSERT INTO batch_requests (job_id, {REQUEST_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
            (request_row(job, r) for r in requests),
        )
    return job_of(row)


def advance_job(
    db: Database,
    job: int,
    state: JobState,
    *,
    file_id: str | None,
    batch_id: str | None,
    note: str | None,
) -> BatchJob:
    allowed = sources(state)
    marks = ", ".join("?" for _ in allowed)
    with db.write() as conn:
        row = conn.execute(
            "UPDATE batch_jobs SET state = ?, file_id = coalesce(?, file_id), "
            "batch_id = coalesce(?, batch_id), note = coalesce(?, note), updated_at = ? "
            f"WHERE id = ? AND state IN ({marks}) RETURNING {JOB_COLUMNS}",
            (state.value, file_id, batch_id, note, now_iso(), job, *allowed),
        ).fetchone()
        if row is None:
            raise refusal(job, _state(conn, job), state)
        if state.final:  # its items' leases end with it
            conn.execute(_RELEASE, (owner_of(job),))
    return job_of(row)


def hold_job(db: Database, job: int, holder: str, *, ttl: float, now: float) -> bool:
    with db.write() as conn:
        return (
            conn.execute(
                "UPDATE batch_jobs SET holder = ?, held_until = ? WHERE id = ? AND (holder IS "
                "NULL OR holder = ? OR held_until IS NULL OR held_until <= ?)",
                (holder, now + ttl, job, holder, now),
            ).rowcount
            == 1
        )


_NOT_FINAL = "state NOT IN ('collected', 'cancelled', 'discarded')"


def holders(db: Database, *, now: float) -> list[str]:
    with db.read() as conn:
        rows = conn.execute(
            f"SELECT DISTINCT holder FROM batch_jobs WHERE {_NOT_FINAL} AND holder IS NOT NULL "
            "AND held_until > ?",
            (now,),
        ).fetchall()
    return [row[0] for row in rows]


def expire(db: Database, holders: Sequence[str], *, now: float) -> int:
    with db.write() as conn:
        return conn.execute(
            f"UPDATE batch_jobs SET held_until = ? WHERE {_NOT_FINAL} AND held_until > ? "
            "AND holder IN (SELECT value FROM json_each(?))",
            (now, now, json.dumps(list(holders))),
        ).rowcount


def jobs(db: Database, *, open_only: bool) -> list[BatchJob]:
    where = f" WHERE {_NOT_FINAL}" if open_only else ""
    with db.read() as conn:
        rows = conn.execute(f"SELECT {JOB_COLUMNS} FROM batch_jobs{where} ORDER BY id").fetchall()
    return [job_of(r) for r in rows]


def job_requests(db: Database, job: int) -> list[BatchRequest]:
    with db.read() as conn:
        rows = conn.execute(
            f"SELECT {REQUEST_COLUMNS} FROM batch_requests WHERE job_id = ? ORDER BY custom_id",
            (job,),
        ).fetchall()
    return [request_of(r) for r in rows]


def _state(conn: sqlite3.Connection, job: int) -> JobState | None:
    row = conn.execute("SELECT state FROM batch_jobs WHERE id = ?", (job,)).fetchone()
    return None if row is None else JobState(row[0])
