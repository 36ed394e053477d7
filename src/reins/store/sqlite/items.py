"""Items in SQLite: adding them in chunks, reading one with its log, and keyset pages."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from reins.errors import LedgerError, NotFound
from reins.store.codec import (
    ATTEMPT_COLUMNS,
    ITEM_COLUMNS,
    MARK_COLUMNS,
    attempt_of,
    dump_json,
    item_of,
    mark_of,
    now_iso,
    page_where,
    sample_runs,
)
from reins.store.model import Activity, Attempt, Item, Page, State
from reins.store.sqlite.connection import Database

SCAN_CHUNK = 5_000


def add(db: Database, seeds: Iterable[tuple[str, Any]]) -> tuple[int, int]:
    added = seen = 0
    chunk: list[tuple[str, str | None, str, str]] = []
    stamp = now_iso()  # one per chunk: a clock read per item costs seconds per million
    for key, payload in seeds:
        if not isinstance(key, str) or not key:
            raise LedgerError(f"an item key must be a non-empty string, got {key!r}")
        chunk.append((key, None if payload is None else dump_json(payload), stamp, stamp))
        if len(chunk) >= SCAN_CHUNK:
            added += _insert(db, chunk)
            seen += len(chunk)
            chunk.clear()
            stamp = now_iso()
    if chunk:
        added += _insert(db, chunk)
        seen += len(chunk)
    return added, seen - added


def _insert(db: Database, rows: list[tuple[str, str | None, str, str]]) -> int:
    with db.write() as conn:
        cur = conn.executemany(
            "INSERT OR IGNORE INTO items (key, payload, created_at, updated_at) "
            "VALUES (?, ?, ?, ?)",
            rows,
        )
        return cur.rowcount


def get(db: Database, key: str) -> Item:
    # One statement is its own snapshot: no BEGIN/COMMIT round around it (submit reads this).
    row = db.one(f"SELECT {ITEM_COLUMNS} FROM items WHERE key = ?", (key,))
    if row is None:
        raise NotFound(f"no item with key {key!r} in {db.path}")
    return item_of(row)


def snapshot(db: Database, key: str) -> tuple[Item, list[Attempt]]:
    with db.read() as conn:
        row = conn.execute(f"SELECT {ITEM_COLUMNS}, id FROM items WHERE key = ?", (key,)).fetchone()
        if row is None:
            raise NotFound(f"no item with key {key!r} in {db.path}")
        rows = conn.execute(
            f"SELECT {ATTEMPT_COLUMNS} FROM attempts WHERE item_id = ? ORDER BY turn",
            (row[-1],),
        ).fetchall()
    return item_of(row), [attempt_of(key, r) for r in rows]


def page(
    db: Database,
    *,
    state: State | None,
    rule: str | None,
    leased_to: str | None,
    after: int | None,
    limit: int,
    round_: int | None = None,
    contains: str | None = None,
    descending: bool = False,
) -> Page:
    where, args = page_where(
        "?",
        state=state,
        rule=rule,
        leased_to=leased_to,
        after=after,
        round_=round_,
        contains=contains,
        descending=descending,
    )
    order = "DESC" if descending else ""
    with db.read() as conn:
        rows = conn.execute(
            f"SELECT {ITEM_COLUMNS}, id FROM items WHERE {where} ORDER BY id {order} LIMIT ?",
            [*args, limit + 1],
        ).fetchall()
    # One row more than asked says whether a next page exists: the last page has no cursor.
    items = tuple(item_of(r) for r in rows[:limit])
    return Page(items, rows[limit - 1][-1] if len(rows) > limit else None)


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
