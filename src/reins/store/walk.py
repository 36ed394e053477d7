"""Walking a whole ledger through the protocol: every item, every log, a digest, a copy."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import TypeVar

from reins.store.codec import attempt_row
from reins.store.model import Attempt, Item, State
from reins.store.protocol import Store
from reins.store.query import PageQuery

PAGE = 1_000
T = TypeVar("T")


def chunks(values: Iterable[T], size: int) -> Iterator[list[T]]:
    """``values`` in lists of ``size`` (the last may be shorter), read lazily."""
    chunk: list[T] = []
    for value in values:
        chunk.append(value)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def iter_items(store: Store, query: PageQuery | None = None) -> Iterator[Item]:
    """Every item ``query`` asks for (default: every item) in its order, from its cursor on,
    read :data:`PAGE` at a time whatever its ``limit``.

    Each page is its own short read, so a caller may write to the ledger while it iterates.
    """
    wanted = replace(query or PageQuery(), limit=PAGE)
    while True:
        page = store.page(wanted)
        yield from page.items
        if page.next is None:
            return
        wanted = replace(wanted, after=page.next)


def passes_by_try(store: Store, max_tries: int) -> tuple[int, ...]:
    """Items in PASS, by the try on which they passed (``tries`` counts the FAILs before).

    Reads the PASS items only, a page at a time: cheap beside the log of every attempt.
    """
    found = Counter(item.tries + 1 for item in iter_items(store, PageQuery(state=State.PASS)))
    last = max([max_tries, *found]) if found else max_tries
    return tuple(found.get(t, 0) for t in range(1, last + 1))


def entries(store: Store) -> Iterator[tuple[Item, list[Attempt]]]:
    """Every item with its whole log."""
    for item in iter_items(store):
        yield store.snapshot(item.key)


def log_digest(store: Store) -> tuple[int, int, str]:
    """Items, attempts and a SHA-256 over both, independent of the engine that holds them.

    Leases and export marks are left out: they are bookkeeping of one run, not the record.
    """
    import hashlib  # here: the engines import this module on every start, digests are rare
    import json

    h = hashlib.sha256()
    n_items = n_attempts = 0
    for item, log in entries(store):
        n_items += 1
        n_attempts += len(log)
        head = [
            *(item.key, item.state.value, item.tries, item.turns, item.round),
            *(item.payload, item.locked_at, item.root_cause, item.gate_digest),
        ]
        h.update(json.dumps(head, ensure_ascii=True, sort_keys=True).encode())
        for attempt in log:
            h.update(json.dumps(attempt_row(attempt), ensure_ascii=True).encode())
    return n_items, n_attempts, h.hexdigest()


def copy(source: Store, target: Store) -> tuple[int, int, str]:
    """Copy every item and log from ``source`` into the empty ``target``, then verify.

    Returns the counts and digest both now share.

    Raises:
        LedgerError: ``target`` is not empty, or the copy does not match the source.
    """
    from reins.errors import LedgerError

    target.load(entries(source))
    want, got = log_digest(source), log_digest(target)
    if want != got:
        raise LedgerError(
            f"copy to {target.location} does not match its source: {want[0]} items, "
            f"{want[1]} attempts, digest {want[2][:12]} vs {got[0]}, {got[1]}, {got[2][:12]}"
        )
    return want
