"""What a results file lacks, read from the file itself: for a file the export marks do not
speak for.

The export marks (:mod:`reins.store.export`) say which locks went out, once, to whichever file
claimed them. A file holds them all when it was left whole by its last export (that export
found no other export claiming meanwhile, and read the file if it had to), nothing has been
exported anywhere since (the ``export.last`` token is the one that export left), and it is no
shorter than it was left (not deleted, not cut). Any other file (a new one, ``export --out``
another, one deleted or cut, one another export went to since) holds what it holds, and only
its lines say what: the last record of each key (``key``, ``state``, ``turns``, ``round``).
:func:`lacking` compares them with the ledger and gives what the file lacks, each once: a lock
it does not hold (none of the key, or an older one), and a withdrawal of a lock it holds that
no longer stands (the item is TODO again). A line that is not a record is left as it is.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from reins.store import withdrawal
from reins.store.model import Attempt, ExportEntry, Item, State
from reins.store.protocol import Store
from reins.store.walk import iter_items

CHUNK = 500  # items whose attempts are read at once

Held = tuple[object, object, object]  # a record's state, turns and round


def held(path: Path) -> dict[str, Held]:
    """The last record of each key in the file at ``path`` (none when it does not exist)."""
    found: dict[str, Held] = {}
    try:
        with path.open("rb") as f:
            for line in f:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue  # not a record (a line cut by a crash, a line of someone else's)
                if isinstance(record, dict) and isinstance(record.get("key"), str):
                    found[record["key"]] = (
                        record.get("state"), record.get("turns"), record.get("round")
                    )  # fmt: skip
    except FileNotFoundError:
        pass
    return found


def lacking(store: Store, path: Path) -> Iterator[ExportEntry]:
    """Every record the file at ``path`` lacks, in the ledger's order: each exported lock it
    does not hold, each withdrawal of a lock it holds that is TODO again.

    A lock not exported yet is not the file's to read: the claims write it, once, to the file
    the export goes to (it may have locked since they ran); so is a withdrawal owed to this
    very file. A lock no attempt produced is never exported, so never written.
    """
    holds = held(path)
    locks: list[Item] = []
    for item in iter_items(store):
        last = holds.get(item.key)
        if item.state is State.TODO:
            if last is not None and last[0] != State.TODO.value:
                if store.meta(withdrawal.meta_key(item.key)) == str(path):
                    continue  # owed to this file: the next claim writes it
                yield from _locks(store, locks)  # in the ledger's order
                locks = []
                yield ExportEntry(item, _reopened_by(store, item))
        elif item.exported and last != (item.state.value, item.turns, item.round):
            locks.append(item)
            if len(locks) >= CHUNK:
                yield from _locks(store, locks)
                locks = []
    yield from _locks(store, locks)


def _locks(store: Store, items: list[Item]) -> Iterator[ExportEntry]:
    """The entries of locked ``items``: each with the attempt that locked it (its last)."""
    if not items:
        return
    attempts = store.last_attempts([i.key for i in items])
    for item in items:
        yield ExportEntry(item, attempts.get(item.key))


def _reopened_by(store: Store, item: Item) -> Attempt | None:
    """The attempt that opened a TODO item's round (a person's reopen), as a withdrawal's
    record names it."""
    _, log = store.snapshot(item.key)
    return next((a for a in log if a.round == item.round), None)
