"""The review queue and the re-judge preview: what waits for a person, and what the current
gate would say of locked items (nothing recorded).

A reviewer decides from three things side by side: the item's own text (its payload as the
quest renders it, the first layer of every prompt), the submission, and the facts that raised
the doubt.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

from reins.quest import Quest
from reins.store.model import Attempt, Item, State
from reins.store.protocol import Store
from reins.store.query import PageQuery
from reins.web.words import answer, what


@dataclass(frozen=True, slots=True)
class Source:
    """The item as the reviewer reads it: ``text`` and what it is (``rendered``: as the quest
    renders it; else the payload, with ``problem`` saying why when the quest could not)."""

    text: str
    rendered: bool
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class Waiting:
    """A REVIEW item with its own text and the attempt that locked it (its facts raised the
    doubt), ``what`` that attempt was ("REVIEW on answer 1 of 3")."""

    item: Item
    source: Source
    last: Attempt | None
    what: str | None


@dataclass(frozen=True, slots=True)
class Queue:
    entries: tuple[Waiting, ...]
    next: int | None
    waiting: int


def source(quest: Quest | None, item: Item) -> Source:
    """The item's text as its quest renders it; its payload without the quest, or when the
    quest's render fails on it (then saying why, rather than failing the page)."""
    payload = json.dumps(item.payload, indent=2, ensure_ascii=False, sort_keys=True)
    if quest is None:
        return Source(payload, rendered=False)
    try:
        return Source(quest.render(item), rendered=True)
    except Exception as exc:  # a quest's code on a payload it did not expect: show, not fail
        return Source(payload, rendered=False, problem=f"{type(exc).__name__}: {exc}")


def queue(store: Store, quest: Quest | None, wanted: PageQuery) -> Queue:
    """The REVIEW items among those ``wanted`` (whatever state it names), with their text and
    last attempts, and how many wait in all."""
    page = store.page(replace(wanted, state=State.REVIEW))
    allowed = None if quest is None else quest.max_tries
    entries = []
    for listed in page.items:
        item, log = store.snapshot(listed.key)
        if item.state is not State.REVIEW:  # a person may have settled it since
            continue
        last = log[-1] if log else None
        said = None if last is None else what(last, allowed)
        entries.append(Waiting(item, source(quest, item), last, said))
    return Queue(tuple(entries), page.next, store.stats().counts[State.REVIEW])


@dataclass(frozen=True, slots=True)
class Change:
    """A locked item whose verdict the current gate would change (or on which it fails)."""

    key: str
    state: str
    answer: int | None
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
                answer=answer(found.locking),
                was=found.locking.outcome or "-",
                was_root=found.locking.root_cause,
                now="judge error" if isinstance(now, JudgeFailure) else now.outcome.value,
                now_root=None if isinstance(now, JudgeFailure) else now.root_cause,
                error=now.error if isinstance(now, JudgeFailure) else None,
            )
        )
    return Preview(tuple(changes), len(locked), page.next)
