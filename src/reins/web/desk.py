"""The reviewer's desk: what a review card adds to an item's text, submission and facts.

- **Marks**: a fact's ``actual`` where it occurs in the item's text or the submission, so the
  value that raised the doubt stands out where it was found (:func:`marked`).
- **The rules**: each fact's rule with its level and description, and the coaching the quest
  gives a generator for the root cause (:func:`rule_notes`).
- **What a decision does**: Accept locks PASS, Reject locks DONE; either can be undone for
  :data:`UNDO_WINDOW` seconds (a person's reopen, recorded as such: the item goes back to TODO
  in a new round).
- **Claims**: a person's lease on a REVIEW item (:mod:`reins.store.people`) for
  :data:`CLAIM_TTL` seconds, which others see.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from reins.quest import Quest
from reins.store.model import Attempt, Item
from reins.values import Fact

UNDO_WINDOW = 600.0  # seconds after a decision during which its banner offers to undo it
CLAIM_TTL = 1800.0  # seconds a claim lasts unless renewed, released or ended by a decision
MOST_MARKS = 200  # marks in one text: a value that occurs everywhere marks nothing useful
SHORTEST = 2  # characters a value needs to be marked (a lone letter would mark every word)


@dataclass(frozen=True, slots=True)
class Part:
    """A run of a text, ``hit`` when it is a flagged value."""

    text: str
    hit: bool = False


@dataclass(frozen=True, slots=True)
class RuleNote:
    """A rule behind the facts: its id, level and description, and the coaching the quest
    gives a generator after a FAIL rooted at it (None: none)."""

    rule: str
    level: str
    description: str
    coaching: str | None


@dataclass(frozen=True, slots=True)
class Hold:
    """Who holds a live claim on an item, and until when (a Unix time)."""

    owner: str
    until: float


def marked(text: str, facts: Iterable[Fact]) -> tuple[Part, ...]:
    """``text`` in runs, each occurrence of a fact's ``actual`` a hit (the longest first)."""
    values = sorted({f.actual.strip() for f in facts} - {""}, key=len, reverse=True)
    values = [v for v in values if len(v) >= SHORTEST]
    if not values or not text:
        return (Part(text),)
    pattern = re.compile("|".join(map(re.escape, values)))
    parts: list[Part] = []
    at = 0
    for n, found in enumerate(pattern.finditer(text)):
        if n >= MOST_MARKS:
            break
        if found.start() > at:
            parts.append(Part(text[at : found.start()]))
        parts.append(Part(found.group(0), hit=True))
        at = found.end()
    parts.append(Part(text[at:]))
    return tuple(p for p in parts if p.text)


def rule_notes(quest: Quest | None, last: Attempt | None) -> tuple[RuleNote, ...]:
    """The rules of ``last``'s facts (its root cause first), as the quest's catalog says
    them; nothing without the quest."""
    if quest is None or last is None:
        return ()
    named = [f.rule for f in last.facts if f.rule]
    if last.root_cause:
        named.insert(0, last.root_cause)
    catalog = {e.id: e for e in quest.judge.catalog()}
    notes = []
    for rule in dict.fromkeys(named):
        entry = catalog.get(rule)
        level = entry.level.value if entry is not None else "?"
        said = entry.description if entry is not None else "not in the current gate"
        notes.append(RuleNote(rule, level, said, (quest.coaching or {}).get(rule)))
    return tuple(notes)


def hold(item: Item, now: float) -> Hold | None:
    """The live claim on ``item``, if any (a lease on a REVIEW item is a person's claim)."""
    if item.lease_owner is None or (item.lease_expires or 0) <= now:
        return None
    return Hold(item.lease_owner, item.lease_expires or now)
