"""The ``--json`` of the commands that count: ``status`` and ``report``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from reins.cli.shapes import Plain

if TYPE_CHECKING:
    from reins.figures import Figure
    from reins.loop.compare import PolicyRun
    from reins.loop.paired import Recommendation
    from reins.store.model import Stats
    from reins.web.board import Board
    from reins.web.spend import Spend


@dataclass(frozen=True, slots=True)
class RuleCount(Plain):
    """How often a rule fired, and how often it was the root cause."""

    fired: int
    root_cause: int


@dataclass(frozen=True, slots=True)
class UsageRow(Plain):
    """Tokens and cost recorded on the ledger's attempts: the tokens the provider's prompt
    cache read and wrote (part of ``input_tokens``), the cost of the turns made through a
    batch API, and what every turn's tokens cost at list price."""

    input_tokens: int
    output_tokens: int
    cost: float
    cache_read_tokens: int
    cache_write_tokens: int
    batch_cost: float
    list_cost: float

    @classmethod
    def of(cls, stats: Stats | Spend) -> UsageRow:
        return cls(
            stats.input_tokens,
            stats.output_tokens,
            stats.cost,
            stats.cache_read_tokens,
            stats.cache_write_tokens,
            stats.batch_cost,
            stats.list_cost,
        )


@dataclass(frozen=True, slots=True)
class Saved(Plain):
    """What the same tokens cost at list price less what they cost, in USD: in all, by the
    prompt cache (negative when cache writes cost more than their reads saved) and by batches."""

    total: float
    cache: float
    batch: float

    @classmethod
    def of(cls, spend: Spend) -> Saved:
        # rounded: a saving of nothing is 0.0, not the float error of a subtraction
        return cls(
            round(spend.saved, 9), round(spend.saved_by_cache, 9), round(spend.saved_by_batch, 9)
        )


@dataclass(frozen=True, slots=True)
class Status(Plain):
    """``status``: the ledger's kept counters. ``tries`` and ``failures_used`` are one
    histogram (items by failures used), under its old name and its name now;
    ``answers_allowed`` is the quest's ``max_tries`` (None without a quest); ``sandbox`` how
    the last loop of a coding quest confined its agents (``bwrap``, or ``none``: unconfined;
    None when no coding agent ran); ``dropped`` the DONE items a person dropped;
    ``land_items`` the items ``reins land`` added, by state, apart: ``counts``, ``total``,
    ``remaining`` and the histogram count the quest's own items ({} when it added none)."""

    ledger: str
    counts: dict[str, int]
    total: int
    remaining: int
    leased: int
    tries: dict[str, int]
    rules: dict[str, RuleCount]
    attempts: int
    kinds: dict[str, int]
    reopened: int
    gates: dict[str, int]
    older_gate: int | None
    exported: int
    usage: UsageRow
    failures_used: dict[str, int]
    answers_allowed: int | None
    sandbox: str | None = None
    dropped: int = 0
    land_items: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        location: str,
        stats: Stats,
        older_gate: int | None,
        exported: int,
        allowed: int | None = None,
        sandbox: str | None = None,
        land: dict[str, int] | None = None,
    ) -> Status:
        histogram = {str(k): v for k, v in sorted(stats.tries.items())}
        return cls(
            location,
            {s.value: n for s, n in stats.counts.items()},
            stats.total,
            stats.remaining,
            stats.leased,
            histogram,
            {r: RuleCount(fired, root) for r, (fired, root) in stats.rules.items()},
            stats.attempts,
            dict(sorted(stats.kinds.items())),
            stats.reopened,
            dict(sorted(stats.gates.items())),
            older_gate,
            exported,
            UsageRow.of(stats),
            dict(histogram),
            allowed,
            sandbox,
            stats.dropped,
            dict(land or {}),
        )


@dataclass(frozen=True, slots=True)
class QuestFigure(Plain):
    """One of the quest's own figures: its value (unrounded), how it is shown and the text
    shown, what it is and what it was counted over."""

    value: int | float
    shown: str
    text: str
    label: str
    note: str

    @classmethod
    def of(cls, f: Figure) -> QuestFigure:
        return cls(f.value, f.shown, f.text, f.label, f.note)


@dataclass(frozen=True, slots=True)
class Figures(Plain):
    """``report``: counts, passes by try, tries to lock, the rules fired most, and spend: the
    usage totals, the share of input tokens read from the prompt cache (None: no input
    recorded) and what the cache and batches saved; then the quest's own figures by name, in
    the quest's order (empty when it declares none). ``land_items``: the items ``reins land``
    added, by state, apart from the counts and passes of the quest's own ({} when none)."""

    counts: dict[str, int]
    total: int
    remaining: int
    passes_by_try: dict[str, int]
    tries_to_lock: dict[str, int]
    tries_to_lock_sampled: bool
    rules: dict[str, RuleCount]
    usage: UsageRow
    cache_hit_rate: float | None
    saved: Saved
    land_items: dict[str, int]
    quest_figures: dict[str, QuestFigure]

    @classmethod
    def of(
        cls,
        b: Board,
        passes: tuple[int, ...],
        top: int,
        own: tuple[Figure, ...] = (),
        land: dict[str, int] | None = None,
    ) -> Figures:
        s = b.spend
        return cls(
            {c.state: c.n for c in b.counts},
            b.total,
            b.remaining,
            {str(t): n for t, n in enumerate(passes, start=1)},
            {bar.label: bar.value for bar in b.tries_to_lock},
            b.chart.sampled,
            {r.rule: RuleCount(r.fired, r.root) for r in b.rules[:top]},
            UsageRow.of(s),
            s.cache_hit_rate,
            Saved.of(s),
            dict(land or {}),
            {f.name: QuestFigure.of(f) for f in own},
        )


@dataclass(frozen=True, slots=True)
class Compared(Plain):
    """``report --retry-compare``: the model, each policy's run, and the recommendation
    (each policy paired with the baseline)."""

    model: str
    runs: tuple[PolicyRun, ...]
    recommendation: Recommendation | None = None


@dataclass(frozen=True, slots=True)
class HtmlWritten(Plain):
    """``report --html``: the file written."""

    html: str
