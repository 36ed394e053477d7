"""The reviewer's desk in PostgreSQL: a person's claim on a REVIEW item, and what people
decided."""

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
from reins.store.postgres.connection import Database, Session


def reserve(db: Database, key: str, owner: str, *, ttl: float, now: float) -> Item:
    def claim(s: Session) -> tuple[bool, list[object]]:
        rows = s.rows(RESERVE.format(mark="%s"), (owner, now + ttl, key, owner, now))
        if rows:
            return True, rows
        return False, s.rows(f"SELECT {ITEM_COLUMNS} FROM items WHERE key = %s", (key,))

    # Made again after a lost connection, it claims again: the same owner's claim is renewed.
    taken, rows = db.write(claim, what=f"claiming {key!r} for {owner!r}")
    if not rows:
        raise NotFound(f"no item with key {key!r} in {db.location}")
    if taken:
        return item_of(rows[0])
    raise refusal(item_of(rows[0]), now)


def decisions(db: Database, *, before: int | None, limit: int) -> Decisions:
    cursor = LAST_CURSOR if before is None else before
    rows = db.read(lambda s: s.rows(DECISIONS.format(mark="%s"), (cursor, limit + 1)))
    return decisions_of(rows, limit)


def reviewers(db: Database, *, since: str) -> list[Reviewer]:
    return reviewers_of(db.read(lambda s: s.rows(REVIEWERS.format(mark="%s"), (since,))))
