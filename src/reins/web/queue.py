"""The review queue and the re-judge preview: what waits for a person, and what the current
gate would say of locked items (nothing recorded)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from reins.quest import Quest
from reins.store.model import Attempt, Item, State
from reins.store.protocol import Store
from reins.store.query import PageQuery


@dataclass(frozen=True, slots=True)
class Waiting:
    """A REVIEW item with the attempt that locked it (its facts raised the doubt)."""

    item: Item
    last: Attempt | None


@dataclass(frozen=True, slots=True)
class Queue:
    entries: tuple[Waiting, ...]
    next: int | None
    waiting: int


def queue(store: Store, wanted: PageQuery) -> Queue:
    """The REVIEW items among those ``wanted`` (whatever state it names), with their last
    attempts, and how many wait in all."""
    page = store.page(replace(wanted, state=State.REVIEW))
    entries = []
    for listed in page.items:
        item, log = store.snapshot(listed.key)
        if item.state is State.REVIEW:  # a person may have settled it since the page was read
            entries.append(Waiting(item, log[-1] if log else None))
    return Queue(tuple(entries), page.next, store.stats().counts[State.REVIEW])


@dataclass(frozen=True, slots=True)
class Change:
    """A locked item whose verdict the current gate would change (or on which it fails)."""

    key: str
    state: str
    was: str
    was_root: str | None
    now: str
    now_root: str | None
    error: str | None


@dataclass(frozen=True, slots=True)
class Preview:
    changes: tuple[Change, ...]
    checked: int
    next: int | None


def rejudge_preview(store: Store, quest: Quest, wanted: PageQuery) -> Preview:
    """Re-judge the locked items of one page (the CLI's ``rejudge`` dry run, a page at a
    time)."""
    from reins.turn.failures import JudgeFailure
    from reins.turn.lane import rejudge

    page = store.page(wanted)
    locked = [i for i in page.items if i.state.terminal]
    changes = []
    for found in rejudge(store, quest, locked):
        broken = isinstance(found.now, JudgeFailure)
        if not found.changed and not broken:
            continue
        now = found.now
        changes.append(
            Change(
                key=found.item.key,
                state=found.item.state.value,
                was=found.locking.outcome or "-",
                was_root=found.locking.root_cause,
                now="judge error" if isinstance(now, JudgeFailure) else now.outcome.value,
                now_root=None if isinstance(now, JudgeFailure) else now.root_cause,
                error=now.error if isinstance(now, JudgeFailure) else None,
            )
        )
    return Preview(tuple(changes), len(locked), page.next)
