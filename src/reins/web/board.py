"""The board: a quest run's figures at a glance, computed from kept counters and a sample.

Everything comes from :meth:`Store.stats` (counters, never a scan), :meth:`Store.activity`
(a sample of the log whose size does not grow with it) and :meth:`Store.recent` (the log's
newest turns, read from its end), so the board costs the same at a thousand items and at a
million.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from reins.quest import Quest
from reins.store.model import Attempt, State, Stats
from reins.store.protocol import Store
from reins.web.charts import Bar, TimeChart, bars, time_chart, tries_to_lock
from reins.web.spend import Spend
from reins.web.words import turn_text

if TYPE_CHECKING:
    from reins.figures import Figure

FEED = 12  # recent turns on the board
# The usage table's words for the kinds of attempt (the ledger's names are for programs).
KINDS = {
    "judged": "judged answers",
    "generation_error": "generation errors",
    "judge_error": "judge errors",
    "human": "a person's actions",
}


@dataclass(frozen=True, slots=True)
class StateCount:
    state: str
    n: int
    share: float  # of all items, 0..1

    @property
    def terminal(self) -> bool:
        return State(self.state).terminal


@dataclass(frozen=True, slots=True)
class Recent:
    """A turn in the board's feed: the attempt (who, which item, when) and what happened, as
    the loop's line says it ("FAIL (rule) → TODO, 1 of 3 failures used")."""

    attempt: Attempt
    what: str


@dataclass(frozen=True, slots=True)
class RuleRow:
    """A rule: how often it fired, and how often it was the root cause of a verdict."""

    rule: str
    fired: int
    root: int


@dataclass(frozen=True, slots=True)
class Board:
    location: str
    quest: str | None
    counts: tuple[StateCount, ...]
    total: int
    remaining: int
    leased: int
    attempts: int
    kinds: tuple[tuple[str, int], ...]
    reopened: int
    rules: tuple[RuleRow, ...]
    input_tokens: int
    output_tokens: int
    cost: float
    gate: str | None
    older_gate: int | None
    chart: TimeChart
    tries_to_lock: tuple[Bar, ...]  # labelled by the answer that locked (1 = the first)
    tries_used: tuple[Bar, ...]  # labelled by the failures used
    feed: tuple[Recent, ...]
    allowed: int | None
    version: int
    spend: Spend  # cache reads and writes, the list price, and what caching and batching saved
    claimed: int = 0  # REVIEW items a person holds a live claim on (leased: TODO items only)

    @property
    def locked(self) -> int:
        return self.total - self.remaining

    @property
    def progress(self) -> float:
        """Locked items as a percentage of all items (100 for an empty run: nothing is left)."""
        return 100.0 * self.locked / self.total if self.total else 100.0

    def count(self, state: str) -> int:
        return next((c.n for c in self.counts if c.state == state), 0)


def version(stats: Stats) -> int:
    """A number that changes whenever the ledger does: every turn and every added item."""
    return sum(stats.kinds.values()) + stats.total


def pulse(store: Store) -> int:
    """The ledger's :func:`version`, from counters only: what a live page polls."""
    return version(store.stats())


def board(store: Store, quest: Quest | None) -> Board:
    stats = store.stats()
    activity = store.activity()
    total = stats.total
    current = quest.gate_digest if quest is not None else None
    older = stats.older_gate(current)
    allowed = None if quest is None else quest.max_tries
    feed = tuple(Recent(a, turn_text(a, allowed)) for a in store.recent(limit=FEED))
    return Board(
        location=store.location,
        quest=None if quest is None else quest.name,
        counts=tuple(
            StateCount(s.value, n, n / total if total else 0.0) for s, n in stats.counts.items()
        ),
        total=total,
        remaining=stats.remaining,
        leased=stats.leased,
        attempts=sum(stats.kinds.values()),
        kinds=tuple((KINDS.get(k, k), n) for k, n in sorted(stats.kinds.items())),
        reopened=stats.reopened,
        rules=tuple(RuleRow(r, f, root) for r, (f, root) in stats.rules.items()),
        input_tokens=stats.input_tokens,
        output_tokens=stats.output_tokens,
        cost=stats.cost,
        gate=current,
        older_gate=older,
        chart=time_chart(activity),
        tries_to_lock=bars(tries_to_lock(activity)),
        tries_used=bars(stats.tries),
        feed=feed,
        allowed=allowed,
        version=version(stats),
        spend=Spend.of(stats),
        claimed=stats.claimed,
    )


@dataclass(frozen=True, slots=True)
class OwnFigures:
    """The quest's own figures, as ``report`` shows them (none: the quest names no function),
    or why its function failed (``problem``)."""

    figures: tuple[Figure, ...]
    problem: str | None = None


def own_figures(store: Store, quest: Quest | None) -> OwnFigures:
    """The quest's own figures over ``store``; they read every item, so the board counts them
    once per page load. A function that fails is said, not a failed page."""
    if quest is None or quest.figures is None:
        return OwnFigures(())
    from reins.errors import ConfigError
    from reins.figures import compute

    try:
        return OwnFigures(compute(quest.figures, store, quest.name))
    except ConfigError as exc:
        return OwnFigures((), str(exc))
