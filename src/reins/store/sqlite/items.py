"""Items in SQLite: adding them in chunks, reading one with its log, and keyset pages."""

from __future__ import annotations

from typing import Any

from reins.errors import NotFound
from reins.store.codec import (
    ATTEMPT_COLUMNS,
    ITEM_COLUMNS,
    MARK_COLUMNS,
    attempt_of,
    item_of,
    mark_of,
    now_iso,
    sample_runs,
)
from reins.store.engine import Row
from reins.store.model import Activity, Attempt, Item, Page
from reins.store.query import PageQuery
from reins.store.sql import LAST_ATTEMPTS, RECENT, keyed_attempts, page_of, page_select
from reins.store.sqlite.connection import Database


def insert(db: Database, rows: list[Row]) -> int:
    stamp = now_iso()  # one per chunk: a clock read per item costs seconds per million
    with db.write() as conn:
        cur = conn.executemany(
            "INSERT OR IGNORE INTO items (key, payload, created_at, updated_at) "
            "VALUES (?, ?, ?, ?)",
            [(key, payload, stamp, stamp) for key, payload in rows],
        )
        return cur.rowcount


def get(db: Database, key: str) -> Item:
    # One statement is its own snapshot: no BEGIN/COMMIT round around it (submit reads this).
    row = db.one(f"SELECT {ITEM_COLUMNS} FROM items WHERE key = ?", (key,))
    if row is None:
        raise NotFound(f"no item with key {key!r} in {db.location}")
    return item_of(row)


def snapshot(db: Database, key: str) -> tuple[Item, list[Attempt]]:
    with db.read() as conn:
        row = conn.execute(f"SELECT {ITEM_COLUMNS}, id FROM items WHERE key = ?", (key,)).fetchone()
        if row is None:
            raise NotFound(f"no item with key {key!r} in {db.location}")
        rows = conn.execute(
            f"SELECT {ATTEMPT_COLUMNS} FROM attempts WHERE item_id = ? ORDER BY turn",
            (row[-1],),
        ).fetchall()
    return item_of(row), [attempt_of(key, r) for r in rows]


# The items one of whose texts holds every word (reins.store.search): its key and payload, or
# a turn's submission and facts. Each FTS5 query gives its rowids from the index alone.
_SEARCH = (
    "id IN (SELECT rowid FROM item_words WHERE item_words MATCH ? "
    "UNION SELECT a.item_id FROM attempts a WHERE a.id IN "
    "(SELECT rowid FROM turn_words WHERE turn_words MATCH ?))"
)


def _search(words: tuple[str, ...]) -> tuple[str, list[object]]:
    # Each word quoted (FTS5 reads nothing inside as syntax) and a prefix (its trailing *).
    match = " AND ".join(f'"{w}"*' for w in words)
    return _SEARCH, [match, match]


def page(db: Database, query: PageQuery) -> Page:
    statement, args = page_select(query, "?", search=_search)
    with db.read() as conn:
        return page_of(conn.execute(statement, args).fetchall(), query.limit)


def activity(db: Database, *, samples: int, window: int) -> Activity:
    with db.read() as conn:
        total = conn.execute(
            "SELECT judged + generation_errors + judge_errors + human FROM usage_totals"
        ).fetchone()[0]
        # Two subqueries: SQLite answers a lone min() or max() from the index, both together
        # by a scan of the whole log.
        low, high = conn.execute(
            "SELECT (SELECT min(id) FROM attempts), (SELECT max(id) FROM attempts)"
        ).fetchone()
        if low is None:
            return Activity((), 0)
        rows: list[Any] = []
        for first, last in sample_runs(low, high, samples=samples, window=window):
            rows += conn.execute(
                f"SELECT {MARK_COLUMNS} FROM attempts WHERE id BETWEEN ? AND ? ORDER BY id",
                (first, last),
            ).fetchall()
    return Activity(tuple(mark_of(r) for r in rows), max(total, len(rows)))


def recent(db: Database, limit: int) -> list[Attempt]:
    with db.read() as conn:
        return keyed_attempts(conn.execute(RECENT.format(mark="?"), (limit,)).fetchall())


def last_attempts(db: Database, keys: list[str]) -> list[Attempt]:
    statement = LAST_ATTEMPTS.format(marks=", ".join("?" * len(keys)))
    with db.read() as conn:
        return keyed_attempts(conn.execute(statement, keys).fetchall())
