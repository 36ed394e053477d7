"""The review queue, live: what changed since a reviewer's page was drawn.

A page of the queue polls ``/api/queue`` with the keys it shows and its filter. The answer says,
of each key, whether it still waits, who claims it and until when, and who settled it
otherwise; and which items now wait under the same filter that the page does not show. The
page marks what changed in place and never moves a card under the person's keys, nor drops
what they typed: new items are offered, not inserted (``static/reins.js``). Claims are no turns
(the board's pulse does not move with them), so the queue is read on every poll: a page of
items and the last attempts of the keys shown, a few indexed reads.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from reins.errors import NotFound
from reins.store.model import State
from reins.store.protocol import Store
from reins.store.query import PageQuery
from reins.web.desk import clock, hold
from reins.web.words import decided

MOST_KEYS = 100  # keys one poll asks about: a page of the queue shows 20


@dataclass(frozen=True, slots=True)
class CardNow:
    """One shown item as it is now: ``waiting`` (still REVIEW), its claim's ``holder`` and
    ``until`` (a time of day), and, settled, ``settled`` in words ("accepted by bob")."""

    key: str
    waiting: bool
    state: str
    holder: str | None
    until: str | None
    settled: str | None

    def to_json(self) -> dict[str, object]:
        return {
            "key": self.key,
            "waiting": self.waiting,
            "state": self.state,
            "holder": self.holder,
            "until": self.until,
            "settled": self.settled,
        }


@dataclass(frozen=True, slots=True)
class QueueNow:
    """``/api/queue``: how many wait in all, the shown cards now, and the keys now waiting on
    the page's filter that it does not show (``fresh``)."""

    waiting: int
    cards: tuple[CardNow, ...]
    fresh: tuple[str, ...]

    def to_json(self) -> dict[str, object]:
        return {
            "waiting": self.waiting,
            "cards": [c.to_json() for c in self.cards],
            "fresh": list(self.fresh),
        }


def queue_now(store: Store, wanted: PageQuery, shown: list[str]) -> QueueNow:
    """The queue under ``wanted`` now, for a page that shows the keys ``shown``."""
    keys = list(dict.fromkeys(shown))[:MOST_KEYS]
    now = time.time()
    last = store.last_attempts(keys)
    cards = []
    for key in keys:
        try:
            item = store.get(key)
        except NotFound:
            continue  # not an item of this ledger: nothing to say of it
        held = hold(item, now) if item.state is State.REVIEW else None
        waiting = item.state is State.REVIEW
        cards.append(
            CardNow(
                key,
                waiting,
                item.state.value,
                None if held is None else held.owner,
                None if held is None else clock(held.until),
                None if waiting else decided(last.get(key)) or f"now {item.state.value}",
            )
        )
    page = store.page(replace(wanted, state=State.REVIEW))
    seen = set(keys)
    fresh = tuple(i.key for i in page.items if i.key not in seen)
    return QueueNow(store.stats().counts[State.REVIEW], tuple(cards), fresh)
