"""Leases in SQLite: one item in progress per owner, expiry returns it to the pool."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Collection, Sequence
from dataclasses import replace

from reins.store.codec import ATTEMPT_COLUMNS, ITEM_COLUMNS, attempt_of, item_of, now_iso
from reins.store.model import Attempt, Lease
from reins.store.sqlite.connection import Database


def lease(
    db: Database, owner: str, *, ttl: float, now: float, excluding: Collection[str]
) -> Lease | None:
    with db.write() as conn:
        return _lease(conn, owner, ttl, now, _skip(excluding))


def lease_many(
    db: Database, owners: Sequence[str], *, ttl: float, now: float, excluding: Collection[str]
) -> list[tuple[Lease, list[Attempt]]]:
    """Each owner's lease as :func:`lease` gives it, in one write transaction, with its log."""
    skip = _skip(excluding)
    out = []
    with db.write() as conn:
        for owner in owners:
            got = _lease(conn, owner, ttl, now, skip)
            if got is None:
                continue
            rows = conn.execute(
                f"SELECT {ATTEMPT_COLUMNS} FROM attempts WHERE item_id = "
                "(SELECT id FROM items WHERE key = ?) ORDER BY turn",
                (got.item.key,),
            ).fetchall()
            out.append((got, [attempt_of(got.item.key, r) for r in rows]))
    return out


def _skip(excluding: Collection[str]) -> tuple[str, tuple[str, ...]]:
    """The clause that passes over ``excluding``, and its argument."""
    # One JSON parameter however many keys are excluded (SQLite caps the number of parameters).
    if not excluding:
        return "", ()
    return " AND key NOT IN (SELECT value FROM json_each(?))", (json.dumps(list(excluding)),)


def _lease(
    conn: sqlite3.Connection, owner: str, ttl: float, now: float, skip: tuple[str, tuple[str, ...]]
) -> Lease | None:
    """One owner's lease, inside the caller's write transaction."""
    row = conn.execute(
        # "+state": look the owner up through items_lease; the state index would walk
        # every TODO item first (300 ms at a million items, 0.06 ms this way).
        f"SELECT {ITEM_COLUMNS} FROM items WHERE lease_owner = ? AND +state = 'TODO' "
        "AND lease_expires > ? ORDER BY id LIMIT 1",
        (owner, now),
    ).fetchone()
    renewed = row is not None
    if row is None:
        row = conn.execute(
            f"SELECT {ITEM_COLUMNS} FROM items WHERE state = 'TODO' "
            f"AND (lease_owner IS NULL OR lease_expires <= ?){skip[0]} ORDER BY id LIMIT 1",
            (now, *skip[1]),
        ).fetchone()
    if row is None:
        return None
    # A new token on every lease, renewals too: a second agent that leases under the same
    # driver name makes the first one's token stale, so its submit fails loudly.
    token = os.urandom(6).hex()
    conn.execute(
        "UPDATE items SET lease_owner = ?, lease_expires = ?, lease_token = ? WHERE key = ?",
        (owner, now + ttl, token, row[0]),
    )
    nexts = conn.execute(
        "INSERT INTO drivers (name, nexts, last_seen) VALUES (?, 1, ?) "
        "ON CONFLICT (name) DO UPDATE SET nexts = nexts + 1, "
        "last_seen = excluded.last_seen RETURNING nexts",
        (owner, now_iso()),
    ).fetchone()[0]
    item = replace(item_of(row), lease_owner=owner, lease_expires=now + ttl, lease_token=token)
    return Lease(item, nexts, renewed, token)


def heartbeat(db: Database, key: str, owner: str, *, ttl: float, now: float) -> bool:
    with db.write() as conn:
        cur = conn.execute(
            "UPDATE items SET lease_expires = ? WHERE key = ? AND lease_owner = ? "
            "AND state = 'TODO'",
            (now + ttl, key, owner),
        )
        return cur.rowcount == 1


def release(db: Database, key: str, owner: str) -> bool:
    with db.write() as conn:
        cur = conn.execute(
            "UPDATE items SET lease_owner = NULL, lease_expires = NULL, lease_token = NULL "
            "WHERE key = ? AND lease_owner = ?",
            (key, owner),
        )
        return cur.rowcount == 1


def release_all(db: Database, owner: str) -> int:
    with db.write() as conn:
        return conn.execute(
            "UPDATE items SET lease_owner = NULL, lease_expires = NULL, lease_token = NULL "
            "WHERE lease_owner = ?",
            (owner,),
        ).rowcount


def soonest_expiry(db: Database, *, excluding: Collection[str]) -> float | None:
    # Expired leases count too: one that ran out since the caller last looked is free now.
    marks = ", ".join("?" for _ in excluding)
    skip = f" AND lease_owner NOT IN ({marks})" if excluding else ""
    with db.read() as conn:
        row = conn.execute(
            "SELECT min(lease_expires) FROM items WHERE lease_owner IS NOT NULL "
            f"AND state = 'TODO'{skip}",
            tuple(excluding),
        ).fetchone()
    return None if row[0] is None else float(row[0])


# The owners in the lease index, one step per owner (a skip-scan: each step seeks the next
# owner), so that 10,000 items leased to one batch job cost one step, not 10,000 rows.
_HOLDERS = """
WITH RECURSIVE o(owner) AS (
    SELECT min(lease_owner) FROM items WHERE lease_owner IS NOT NULL
    UNION ALL
    SELECT (SELECT min(lease_owner) FROM items WHERE lease_owner > o.owner)
    FROM o WHERE o.owner IS NOT NULL
)
SELECT owner FROM o WHERE owner IS NOT NULL LIMIT ?
"""
MOST_HOLDERS = 10_000  # owners read at most by one sweep


def holders(db: Database) -> list[str]:
    with db.read() as conn:
        return [row[0] for row in conn.execute(_HOLDERS, (MOST_HOLDERS,)).fetchall()]


def expire(db: Database, owners: Sequence[str], *, now: float) -> int:
    with db.write() as conn:
        return conn.execute(
            "UPDATE items SET lease_expires = ? WHERE lease_owner IN "
            "(SELECT value FROM json_each(?)) AND state = 'TODO' AND lease_expires > ?",
            (now, json.dumps(list(owners)), now),
        ).rowcount
