"""Recording a turn in PostgreSQL: one short transaction, the item locked ``FOR UPDATE``.

The item's row is locked first; the claim and the ratchet are checked on what it holds
(:func:`reins.store.ratchet.admit`); the attempt, the counters and the item are written; the
transaction commits. Should the connection die meanwhile, the turn is made again once on a
fresh connection with the same draft: if the first commit landed, the item has moved on by one
turn and the attempt there carries the draft's nonce, so the turn is found, not written twice.
"""

from __future__ import annotations

from typing import Any

from reins.errors import NotFound
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
    turn_row,
)
from reins.store.engine import Entry
from reins.store.model import Attempt, Claim, Draft, Item
from reins.store.postgres.connection import Database, Session
from reins.store.sql import OWE

_ITEM_PLACES = ", ".join(["%s"] * len(LOAD_COLUMNS.split(",")))
_ARGS = ", ".join(["%s"] * (1 + len(ATTEMPT_COLUMNS.split(",")) + 3))
_APPEND = f"SELECT reins_append({_ARGS})"
# reins_turn: reins_append's arguments, then the item's twelve columns after the turn
# (codec.turn_row) and the lease holder.
_TURN = f"SELECT reins_turn({_ARGS}, {', '.join(['%s'] * 13)})"
_OWE = OWE.format(mark="%s")


def record(db: Database, draft: Draft, claim: Claim, *, now: float) -> tuple[Item, Attempt]:
    def turn(s: Session) -> tuple[Item, Attempt]:
        (rows,) = s.batch(
            (f"SELECT {ITEM_COLUMNS}, id FROM items WHERE key = %s FOR UPDATE", (draft.key,)),
            begin="BEGIN",
        )
        if not rows:
            raise NotFound(f"no item with key {draft.key!r} in {db.location}")
        item, item_id = item_of(rows[0]), rows[0][-1]
        done = ratchet.settle(
            item, draft, claim, now, lambda: _attempt_at(s, item_id, draft.key, claim.turns + 1)
        )
        if done.stored:
            return item, done.attempt  # our own commit, whose answer was lost: not twice
        after, attempt = done.item, done.attempt
        owe = (
            [(_OWE, (withdrawal.meta_key(item.key), item_id))]
            if withdrawal.owed(item, after)
            else []
        )
        row = (*append_args(item_id, attempt), *turn_row(after), claim.holder)
        s.batch(*owe, (_TURN, row), commit=True)
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


def empty(db: Database) -> bool:
    return not db.read(lambda s: s.rows("SELECT EXISTS (SELECT 1 FROM items)"))[0][0]


def load(db: Database, chunk: list[Entry]) -> int:
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
