"""Leases in PostgreSQL: one item in progress per owner, expiry returns it to the pool.

Leasing is one statement: the owner's own live lease if it holds one, else the oldest free TODO
item not in ``excluding``, taken with ``FOR UPDATE SKIP LOCKED`` so that processes leasing at
the same moment each lock a different row instead of queueing on the first (a row whose lease
another process just committed fails the recheck of the ``WHERE`` clause and is passed over);
the lease is written and the owner's ``drivers`` row counted in the same statement. Every lease,
a renewal too, gives the item a fresh random token (a second agent leasing under the same driver
name makes the first one's token stale); a heartbeat keeps it, a release clears it.
"""

from __future__ import annotations

import os
from collections.abc import Collection

from reins.store.codec import ITEM_COLUMNS, item_of, now_iso
from reins.store.model import Lease
from reins.store.postgres.connection import Database
from reins.store.sql import ITEM_WIDTH, prefixed

_LEASE = f"""
WITH own AS (
    SELECT id FROM items
    WHERE lease_owner = %(owner)s AND state = 'TODO' AND lease_expires > %(now)s
    ORDER BY id LIMIT 1 FOR UPDATE
), free AS (
    SELECT id FROM items
    WHERE state = 'TODO' AND (lease_owner IS NULL OR lease_expires <= %(now)s)
      AND NOT key = ANY(%(excluding)s::text[])
      AND NOT EXISTS (SELECT 1 FROM own)
    ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED
), picked AS (
    SELECT id, true AS renewed FROM own UNION ALL SELECT id, false FROM free
), taken AS (
    UPDATE items i SET lease_owner = %(owner)s, lease_expires = %(until)s,
        lease_token = %(token)s
    FROM picked WHERE i.id = picked.id
    RETURNING {prefixed(ITEM_COLUMNS, "i")}, picked.renewed
), counted AS (
    INSERT INTO drivers AS d (name, nexts, last_seen)
    SELECT %(owner)s, 1, %(stamp)s WHERE EXISTS (SELECT 1 FROM taken)
    ON CONFLICT (name) DO UPDATE SET nexts = d.nexts + 1, last_seen = excluded.last_seen
    RETURNING nexts
)
SELECT taken.*, counted.nexts FROM taken, counted
"""


def lease(
    db: Database, owner: str, *, ttl: float, now: float, excluding: Collection[str]
) -> Lease | None:
    token = os.urandom(6).hex()
    args = {
        "owner": owner,
        "now": now,
        "until": now + ttl,
        "stamp": now_iso(),
        "token": token,
        "excluding": list(excluding),
    }
    rows = db.write(lambda s: s.rows(_LEASE, args), what=f"leasing an item to {owner!r}")
    if not rows:
        return None
    row = rows[0]
    return Lease(item_of(row[:ITEM_WIDTH]), int(row[-1]), bool(row[-2]), token)


def heartbeat(db: Database, key: str, owner: str, *, ttl: float, now: float) -> bool:
    changed = db.write(
        lambda s: s.count(
            "UPDATE items SET lease_expires = %s WHERE key = %s AND lease_owner = %s "
            "AND state = 'TODO'",
            (now + ttl, key, owner),
        ),
        what=f"renewing the lease on {key!r}",
    )
    return changed == 1


def release(db: Database, key: str, owner: str) -> bool:
    changed = db.write(
        lambda s: s.count(
            "UPDATE items SET lease_owner = NULL, lease_expires = NULL, lease_token = NULL "
            "WHERE key = %s AND lease_owner = %s",
            (key, owner),
        ),
        what=f"releasing {key!r}",
    )
    return changed == 1


def release_all(db: Database, owner: str) -> int:
    return db.write(
        lambda s: s.count(
            "UPDATE items SET lease_owner = NULL, lease_expires = NULL, lease_token = NULL "
            "WHERE lease_owner = %s",
            (owner,),
        ),
        what=f"releasing the leases of {owner!r}",
    )


def soonest_expiry(db: Database, *, excluding: Collection[str]) -> float | None:
    # Expired leases count too: one that ran out since the caller last looked is free now.
    rows = db.read(
        lambda s: s.rows(
            "SELECT min(lease_expires) FROM items WHERE lease_owner IS NOT NULL "
            "AND state = 'TODO' AND NOT (lease_owner = ANY(%s::text[]))",
            (list(excluding),),
        )
    )
    return None if not rows or rows[0][0] is None else float(rows[0][0])
