"""The ``--json`` of the commands that judge in bulk or check: ``replay``, ``gate check``,
``ledger check`` and ``ledger copy``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reins.cli.shapes import Plain, QuestRef, Refused

if TYPE_CHECKING:
    from reins.turn.determinism import Difference
    from reins.turn.record import Recorded
    from reins.turn.replay import ReplayResult, ReplaySummary


@dataclass(frozen=True, slots=True)
class ReplayJudged(Plain):
    """A replayed line whose turn was recorded with a verdict: ``answer`` is the number of the
    answer judged, ``failures_used`` is ``tries`` under its name, ``answers_allowed`` the
    replay's ``max_tries``."""

    line: int
    key: str | None
    status: str
    outcome: str
    state: str
    tries: int
    turn: int
    root_cause: str | None
    feedback: str
    answer: int | None
    failures_used: int
    answers_allowed: int


@dataclass(frozen=True, slots=True)
class ReplayNote(Plain):
    """A replayed line that left no verdict: skipped, repeated, a dry run's or a judge error."""

    line: int
    key: str | None
    status: str
    message: str


def replayed(result: ReplayResult, allowed: int) -> ReplayJudged | ReplayNote:
    """The JSON line of one replayed line; ``allowed``: the replay's answers allowed."""
    from reins.gate.wording import judged_answer

    recorded: Recorded | None = result.recorded
    if recorded is None or recorded.verdict is None:
        return ReplayNote(result.line, result.key, result.status.value, result.message)
    a = recorded.attempt
    return ReplayJudged(
        result.line,
        result.key,
        result.status.value,
        recorded.verdict.outcome.value,
        recorded.item.state.value,
        recorded.item.tries,
        recorded.attempt.turn,
        recorded.verdict.root_cause,
        recorded.text,
        judged_answer(a.outcome, a.tries_after),
        recorded.item.tries,
        allowed,
    )


@dataclass(frozen=True, slots=True)
class ReplayTally(Plain):
    """``replay``'s last line: lines by status, outcomes, errors, records exported and locks
    refused (no attempt produced them)."""

    lines: dict[str, int]
    outcomes: dict[str, int]
    judge_errors: int
    generation_errors: int
    exported: int
    refused: tuple[Refused, ...]

    @classmethod
    def of(cls, summary: ReplaySummary, lines: dict[str, int]) -> ReplayTally:
        return cls(
            lines,
            dict(summary.outcomes),
            summary.judge_errors,
            summary.generation_errors,
            summary.exported.count,
            Refused.all_of(summary.exported),
        )

    def to_json(self) -> dict[str, Any]:
        return {"event": "summary", **Plain.to_json(self)}


@dataclass(frozen=True, slots=True)
class Wavering(Plain):
    """A submission the gate judged differently in fresh processes, and the rules behind it."""

    key: str
    rules: tuple[str, ...]

    @classmethod
    def of(cls, d: Difference) -> Wavering:
        return cls(d.key, tuple(d.rules))


@dataclass(frozen=True, slots=True)
class GateCheck(Plain):
    """``gate check``: submissions judged, and those judged differently."""

    judged: int
    differences: tuple[Wavering, ...]


@dataclass(frozen=True, slots=True)
class LedgerCheck(Plain):
    """``ledger check``: the ledger, its quest, and the invariants it breaks."""

    ledger: str
    quest: QuestRef | None
    sound: bool
    problems: tuple[str, ...]
    items: int
    attempts: int


@dataclass(frozen=True, slots=True)
class Copied(Plain):
    """``ledger copy``: where to, what was copied, and the digest both sides agree on."""

    target: str
    items: int
    attempts: int
    digest: str
