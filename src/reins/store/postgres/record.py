"""Recording a turn in PostgreSQL: one statement, one commit.

``reins_turn`` (schema v5, :mod:`reins.store.postgres.schema_v5`) takes the draft and the
claim, locks the item ``FOR UPDATE``, checks the ratchet and the claim, and writes the attempt,
the counters and the item, in the one statement the client sends in autocommit. It returns the
item as it found it and whether it wrote: the client builds the item after the turn and the
attempt from it (:func:`reins.store.ratchet.apply`, the same values the server wrote), and on a
refusal raises what :func:`reins.store.ratchet.refused` says, the error both engines share.
Should the connection die meanwhile, the turn is made again once on a fresh connection with the
same draft: if the first commit landed, the item has moved on by one turn and the attempt there
carries the draft's nonce, so the turn is found, not written twice.
"""

from __future__ import annotations

from typing import Any

from reins.errors import NotFound
from reins.store import ratchet, withdrawal
from reins.store.codec import (
    ATTEMPT_COLUMNS,
    LOAD_COLUMNS,
    attempt_of,
    attempt_row,
    dump_json,
    facts_json,
    fired_rules,
    item_of,
    load_row,
    notes_json,
    now_iso,
)
from reins.store.engine import Entry
from reins.store.model import Attempt, Claim, Draft, Item
from reins.store.postgres import adapt
from reins.store.postgres.connection import Database, Session

_ITEM_PLACES = ", ".join(["%s"] * len(LOAD_COLUMNS.split(",")))
_ARGS = ", ".join(["%s"] * (1 + len(ATTEMPT_COLUMNS.split(",")) + 3))
_APPEND = f"SELECT reins_append({_ARGS})"
# reins_turn's arguments: the claim and the transition (8), the draft's columns (26), its rules
# (as JSON, or NULL); see _turn_args.
_TURN = f"SELECT * FROM reins_turn({', '.join(['%s'] * 35)})"


def record(db: Database, draft: Draft, claim: Claim, *, now: float) -> tuple[Item, Attempt]:
    stamp = now_iso()
    args = _turn_args(draft, claim, now, stamp)

    def turn(s: Session) -> tuple[Item, Attempt]:
        # Not prepared: a call is parsed in microseconds (the function's own statements are
        # planned once per session), and preparing it would make a turn two round trips.
        rows = s.rows(_TURN, args, prepare=False)
        if not rows:
            raise NotFound(f"no item with key {draft.key!r} in {db.location}")
        row = rows[0]
        before = item_of(row)
        if row[-1]:
            return ratchet.apply(before, draft, claim, stamp)
        item_id = row[-2]
        stored = ratchet.refused(
            before, draft, claim, now, lambda: _attempt_at(s, item_id, draft.key, claim.turns + 1)
        )
        return before, stored  # our own commit, whose answer was lost: not twice

    return db.write(
        turn,
        what=f"recording a turn of item {draft.key!r}",
        outcome=f"The turn is either wholly recorded or absent: `reins show {draft.key}` "
        "tells which",
    )


def _turn_args(draft: Draft, claim: Claim, now: float, stamp: str) -> tuple[Any, ...]:
    """The arguments of ``reins_turn``, in its order."""
    t, u = draft.transition, draft.usage
    # One text for the rules fired (three arrays cost the client more to send than the
    # server to read back), none at all when no rule fired.
    # (A rule's name is escaped as every text is, which JSON alone would not carry: a NUL.)
    fired = fired_rules(draft)
    named = [[adapt.encode(r), n, root] for r, (n, root) in sorted(fired.items())]
    rules = dump_json(named) if fired else None
    return (
        draft.key,
        claim.turns,
        claim.holder,
        claim.token,
        now,
        t.tries_delta,
        t.new_round,
        withdrawal.meta_key(draft.key),
        draft.kind.value,
        claim.driver,
        t.state.value,
        draft.outcome,
        draft.root_cause,
        facts_json(draft.facts),
        draft.feedback,
        draft.submission,
        draft.error,
        draft.policy,
        u.backend,
        draft.prompt_digest,
        u.input_tokens,
        u.output_tokens,
        u.cost,
        u.latency,
        draft.started_at,
        stamp,
        notes_json(draft.notes),
        draft.gate_digest,
        draft.action,
        draft.note,
        u.cache_read_tokens,
        u.cache_write_tokens,
        u.batch,
        u.list_cost,
        rules,
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
