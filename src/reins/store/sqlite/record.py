"""Recording a turn in SQLite: one ``BEGIN IMMEDIATE`` transaction, attempt + item + counters."""

from __future__ import annotations

import sqlite3

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
    usage_totals,
)
from reins.store.engine import Entry
from reins.store.model import Attempt, AttemptKind, Claim, Draft, Item
from reins.store.sql import OWE
from reins.store.sqlite.connection import Database

# The usage_totals column counting each kind of attempt (schema v3).
_KIND_COLUMN = {
    AttemptKind.JUDGED: "judged",
    AttemptKind.GENERATION_ERROR: "generation_errors",
    AttemptKind.JUDGE_ERROR: "judge_errors",
    AttemptKind.HUMAN: "human",
}
_OWE = OWE.format(mark="?")
# The item's columns a turn writes, in codec.turn_row's order, then its id.
_UPDATE = (
    "UPDATE items SET state = ?, tries = ?, turns = ?, updated_at = ?, locked_at = ?, "
    "lease_owner = ?, lease_expires = ?, root_cause = ?, round = ?, lease_token = ?, "
    "gate_digest = ?, export_batch = CASE WHEN ? THEN export_batch END WHERE id = ?"
)
_PLACES = ", ".join("?" for _ in ATTEMPT_COLUMNS.split(","))
# The kept totals a turn adds to (codec.usage_totals' order), and its kind's count.
_COUNT = (
    "UPDATE usage_totals SET attempts = attempts + 1, input_tokens = input_tokens + ?, "
    "output_tokens = output_tokens + ?, cost = cost + ?, "
    "cache_read_tokens = cache_read_tokens + ?, cache_write_tokens = cache_write_tokens + ?, "
    "batch_cost = batch_cost + ?, list_cost = list_cost + ?, {kind} = {kind} + 1"
)
_ITEM_PLACES = ", ".join("?" for _ in LOAD_COLUMNS.split(","))


def record(db: Database, draft: Draft, claim: Claim, *, now: float) -> tuple[Item, Attempt]:
    with db.write() as conn:
        row = conn.execute(
            f"SELECT {ITEM_COLUMNS}, id FROM items WHERE key = ?", (draft.key,)
        ).fetchone()
        if row is None:
            raise NotFound(f"no item with key {draft.key!r} in {db.location}")
        item, item_id = item_of(row), row[-1]
        turn = ratchet.settle(
            item, draft, claim, now, lambda: _attempt_at(conn, item_id, draft.key, claim.turns + 1)
        )
        if turn.stored:
            return item, turn.attempt  # our own commit, whose answer was lost: not twice
        after, attempt = turn.item, turn.attempt
        write_attempt(conn, item_id, attempt)
        if withdrawal.owed(item, after):  # read the file the lock went to before its mark goes
            conn.execute(_OWE, (withdrawal.meta_key(item.key), item_id))
        conn.execute(_UPDATE, (*turn_row(after), item_id))
        if attempt.kind is AttemptKind.JUDGED:
            conn.execute("UPDATE drivers SET nexts = 0 WHERE name = ?", (claim.holder,))
    return after, attempt


def write_attempt(conn: sqlite3.Connection, item_id: int, a: Attempt) -> None:
    """Append ``a`` and count it: rules fired, usage."""
    conn.execute(
        f"INSERT INTO attempts (item_id, {ATTEMPT_COLUMNS}) VALUES (?, {_PLACES})",
        (item_id, *attempt_row(a)),
    )
    for rule, (fired, root) in fired_rules(a).items():
        conn.execute(
            "INSERT INTO rule_counts (rule, fired, root) VALUES (?, ?, ?) "
            "ON CONFLICT (rule) DO UPDATE SET fired = fired + excluded.fired, "
            "root = root + excluded.root",
            (rule, fired, root),
        )
    conn.execute(_COUNT.format(kind=_KIND_COLUMN[a.kind]), usage_totals(a))


def _attempt_at(conn: sqlite3.Connection, item_id: int, key: str, turn: int) -> Attempt | None:
    row = conn.execute(
        f"SELECT {ATTEMPT_COLUMNS} FROM attempts WHERE item_id = ? AND turn = ?",
        (item_id, turn),
    ).fetchone()
    return None if row is None else attempt_of(key, row)


def empty(db: Database) -> bool:
    with db.read() as conn:
        return not conn.execute("SELECT count(*) FROM items").fetchone()[0]


def load(db: Database, chunk: list[Entry]) -> int:
    with db.write() as conn:
        for item, log in chunk:
            item_id = conn.execute(
                f"INSERT INTO items ({LOAD_COLUMNS}) VALUES ({_ITEM_PLACES}) RETURNING id",
                load_row(item),
            ).fetchone()[0]
            for attempt in log:
                write_attempt(conn, item_id, attempt)
    return len(chunk)
