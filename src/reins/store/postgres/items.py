"""Items in PostgreSQL: adding them in chunks, reading one with its log, and keyset pages."""

from __future__ import annotations

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
from reins.store.postgres.connection import Database, Session
from reins.store.query import PageQuery
from reins.store.sql import (
    ITEM_WIDTH,
    LAST_ATTEMPTS,
    RECENT,
    keyed_attempts,
    page_of,
    page_select,
    prefixed,
)

# The item and its log in one statement, so in one snapshot: a row per attempt (one row with
# no attempt for an item without turns).
_SNAPSHOT = (
    f"SELECT {prefixed(ITEM_COLUMNS, 'i')}, {prefixed(ATTEMPT_COLUMNS, 'a')} "
    "FROM items i LEFT JOIN attempts a ON a.item_id = i.id WHERE i.key = %s ORDER BY a.turn"
)


def insert(db: Database, rows: list[Row]) -> int:
    stamp = now_iso()  # one per chunk: a clock read per item costs seconds per million
    keys = [key for key, _ in rows]
    payloads = [payload for _, payload in rows]

    def insert(s: Session) -> int:
        # One statement per chunk; WITH ORDINALITY keeps the seeds' order in the ids.
        return s.count(
            "INSERT INTO items (key, payload, created_at, updated_at) "
            "SELECT k, p, %s, %s FROM unnest(%s::text[], %s::text[]) WITH ORDINALITY AS s(k, p, n) "
            "ORDER BY n ON CONFLICT (key) DO NOTHING",
            (stamp, stamp, keys, payloads),
        )

    # Not made again once sent: a chunk that landed would then count as present.
    return db.write(
        insert, what=f"adding {len(keys)} item(s)", idempotent=False,
        outcome="That chunk of items was either wholly added or not at all; adding the same "
        "seeds again adds only what is missing",
    )  # fmt: skip


def get(db: Database, key: str) -> Item:
    rows = db.read(lambda s: s.rows(f"SELECT {ITEM_COLUMNS} FROM items WHERE key = %s", (key,)))
    if not rows:
        raise NotFound(f"no item with key {key!r} in {db.location}")
    return item_of(rows[0])


def snapshot(db: Database, key: str) -> tuple[Item, list[Attempt]]:
    rows = db.read(lambda s: s.rows(_SNAPSHOT, (key,)))
    if not rows:
        raise NotFound(f"no item with key {key!r} in {db.location}")
    log = [attempt_of(key, r[ITEM_WIDTH:]) for r in rows if r[ITEM_WIDTH] is not None]
    return item_of(rows[0]), log


# The items one of whose texts holds every word (reins.store.search), each side through its
# GIN index: the expressions are those the indexes of schema v6 are built on.
_SEARCH = (
    "id IN (SELECT id FROM items WHERE reins_words(key || ' ' || coalesce(payload, '')) "
    "@@ to_tsquery('simple', %s) UNION SELECT item_id FROM attempts WHERE "
    "reins_words(coalesce(submission, '') || ' ' || coalesce(facts, '')) "
    "@@ to_tsquery('simple', %s))"
)


def _search(words: tuple[str, ...]) -> tuple[str, list[object]]:
    # Each word is letters and digits only, so nothing in it is tsquery syntax; :* a prefix.
    query = " & ".join(f"{w}:*" for w in words)
    return _SEARCH, [query, query]


def page(db: Database, query: PageQuery) -> Page:
    statement, args = page_select(query, "%s", find="strpos(key, {mark}) > 0", search=_search)
    return page_of(db.read(lambda s: s.rows(statement, args)), query.limit)


def activity(db: Database, *, samples: int, window: int) -> Activity:
    total, low, high = db.read(
        lambda s: s.rows(
            "SELECT (SELECT coalesce(sum(n), 0) FROM kind_counts), "
            "(SELECT min(id) FROM attempts), (SELECT max(id) FROM attempts)"
        )
    )[0]
    if low is None:
        return Activity((), 0)
    query = f"SELECT {MARK_COLUMNS} FROM attempts WHERE id BETWEEN %s AND %s ORDER BY id"
    runs = [(query, run) for run in sample_runs(low, high, samples=samples, window=window)]
    # Every run in one round trip; a turn landing between the two reads only adds a mark.
    found = db.read(lambda s: s.batch(*runs))
    marks = tuple(mark_of(r) for rows in found for r in rows)
    return Activity(marks, max(int(total), len(marks)))


def recent(db: Database, limit: int) -> list[Attempt]:
    return keyed_attempts(db.read(lambda s: s.rows(RECENT.format(mark="%s"), (limit,))))


def last_attempts(db: Database, keys: list[str]) -> list[Attempt]:
    statement = LAST_ATTEMPTS.format(marks=", ".join(["%s"] * len(keys)))
    return keyed_attempts(db.read(lambda s: s.rows(statement, keys)))
