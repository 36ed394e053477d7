"""Items in PostgreSQL: adding them in chunks, reading one with its log, and keyset pages."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from psycopg import Cursor

from reins.errors import LedgerError, NotFound
from reins.store.codec import ATTEMPT_COLUMNS, attempt_of, dump_json, load_json, now_iso
from reins.store.model import Attempt, Item, Page, State
from reins.store.postgres.connection import Database

SCAN_CHUNK = 5_000
ITEM_COLUMNS = (
    "key, state, tries, payload, turns, created_at, updated_at, locked_at, "
    "lease_owner, lease_expires, export_batch, root_cause"
)


def item_of(row: tuple[Any, ...] | Any) -> Item:
    return Item(
        key=row[0],
        state=State(row[1]),
        tries=row[2],
        payload=load_json(row[3]),
        turns=row[4],
        created_at=row[5],
        updated_at=row[6],
        locked_at=row[7],
        lease_owner=row[8],
        lease_expires=row[9],
        exported=row[10] is not None,
        root_cause=row[11],
    )


def add(db: Database, seeds: Iterable[tuple[str, Any]]) -> tuple[int, int]:
    added = seen = 0
    keys: list[str] = []
    payloads: list[str | None] = []
    for key, payload in seeds:
        if not isinstance(key, str) or not key:
            raise LedgerError(f"an item key must be a non-empty string, got {key!r}")
        keys.append(key)
        payloads.append(None if payload is None else dump_json(payload))
        if len(keys) >= SCAN_CHUNK:
            added += _insert(db, keys, payloads)
            seen += len(keys)
            keys, payloads = [], []
    if keys:
        added += _insert(db, keys, payloads)
        seen += len(keys)
    return added, seen - added


def _insert(db: Database, keys: list[str], payloads: list[str | None]) -> int:
    stamp = now_iso()  # one per chunk: a clock read per item costs seconds per million

    def insert(cur: Cursor[Any]) -> int:
        # One statement per chunk; WITH ORDINALITY keeps the seeds' order in the ids.
        cur.execute(
            "INSERT INTO items (key, payload, created_at, updated_at) "
            "SELECT k, p, %s, %s FROM unnest(%s::text[], %s::text[]) WITH ORDINALITY AS s(k, p, n) "
            "ORDER BY n ON CONFLICT (key) DO NOTHING",
            (stamp, stamp, keys, payloads),
        )
        return cur.rowcount

    # Not retried after a lost connection: a chunk that landed would count as present.
    return db.write(
        insert, what=f"adding {len(keys)} item(s)", idempotent=False,
        outcome="that chunk of items was either wholly added or not at all; adding the same "
        "seeds again adds only what is missing",
    )  # fmt: skip


def get(db: Database, key: str) -> Item:
    def read(cur: Cursor[Any]) -> tuple[Any, ...] | None:
        return cur.execute(f"SELECT {ITEM_COLUMNS} FROM items WHERE key = %s", (key,)).fetchone()

    row = db.read(read)
    if row is None:
        raise NotFound(f"no item with key {key!r} in {db.target.location}")
    return item_of(row)


def snapshot(db: Database, key: str) -> tuple[Item, list[Attempt]]:
    def read(cur: Cursor[Any]) -> tuple[Any, list[Any]] | None:
        row = cur.execute(f"SELECT {ITEM_COLUMNS}, id FROM items WHERE key = %s", (key,)).fetchone()
        if row is None:
            return None
        rows = cur.execute(
            f"SELECT {ATTEMPT_COLUMNS} FROM attempts WHERE item_id = %s ORDER BY turn",
            (row[-1],),
        ).fetchall()
        return row, rows

    found = db.read(read)
    if found is None:
        raise NotFound(f"no item with key {key!r} in {db.target.location}")
    row, rows = found
    return item_of(row), [attempt_of(key, r) for r in rows]


def page(
    db: Database, *, state: State | None, rule: str | None, after: int | None, limit: int
) -> Page:
    where: list[str] = ["id > %s"]
    args: list[object] = [after or 0]
    if state is not None:
        where.append("state = %s")
        args.append(state.value)
    if rule is not None:
        where.append("root_cause = %s")
        args.append(rule)
    query = f"SELECT {ITEM_COLUMNS}, id FROM items WHERE {' AND '.join(where)} ORDER BY id LIMIT %s"

    def read(cur: Cursor[Any]) -> list[Any]:
        return cur.execute(query, [*args, limit + 1]).fetchall()

    rows = db.read(read)
    # One row more than asked says whether a next page exists: the last page has no cursor.
    items = tuple(item_of(r) for r in rows[:limit])
    return Page(items, rows[limit - 1][-1] if len(rows) > limit else None)
