"""Recording a turn in PostgreSQL: one short transaction, the item locked ``FOR UPDATE``.

The item's row is locked first; the claim and the ratchet are checked on what it holds
(:func:`reins.store.ratchet.admit`); the attempt, the counters and the item are written; the
transaction commits. Should the connection die meanwhile, the turn is made again once on a
fresh connection with the same draft: if the first commit landed, the item has moved on by one
turn and the attempt there carries the draft's nonce, so the turn is found, not written twice.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

from reins.errors import LedgerError, NotFound
from reins.store import ratchet, withdrawal
from reins.store.codec import (
    ATTEMPT_COLUMNS,
    ITEM_COLUMNS,
    LOAD_COLUMNS,
    attempt_of,
    attempt_row,
    fired_rules,
    item_of,
    load_row,
    now_iso,
)
from reins.store.model import Attempt, Claim, Draft, Item
from reins.store.postgres.connection import Database, Session
from reins.store.walk import chunks

LOAD_CHUNK = 1_000

_ITEM_PLACES = ", ".join(["%s"] * len(LOAD_COLUMNS.split(",")))
_ARGS = ", ".join(["%s"] * (1 + len(ATTEMPT_COLUMNS.split(",")) + 3))
_APPEND = f"SELECT reins_append({_ARGS})"
# reins_turn: reins_append's arguments, then the item's twelve columns after the turn and the
# lease holder.
_TURN = f"SELECT reins_turn({_ARGS}, {', '.join(['%s'] * 13)})"
# A withdrawal owed to the file the item's exported lock went to, read before reins_turn clears
# the mark (see reins.store.withdrawal).
_OWE = (
    "INSERT INTO meta (key, value) SELECT %s, b.path FROM items i "
    "JOIN export_batches b ON b.id = i.export_batch WHERE i.id = %s "
    "ON CONFLICT (key) DO UPDATE SET value = excluded.value"
)


def record(db: Database, draft: Draft, claim: Claim, *, now: float | None) -> tuple[Item, Attempt]:
    t = time.time() if now is None else now

    def turn(s: Session) -> tuple[Item, Attempt]:
        (rows,) = s.batch(
            (f"SELECT {ITEM_COLUMNS}, id FROM items WHERE key = %s FOR UPDATE", (draft.key,)),
            begin="BEGIN",
        )
        if not rows:
            raise NotFound(f"no item with key {draft.key!r} in {db.target.location}")
        item, item_id = item_of(rows[0]), rows[0][-1]
        try:
            ratchet.admit(item, draft, claim, t)
        except ratchet.RETRYABLE:
            stored = _attempt_at(s, item_id, draft.key, claim.turns + 1)
            if stored is not None and ratchet.same_turn(stored, draft, claim):
                return item, stored  # our own commit, whose answer was lost: not twice
            raise
        after, attempt = ratchet.apply(item, draft, claim, now_iso())
        item_row = (
            after.state.value,
            after.tries,
            after.turns,
            after.updated_at,
            after.locked_at,
            after.lease_owner,
            after.lease_expires,
            after.root_cause,
            after.round,
            after.lease_token,
            after.gate_digest,
            after.exported,
            claim.holder,
        )
        owe = (
            [(_OWE, (withdrawal.meta_key(item.key), item_id))]
            if withdrawal.owed(item, after)
            else []
        )
        s.batch(*owe, (_TURN, (*append_args(item_id, attempt), *item_row)), commit=True)
        return after, attempt

    return db.write(
        turn,
        what=f"recording a turn of item {draft.key!r}",
        outcome=f"The turn is either wholly recorded or absent: `reins show {draft.key}` "
        "tells which",
    )


def append_args(item_id: int, a: Attempt) -> tuple[Any, ...]:
    """The arguments of ``reins_append`` for ``a``: its row, and the rules it fired."""
    rules = sorted(fired_rules(a).items())
    return (
        item_id,
        *attempt_row(a),
        [r for r, _ in rules],
        [fired for _, (fired, _) in rules],
        [root for _, (_, root) in rules],
    )


def _attempt_at(s: Session, item_id: int, key: str, turn: int) -> Attempt | None:
    rows = s.rows(
        f"SELECT {ATTEMPT_COLUMNS} FROM attempts WHERE item_id = %s AND turn = %s",
        (item_id, turn),
    )
    return attempt_of(key, rows[0]) if rows else None


def load(db: Database, entries: Iterable[tuple[Item, Sequence[Attempt]]]) -> int:
    """Insert items with their logs as they are (``reins ledger copy``) into an empty ledger.

    Inserting terminal rows is allowed: the ratchet's triggers guard updates, not inserts.
    """

    if db.read(lambda s: s.rows("SELECT EXISTS (SELECT 1 FROM items)"))[0][0]:
        raise LedgerError(f"ledger {db.target.location} is not empty: copy only into a new ledger")
    return sum(_load_chunk(db, chunk) for chunk in chunks(entries, LOAD_CHUNK))


def _load_chunk(db: Database, chunk: list[tuple[Item, Sequence[Attempt]]]) -> int:
    def insert(s: Session) -> int:
        s.batch(begin="BEGIN")
        for item, log in chunk:
            (found,) = s.rows(
                f"INSERT INTO items ({LOAD_COLUMNS}) VALUES ({_ITEM_PLACES}) RETURNING id",
                load_row(item),
            )
            if log:
                s.batch(*((_APPEND, append_args(found[0], a)) for a in log))
        return len(chunk)

    return db.write(
        insert, what=f"copying {len(chunk)} item(s)", idempotent=False,
        outcome="That chunk was either wholly copied or not at all; copy again into a new "
        "ledger",
    )  # fmt: skip
