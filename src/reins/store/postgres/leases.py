"""Leases in PostgreSQL: one item in progress per owner, expiry returns it to the pool.

A free item is taken with ``FOR UPDATE SKIP LOCKED``: processes leasing at the same moment
each lock a different row instead of queueing on the first, and a row whose lease another
process just committed fails the recheck of the ``WHERE`` clause and is passed over.
"""

from __future__ import annotations

import time
from collections.abc import Collection
from dataclasses import replace
from typing import Any

from psycopg import Cursor

from reins.store.codec import now_iso
from reins.store.model import Lease
from reins.store.postgres.connection import Database
from reins.store.postgres.items import ITEM_COLUMNS, item_of

_OWN = (
    f"SELECT {ITEM_COLUMNS} FROM items WHERE lease_owner = %s AND state = 'TODO' "
    "AND lease_expires > %s ORDER BY id LIMIT 1 FOR UPDATE"
)
_FREE = (
    f"SELECT {ITEM_COLUMNS} FROM items WHERE state = 'TODO' "
    "AND (lease_owner IS NULL OR lease_expires <= %s) ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED"
)


def lease(db: Database, owner: str, *, ttl: float, now: float | None) -> Lease | None:
    t = time.time() if now is None else now

    def take(cur: Cursor[Any]) -> tuple[tuple[Any, ...], int, bool] | None:
        row = cur.execute(_OWN, (owner, t)).fetchone()
        renewed = row is not None
        if row is None:
            row = cur.execute(_FREE, (t,)).fetchone()
        if row is None:
            return None
        cur.execute(
            "UPDATE items SET lease_owner = %s, lease_expires = %s WHERE key = %s",
            (owner, t + ttl, row[0]),
        )
        nexts = cur.execute(
            "INSERT INTO drivers AS d (name, nexts, last_seen) VALUES (%s, 1, %s) "
            "ON CONFLICT (name) DO UPDATE SET nexts = d.nexts + 1, "
            "last_seen = excluded.last_seen RETURNING nexts",
            (owner, now_iso()),
        ).fetchone()
        assert nexts is not None
        return row, int(nexts[0]), renewed

    taken = db.write(take, what=f"leasing an item to {owner!r}")
    if taken is None:
        return None
    row, nexts, renewed = taken
    item = replace(item_of(row), lease_owner=owner, lease_expires=t + ttl)
    return Lease(item, nexts, renewed)


def heartbeat(db: Database, key: str, owner: str, *, ttl: float, now: float | None) -> bool:
    t = time.time() if now is None else now

    def beat(cur: Cursor[Any]) -> bool:
        cur.execute(
            "UPDATE items SET lease_expires = %s WHERE key = %s AND lease_owner = %s "
            "AND state = 'TODO'",
            (t + ttl, key, owner),
        )
        return cur.rowcount == 1

    return db.write(beat, what=f"renewing the lease on {key!r}")


def release(db: Database, key: str, owner: str) -> bool:
    def give_back(cur: Cursor[Any]) -> bool:
        cur.execute(
            "UPDATE items SET lease_owner = NULL, lease_expires = NULL "
            "WHERE key = %s AND lease_owner = %s",
            (key, owner),
        )
        return cur.rowcount == 1

    return db.write(give_back, what=f"releasing {key!r}")


def release_all(db: Database, owner: str) -> int:
    def give_back(cur: Cursor[Any]) -> int:
        cur.execute(
            "UPDATE items SET lease_owner = NULL, lease_expires = NULL WHERE lease_owner = %s",
            (owner,),
        )
        return cur.rowcount

    return db.write(give_back, what=f"releasing the leases of {owner!r}")


def soonest_expiry(db: Database, *, excluding: Collection[str]) -> float | None:
    # Expired leases count too: one that ran out since the caller last looked is free now.
    def read(cur: Cursor[Any]) -> Any:
        row = cur.execute(
            "SELECT min(lease_expires) FROM items WHERE lease_owner IS NOT NULL "
            "AND state = 'TODO' AND NOT (lease_owner = ANY(%s::text[]))",
            (list(excluding),),
        ).fetchone()
        return None if row is None else row[0]

    found = db.read(read)
    return None if found is None else float(found)
