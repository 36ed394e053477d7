"""Leases in PostgreSQL: one item in progress per owner, expiry returns it to the pool.

Leasing is one statement: the owner's own live lease if it holds one, else the oldest free TODO
item not in ``excluding``, taken with ``FOR UPDATE SKIP LOCKED`` so that processes leasing at
the same moment each lock a different row instead of queueing on the first (a row whose lease
another process just committed fails the recheck of the ``WHERE`` clause and is passed over);
the lease is written and the owner's ``drivers`` row counted in the same statement. Every lease,
a renewal too, gives the item a fresh random token (a second agent leasing under the same driver
name makes the first one's token stale); a heartbeat keeps it, a release clears it. Several
owners lease in one statement too (:func:`lease_many`, the loop's), which reads each item's log
with it.

A lease does not wait for the disk. Its statement sets ``synchronous_commit`` off for its own
transaction only (``set_config(..., true)`` is ``SET LOCAL``; a turn, a heartbeat, a release
keep the server's durable default): the commit returns once its record is in the server's WAL
buffers, and the WAL writer flushes it within a few hundred milliseconds. A crash of the server
in between can lose a lease granted just before it, and nothing else: every later durable commit
(a turn) flushes the WAL up to itself, lost leases included. A lost lease leaves the item as it
was before, free (or still under an earlier lease, which expires as every lease does), so the
worst a crash does is make an item leasable again. Its holder's record is still checked
against what the server holds: on an item nobody holds it is recorded, durably, and the lease is
gone with the turn (the loop then leaves the item); on an item another driver leased since the
restart it is refused (LeaseConflict), and under the same driver with the token of the lost
lease it is refused as stale. No turn is lost or written twice, and no item is recorded by two
holders at once: the turn count in the claim refuses any record on a turn that moved.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence
from typing import Any

from reins.store.codec import ATTEMPT_COLUMNS, ITEM_COLUMNS, attempt_of, item_of, now_iso
from reins.store.model import Attempt, Lease
from reins.store.postgres.connection import Database
from reins.store.postgres.items import snapshot
from reins.store.sql import ITEM_WIDTH, prefixed

# The lease's commit does not wait for the disk: see the module's docstring. Evaluated on the
# returned row, so only a transaction that leased something runs with it.
_ASYNC = "set_config('synchronous_commit', 'off', true)"

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
SELECT taken.*, counted.nexts, {_ASYNC} FROM taken, counted
"""

# Several owners at once, as _LEASE would serve them one after the other: each owner's own
# live lease (the lowest id, should it hold several), then the owners left, in their order,
# each the next free item in id order; and every item's log, a row per attempt.
_LEASE_MANY = f"""
WITH wanted AS (
    SELECT * FROM unnest(%(owners)s::text[], %(tokens)s::text[]) WITH ORDINALITY
        AS w(owner, token, n)
), own AS (
    SELECT id, lease_owner FROM items
    WHERE lease_owner = ANY(%(owners)s::text[]) AND state = 'TODO' AND lease_expires > %(now)s
    FOR UPDATE
), kept AS (
    SELECT DISTINCT ON (lease_owner) id, lease_owner AS owner FROM own ORDER BY lease_owner, id
), needy AS (
    SELECT owner, row_number() OVER (ORDER BY n) AS r FROM wanted
    WHERE owner NOT IN (SELECT owner FROM kept)
), free AS (
    SELECT id, row_number() OVER (ORDER BY id) AS r FROM (
        SELECT id FROM items
        WHERE state = 'TODO' AND (lease_owner IS NULL OR lease_expires <= %(now)s)
          AND NOT key = ANY(%(excluding)s::text[])
        ORDER BY id LIMIT (SELECT count(*) FROM needy) FOR UPDATE SKIP LOCKED
    ) f
), picked AS (
    SELECT id, owner, true AS renewed FROM kept
    UNION ALL SELECT free.id, needy.owner, false FROM needy JOIN free USING (r)
), taken AS (
    UPDATE items i SET lease_owner = picked.owner, lease_expires = %(until)s,
        lease_token = wanted.token
    FROM picked JOIN wanted USING (owner) WHERE i.id = picked.id
    RETURNING {prefixed(ITEM_COLUMNS, "i")}, picked.renewed, wanted.n, i.id AS item_id
), counted AS (
    INSERT INTO drivers AS d (name, nexts, last_seen)
    SELECT lease_owner, 1, %(stamp)s FROM taken ORDER BY lease_owner
    ON CONFLICT (name) DO UPDATE SET nexts = d.nexts + 1, last_seen = excluded.last_seen
    RETURNING name, nexts
)
SELECT taken.*, counted.nexts, {_ASYNC}, {prefixed(ATTEMPT_COLUMNS, "a")}
FROM taken JOIN counted ON counted.name = taken.lease_owner
LEFT JOIN attempts a ON a.item_id = taken.item_id
ORDER BY taken.n, a.turn
"""
# Where a row of _LEASE_MANY holds what: the item, renewed, the owner's place, the item's id,
# nexts, the setting, the attempt.
_RENEWED, _NEXTS, _ATTEMPT = ITEM_WIDTH, ITEM_WIDTH + 3, ITEM_WIDTH + 5


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
    return Lease(item_of(row[:ITEM_WIDTH]), int(row[-2]), bool(row[-3]), token)


