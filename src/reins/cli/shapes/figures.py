"""The ``--json`` of the commands that count: ``status`` and ``report``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from reins.cli.shapes import Plain

if TYPE_CHECKING:
    from reins.loop.compare import PolicyRun
    from reins.store.model import Stats
    from reins.web.board import Board


@dataclass(frozen=True, slots=True)
class RuleCount(Plain):
    """How often a rule fired, and how often it was the root cause."""

    fired: int
    root_cause: int


@dataclass(frozen=True, slots=True)
class Usage(Plain):
    """Tokens and cost recorded on the ledger's attempts."""

    input_tokens: int
    output_tokens: int
    cost: float


@dataclass(frozen=True, slots=True)
class Status(Plain):
    """``status``: the ledger's kept counters. ``tries`` and ``failures_used`` are one
    histogram (items by failures used), under its old name and its name now;
    ``answers_allowed`` is the quest's ``max_tries`` (None without a quest)."""

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
    usage: Usage
    failures_used: dict[str, int]
    answers_allowed: int | None

    @classmethod
    def of(
        cls,
        location: str,
        stats: Stats,
        older_gate: int | None,
        exported: int,
        allowed: int | None = None,
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
            Usage(stats.input_tokens, stats.output_tokens, stats.cost),
            dict(histogram),
            allowed,
        )


@dataclass(frozen=True, slots=True)
class Figures(Plain):
    """``report``: counts, passes by try, tries to lock, the rules fired most."""

    counts: dict[str, int]
    total: int
    remaining: int
    passes_by_try: dict[str, int]
    tries_to_lock: dict[str, int]
    tries_to_lock_sampled: bool
    rules: dict[str, RuleCount]

    @classmethod
    def of(cls, b: Board, passes: tuple[int, ...], top: int) -> Figures:
        return cls(
            {c.state: c.n for c in b.counts},
            b.total,
            b.remaining,
            {str(t): n for t, n in enumerate(passes, start=1)},
            {bar.label: bar.value for bar in b.tries_to_lock},
            b.chart.sampled,
            {r.rule: RuleCount(r.fired, r.root) for r in b.rules[:top]},
        )


@dataclass(frozen=True, slots=True)
class Compared(Plain):
    """``report --retry-compare``: the model, and each policy's run."""

    model: str
    runs: tuple[PolicyRun, ...]


@dataclass(frozen=True, slots=True)
class HtmlWritten(Plain):
    """``report --html``: the file written."""

    html: str
