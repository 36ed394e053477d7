"""What ``reins land`` lands, read from the ledger: each PASS item, in the stated order, with
the land items that stand for it on the branch, and the change to merge for it now.

An item's change is its PASS's commit (the last judged attempt's ``notes.commit``), unless a
land item for it (:mod:`reins.workspace.landtask`) is on the branch: then the newest decides.
Its PASS is the change to merge in the item's place (never both); one still to do makes the
item wait for it; one locked without a pass leaves it to a person. A land item is never landed
on its own: it takes its item's place in the order.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from reins.errors import NotFound
from reins.store.model import Attempt, Item, State
from reins.store.protocol import Store
from reins.store.query import PageQuery
from reins.store.walk import iter_items
from reins.workspace.landtask import PREFIX, LandTask, land_key
from reins.workspace.submission import patch_at

ORDERS = ("locked", "key")
"""``--order``: the order the items locked (the default), or the order of their keys."""
WAITING, STUCK, EMPTY = "waiting", "stuck", "empty"


@dataclass(frozen=True, slots=True)
class Change:
    """A change to merge for item ``key``: ``commit`` (None: no store may hold it, only the
    recorded ``patch``), made on ``parent`` (the base, or a land item's integration commit),
    and the land item it comes through (``via``; None: the item's own PASS)."""

    key: str
    commit: str | None
    patch: str | None
    parent: str
    via: str | None = None


@dataclass(frozen=True, slots=True)
class Held:
    """Why an item has no change to merge now: ``outcome`` is ``waiting`` (its land item is
    still to do), ``stuck`` (its land item locked without a pass: a person's to decide) or
    ``empty`` (its PASS records no change), and ``note`` says so to the person."""

    outcome: str
    note: str


@dataclass(frozen=True, slots=True)
class Candidate:
    """A PASS item and its land items on the branch (``tasks``, oldest first)."""

    item: Item
    tasks: tuple[tuple[Item, LandTask], ...] = ()
    numbers: tuple[int, ...] = ()  # every land item's number of this item, on any branch

    @property
    def key(self) -> str:
        return self.item.key

    @property
    def newest(self) -> tuple[Item, LandTask] | None:
        return self.tasks[-1] if self.tasks else None

    def next_number(self, store: Store) -> int:
        """The number of the next land item of this item (its key not taken by any item)."""
        number = max(self.numbers, default=0) + 1
        while _exists(store, land_key(self.key, number)):
            number += 1
        return number


def candidates(store: Store, branch: str, order: str) -> list[Candidate]:
    """The PASS items of the ledger that are not land items, in ``order``, each with its land
    items on ``branch``."""
    tasks: dict[str, list[tuple[Item, LandTask]]] = defaultdict(list)
    numbers: dict[str, list[int]] = defaultdict(list)
    for item in iter_items(store, PageQuery(contains=PREFIX)):
        task = LandTask.of(item.payload)
        if task is None:
            continue
        numbers[task.item].append(task.number)
        if task.branch == branch:
            tasks[task.item].append((item, task))
    passed = [
        item
        for item in iter_items(store, PageQuery(state=State.PASS))
        if LandTask.of(item.payload) is None
    ]
    if order == "key":
        passed.sort(key=lambda i: i.key)
    else:
        passed.sort(key=lambda i: (i.locked_at or "", i.key))
    return [
        Candidate(i, tuple(sorted(tasks[i.key], key=lambda t: t[1].number)), tuple(numbers[i.key]))
        for i in passed
    ]


def land_items(store: Store) -> list[Item]:
    """The ledger's land items (keyed ``land/…``, a land task's payload), in the order added:
    ``reins land``'s, counted apart from the quest's own items."""
    found = iter_items(store, PageQuery(contains=PREFIX))
    return [i for i in found if i.key.startswith(PREFIX) and LandTask.of(i.payload) is not None]


def change_of(store: Store, candidate: Candidate, base: str) -> Change | Held:
    """The change to merge for ``candidate`` now, or why there is none."""
    newest = candidate.newest
    if newest is None:
        _, log = store.snapshot(candidate.key)
        found = _change(candidate.key, log, base, via=None)
        return found or Held(EMPTY, f"{candidate.key}: its PASS records no change to land")
    item, task = newest
    if item.state is State.TODO:
        return Held(WAITING, f"{item.key} is still to do: it lands {candidate.key} once it passes")
    if item.state is not State.PASS:
        return Held(STUCK, f"{item.key} locked {item.state.value} without a pass: a person "
                           f"decides (`reins reopen {item.key}`, or land {candidate.key} by "
                           "hand)")  # fmt: skip
    _, log = store.snapshot(item.key)
    found = _change(candidate.key, log, base, via=item.key, parent=task.onto)
    return found or Held(EMPTY, f"{item.key}: its PASS records no change to land")


def _change(
    key: str, log: Sequence[Attempt], base: str, *, via: str | None, parent: str | None = None
) -> Change | None:
    """The change the last judged attempt of ``log`` recorded (its commit and patch)."""
    for attempt in reversed(log):
        if attempt.judged:
            notes = attempt.notes
            commit = notes.commit
            patch = patch_at(attempt.submission, notes.patch_start, notes.patch_end)
            if attempt.notes.base != base or (commit is None and patch is None):
                return None
            return Change(key, commit, patch, parent or base, via)
    return None


def _exists(store: Store, key: str) -> bool:
    try:
        store.get(key)
    except NotFound:
        return False
    return True
