"""SQL both engines run alike, written once: each statement takes the engine's placeholder.

SQLite marks a parameter ``?``, psycopg ``%s``; everything else in these statements is plain
SQL both understand. What differs between the engines stays in their own modules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from reins.errors import LedgerError
from reins.store.codec import ATTEMPT_COLUMNS, ITEM_COLUMNS, attempt_of, item_of
from reins.store.model import Attempt, ExportClaim, ExportEntry, Page, State
from reins.store.provenance import FAULTS, SOUND
from reins.store.query import PageQuery

if TYPE_CHECKING:
    from reins.store.lockfault import LockFault

ITEM_WIDTH = len(ITEM_COLUMNS.split(","))


def prefixed(columns: str, alias: str) -> str:
    """``columns`` (comma-separated) each qualified by the table ``alias``."""
    return ", ".join(f"{alias}.{c.strip()}" for c in columns.split(","))


def page_select(
    query: PageQuery,
    mark: str,
    *,
    find: str = "instr(key, {mark}) > 0",
    search: Callable[[tuple[str, ...]], tuple[str, list[object]]] | None = None,
) -> tuple[str, list[object]]:
    """The statement and arguments of one keyset page of items, one row more than the page
    holds (see :func:`page_of`), with ``mark`` as placeholder.

    Both engines page the same way: by insertion id after the cursor (before it, newest first,
    when descending), optionally of one state, one last root cause, one lease holder or one
    round (each has an index), whose key contains a text (``find``: the engine's own
    substring test, case-sensitive on both), or whose texts hold words (``search``: the
    engine's clause over its word index for the words of :func:`reins.store.search.words`,
    with its arguments; a search without a word matches nothing).
    """
    where: list[str] = []
    args: list[object] = []
    if query.descending:
        if query.after is not None:
            where.append(f"id < {mark}")
            args.append(query.after)
    else:
        where.append(f"id > {mark}")
        args.append(query.after or 0)
    leased_to = query.leased_to
    for column, value in (("state", query.state), ("root_cause", query.rule)):
        if value is not None:
            # A lease holder has a handful of items: its index is the one to use. Beside it,
            # `state = ?` led SQLite down the (state, id) index through every TODO item (15 ms
            # at 100k items, against 0.03 ms); `column || ''` (same value, no index) steers
            # both planners to the lease index.
            where.append(
                f"{column} || '' = {mark}" if leased_to is not None else f"{column} = {mark}"
            )
            args.append(value.value if isinstance(value, State) else value)
    if leased_to is not None:
        where.append(f"lease_owner = {mark}")
        args.append(leased_to)
    if query.round is not None:
        # Spelled out so that both planners pick the partial index items_reopened.
        where.append(f"round > 1 AND round = {mark}" if query.round > 1 else f"round = {mark}")
        args.append(query.round)
    if query.contains:
        where.append(find.format(mark=mark))
        args.append(query.contains)
    if query.search is not None:
        clause, more = _search(query.search, search)
        where.append(clause)
        args += more
    order = "DESC" if query.descending else ""
    statement = (
        f"SELECT {ITEM_COLUMNS}, id FROM items WHERE {' AND '.join(where) or 'TRUE'} "
        f"ORDER BY id {order} LIMIT {mark}"
    )
    return statement, [*args, query.limit + 1]


def _search(
    text: str, search: Callable[[tuple[str, ...]], tuple[str, list[object]]] | None
) -> tuple[str, list[object]]:
    """The where-clause of a search for ``text`` and its arguments (no word: nothing)."""
    from reins.store.search import words  # only a search loads it (next, submit do not)

    if search is None:
        raise LedgerError("this ledger's engine keeps no word index: it cannot search")
    found = words(text)
    return search(found) if found else ("FALSE", [])


def page_of(rows: list[Any], limit: int) -> Page:
    """The page of rows read by :func:`page_select`: one row more than asked says whether a
    next page exists (the last page has no cursor)."""
    items = tuple(item_of(r) for r in rows[:limit])
    return Page(items, rows[limit - 1][-1] if len(rows) > limit else None)


# The terminal items an export claims: unexported, and locked by an attempt
# (reins.store.provenance); the others are refused, left unmarked, and listed by REFUSED.
EXPORTABLE = f"i.state <> 'TODO' AND i.export_batch IS NULL AND {SOUND}"
REFUSED = FAULTS.format(also=" AND i.export_batch IS NULL")


def refused_of(rows: Iterable[Any]) -> list[LockFault]:
    """The faults of rows read by :data:`REFUSED`."""
    found = list(rows)
    if not found:  # the usual case: no forged lock, and nothing of their wording loaded
        return []
    from reins.store.lockfault import LockFault

    return [LockFault.of(row) for row in found]


# Each item of an export claim with the attempt its record shows, in one query: for a lock the
# one that locked it (its last), for a withdrawal the person's action that opened its round.
ENTRIES = (
    f"SELECT {prefixed(ITEM_COLUMNS, 'i')}, {prefixed(ATTEMPT_COLUMNS, 'a')} "
    "FROM items i LEFT JOIN attempts a ON a.item_id = i.id AND a.turn = CASE "
    "WHEN i.state = 'TODO' THEN (SELECT min(x.turn) FROM attempts x "
    "WHERE x.item_id = i.id AND x.round = i.round) ELSE i.turns END "
    "WHERE i.export_batch = {mark} ORDER BY i.id"
)


# The DONE items a person dropped (their last attempt a person's drop), through the index of a
# person's actions: status counts them without reading the items.
DROPPED = (
    "SELECT count(*) FROM attempts a JOIN items i ON i.id = a.item_id AND i.turns = a.turn "
    "WHERE a.kind = 'human' AND a.action = 'drop' AND i.state = 'DONE'"
)
# The log's newest attempts, newest first, each with its item's key (read backwards by id).
RECENT = (
    f"SELECT i.key, {prefixed(ATTEMPT_COLUMNS, 'a')} FROM attempts a "
    "JOIN items i ON i.id = a.item_id ORDER BY a.id DESC LIMIT {mark}"
)
# The last attempt of each named item: the one whose turn is the item's turn count.
LAST_ATTEMPTS = (
    f"SELECT i.key, {prefixed(ATTEMPT_COLUMNS, 'a')} FROM items i "
    "JOIN attempts a ON a.item_id = i.id AND a.turn = i.turns WHERE i.key IN ({marks})"
)


def keyed_attempts(rows: Iterable[Any]) -> list[Attempt]:
    """The attempts of rows read by :data:`RECENT` or :data:`LAST_ATTEMPTS` (key first)."""
    return [attempt_of(row[0], row[1:]) for row in rows]


def batch_of(batch: int, path: str, offset: int, rows: Iterable[Any]) -> ExportClaim:
    """An export batch from the rows :data:`ENTRIES` read of it."""
    entries = []
    for row in rows:
        item = item_of(row[:ITEM_WIDTH])
        tail = row[ITEM_WIDTH:]
        attempt = None if tail[0] is None else attempt_of(item.key, tail)
        entries.append(ExportEntry(item, attempt))
    return ExportClaim(batch, path, offset, tuple(entries))


# A withdrawal owed to the file that the item's exported lock went to (see
# reins.store.withdrawal), read before the turn clears the item's mark: the entry's key, the
# item's id.
OWE = (
    "INSERT INTO meta (key, value) SELECT {mark}, b.path FROM items i "
    "JOIN export_batches b ON b.id = i.export_batch WHERE i.id = {mark} "
    "ON CONFLICT (key) DO UPDATE SET value = excluded.value"
)
