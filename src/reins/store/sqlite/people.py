"""The reviewer's desk in SQLite: a person's claim on a REVIEW item, and what people decided."""

from __future__ import annotations

from reins.errors import NotFound
from reins.store.codec import ITEM_COLUMNS, item_of
from reins.store.model import Item
from reins.store.people import (
    DECISIONS,
    LAST_CURSOR,
    RESERVE,
    REVIEWERS,
    Decisions,
    Reviewer,
    decisions_of,
    refusal,
    reviewers_of,
)
from reins.store.sqlite.connection import Database


def reserve(db: Database, key: str, owner: str, *, ttl: float, now: float) -> Item:
    with db.write() as conn:
        row = conn.execute(RESERVE.format(mark="?"), (owner, now + ttl, key, owner, now)).fetchone()
        if row is not None:
            return item_of(row)
        found = conn.execute(f"SELECT {ITEM_COLUMNS} FROM items WHERE key = ?", (key,)).fetchone()
    if found is None:
        raise NotFound(f"no item with key {key!r} in {db.location}")
    raise refusal(item_of(found), now)


def decisions(db: Database, *, before: int | None, limit: int) -> Decisions:
    with db.read() as conn:
        rows = conn.execute(
            DECISIONS.format(mark="?"), (LAST_CURSOR if before is None else before, limit + 1)
        ).fetchall()
    return decisions_of(rows, limit)


def reviewers(db: Database, *, since: str) -> list[Reviewer]:
    with db.read() as conn:
        return reviewers_of(conn.execute(REVIEWERS.format(mark="?"), (since,)).fetchall())
