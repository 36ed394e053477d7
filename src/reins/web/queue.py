"""The review queue and the re-judge preview: what waits for a person, and what the current
gate would say of locked items (nothing recorded).

A reviewer decides from three things side by side: the item's own text (its payload as the
quest renders it, the first layer of every prompt), the submission, and the facts that raised
the doubt, with the flagged value marked where it occurs, the rules behind the facts and what
a decision locks (:mod:`reins.web.desk`); a coding item's submission as its diff, per file
(:mod:`reins.web.patch`); a retried answer with what changed since the previous one
(:mod:`reins.web.changed`). The queue may be narrowed to a root cause and to the items whose
texts hold some words (the store's search).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

from reins.quest import Quest
from reins.store.model import Attempt, Item, State
from reins.store.protocol import Store
from reins.store.query import PageQuery
from reins.store.search import words
from reins.turn.review import Source, source
from reins.web.changed import Changed, retried
from reins.web.desk import (
    Hold,
    Part,
    RuleNote,
    fact_texts,
    hidden,
    highlighted,
    hold,
    marked,
    rule_notes,
)
from reins.web.patch import Patch, patch
from reins.web.words import answer, what


@dataclass(frozen=True, slots=True)
class Waiting:
    """A REVIEW item with its own text and the attempt that locked it (its facts raised the
    doubt), ``what`` that attempt was ("REVIEW on answer 1 of 3"); the item's text and the
    submission in runs with the flagged values marked (``text``, ``answer``), a coding
    submission per file (``change``), the rules behind the facts, who claimed it, how many
    hidden characters (bidirectional controls, zero-widths) the card shows as markers, and
    what changed since the item's previous answer (``retry``; None for a first answer or a
    coding change)."""

    item: Item
    source: Source
    last: Attempt | None
    what: str | None
    text: tuple[Part, ...] = ()
    answer: tuple[Part, ...] = ()
    change: Patch | None = None
    rules: tuple[RuleNote, ...] = ()
    hold: Hold | None = None
    hidden: int = 0
    retry: Changed | None = None


@dataclass(frozen=True, slots=True)
class Queue:
    """A page of the queue; ``matched``: how many REVIEW items the filter finds (None with no
    filter), counted up to :data:`MOST_COUNTED` (``more``: there are more than that)."""

    entries: tuple[Waiting, ...]
    next: int | None
    waiting: int
    filter: PageQuery = field(default_factory=PageQuery)
    rules: tuple[str, ...] = ()
    matched: int | None = None
    more: bool = False


MOST_COUNTED = 1000  # a search's matches counted, at most: past it the page says "more than"
COUNTED_PAGE = 500


def waiting(
    quest: Quest | None,
    item: Item,
    last: Attempt | None,
    now: float,
    searched: tuple[str, ...] = (),
    log: list[Attempt] | None = None,
) -> Waiting:
    """One card of the queue: ``item`` and its last attempt, with all a reviewer reads (and
    the ``searched`` words marked where they occur; ``log``: the item's, for what changed
    since its previous answer)."""
    allowed = None if quest is None else quest.max_tries
    shown = source(quest, item)
    facts = () if last is None else last.facts
    submission = None if last is None else last.submission
    change = patch(last)
    retry = None if change is not None or not log else retried(log, last)
    gone = () if retry is None else [p.text for p in retry.pieces if p.kind == "del"]
    return Waiting(
        item,
        shown,
        last,
        None if last is None else what(last, allowed),
        text=highlighted(marked(shown.text, facts), searched),
        answer=()
        if submission is None or change
        else highlighted(marked(submission, facts), searched),
        change=change,
        rules=rule_notes(quest, last),
        hold=hold(item, now),
        hidden=hidden(item.key, shown.text, submission, *fact_texts(facts), *gone),
        retry=retry,
    )


def queue(store: Store, quest: Quest | None, wanted: PageQuery) -> Queue:
    """The REVIEW items among those ``wanted`` (whatever state it names), with their text and
    last attempts, and how many wait in all."""
    page = store.page(replace(wanted, state=State.REVIEW))
    now = time.time()
    searched = words(wanted.search) if wanted.search else ()
    entries = []
    for listed in page.items:
        item, log = store.snapshot(listed.key)
        if item.state is not State.REVIEW:  # a person may have settled it since
            continue
        entries.append(waiting(quest, item, waits_on(log), now, searched, log))
    stats = store.stats()
    matched, more = matching(store, wanted) if wanted.rule or wanted.search else (None, False)
    return Queue(
        tuple(entries),
        page.next,
        stats.counts[State.REVIEW],
        wanted,
        tuple(sorted(stats.rules)),
        matched,
        more,
    )


def waits_on(log: list[Attempt]) -> Attempt | None:
    """The turn a REVIEW item waits on: its last with an answer (a judged turn, or a person's
    re-judge), since a person's undo after it carries none; else its last."""
    found = (a for a in reversed(log) if a.submission is not None)
    return next(found, log[-1] if log else None)


def matching(store: Store, wanted: PageQuery) -> tuple[int, bool]:
    """How many REVIEW items ``wanted`` finds, from its first page on (at most
    :data:`MOST_COUNTED`), and whether there are more: the store's own pages, read through."""
    query = replace(wanted, state=State.REVIEW, after=None, limit=COUNTED_PAGE)
    counted = 0
    while counted < MOST_COUNTED:
        page = store.page(query)
        counted += len(page.items)
        if page.next is None:
            return counted, False
        query = replace(query, after=page.next)
    return MOST_COUNTED, True


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
