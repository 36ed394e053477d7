"""The decided view: what people decided, newest first, and how much each reviewer did.

Read from the store's index of a person's actions (:meth:`Store.decisions
<reins.store.protocol.Store.decisions>`, a page at a time) and its counts per person
(:meth:`Store.reviewers <reins.store.protocol.Store.reviewers>`), so it costs the same however
long the log: who, when, what (on which item, to which state) and the note they wrote; on the
first page, how often each pair of reviewers agreed (:mod:`reins.web.agreement`).
"""

from __future__ import annotations

from dataclasses import dataclass

from reins.quest import Quest
from reins.store.model import Attempt
from reins.store.people import Reviewer
from reins.store.protocol import Store
from reins.web.agreement import Agreement, agreement
from reins.web.words import turn_text


@dataclass(frozen=True, slots=True)
class Decision:
    """One action of a person, and what it did in words ("accept by a person → PASS")."""

    attempt: Attempt
    what: str


@dataclass(frozen=True, slots=True)
class Decided:
    """A page of decisions (``next``: the cursor of the one after), the reviewers with their
    counts (``since``: those recorded today, from ``today``, UTC), and on the first page the
    agreement between them (None on later pages)."""

    entries: tuple[Decision, ...]
    next: int | None
    reviewers: tuple[Reviewer, ...]
    today: str
    first: bool
    agreement: Agreement | None = None


def decisions(
    store: Store, quest: Quest | None, before: int | None, limit: int, today: str
) -> Decided:
    allowed = None if quest is None else quest.max_tries
    page = store.decisions(before=before, limit=limit)
    entries = tuple(Decision(a, turn_text(a, allowed)) for a in page.attempts)
    people = tuple(store.reviewers(since=today))
    first = before is None
    agreed = agreement(store) if first else None
    return Decided(entries, page.next, people, today, first, agreed)