def lease_many(
    db: Database, owners: Sequence[str], *, ttl: float, now: float, excluding: Collection[str]
) -> list[tuple[Lease, list[Attempt]]]:
    tokens = [os.urandom(6).hex() for _ in owners]
    args = {
        "owners": list(owners),
        "tokens": tokens,
        "now": now,
        "until": now + ttl,
        "stamp": now_iso(),
        "excluding": list(excluding),
    }
    rows = db.write(
        lambda s: s.rows(_LEASE_MANY, args), what=f"leasing items to {len(owners)} owner(s)"
    )
    return _grouped(db, rows)


def _grouped(db: Database, rows: list[Any]) -> list[tuple[Lease, list[Attempt]]]:
    """The leases of :data:`_LEASE_MANY`'s rows, each with its log."""
    out: list[tuple[Lease, list[Attempt]]] = []
    last = ""
    for row in rows:
        if row[0] != last:
            last = row[0]
            item = item_of(row[:ITEM_WIDTH])
            lease = Lease(item, int(row[_NEXTS]), bool(row[_RENEWED]), item.lease_token or "")
            out.append((lease, []))
        if row[_ATTEMPT] is not None:
            out[-1][1].append(attempt_of(last, row[_ATTEMPT:]))
    # The log was read in the statement's snapshot, the item as it stood once locked: a turn
    # that landed in between (a person's, on an item nobody held) is missing from the log.
    # Read such an item's log again, now that the lease keeps every other driver out.
    for n, (lease, log) in enumerate(out):
        if len(log) != lease.item.turns:
            out[n] = (lease, snapshot(db, lease.item.key)[1])
    return out


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


# The owners in the lease index, one seek per owner (a loose index scan), so that 10,000 items
# leased to one batch job cost one step, not 10,000 rows.
_HOLDERS = """
WITH RECURSIVE o AS (
    (SELECT lease_owner FROM items WHERE lease_owner IS NOT NULL ORDER BY lease_owner LIMIT 1)
    UNION ALL
    SELECT (SELECT i.lease_owner FROM items i WHERE i.lease_owner > o.lease_owner
            ORDER BY i.lease_owner LIMIT 1)
    FROM o WHERE o.lease_owner IS NOT NULL
)
SELECT lease_owner FROM o WHERE lease_owner IS NOT NULL LIMIT %s
"""
MOST_HOLDERS = 10_000  # owners read at most by one sweep


def holders(db: Database) -> list[str]:
    return [row[0] for row in db.read(lambda s: s.rows(_HOLDERS, (MOST_HOLDERS,)))]


def expire(db: Database, owners: Sequence[str], *, now: float) -> int:
    return db.write(
        lambda s: s.count(
            "UPDATE items SET lease_expires = %s WHERE lease_owner = ANY(%s::text[]) "
            "AND state = 'TODO' AND lease_expires > %s",
            (now, list(owners), now),
        ),
        what=f"ending the leases of {len(owners)} holder(s) that are gone",
    )
