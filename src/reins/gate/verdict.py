"""Verdicts: the gate's answer, and the one text rendering that both people and models read."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from reins.gate.bounds import FACTS_SHOWN, FEEDBACK_CAP, bounded_facts, clip_block, hidden_line
from reins.gate.rule import Fact
from reins.gate.wording import (
    FLIP,
    SPENT,
    answer_of,
    answers_left,
    judged_answer,
    state_meaning,
)
from reins.values import readable_json


class Outcome(StrEnum):
    """What one submission earned. FAIL is a try, not an end state."""

    PASS = "PASS"
    REVIEW = "REVIEW"
    FAIL = "FAIL"
    SKIPPED = "SKIPPED"
    BLOCKED = "BLOCKED"


SHORT_OUTCOMES = frozenset({Outcome.FAIL, Outcome.SKIPPED, Outcome.BLOCKED, Outcome.REVIEW})


@dataclass(frozen=True, slots=True)
class Verdict:
    """Outcome, the facts behind it, the deciding rule, and (for graph gates) a walkthrough.

    Every fact is :func:`~reins.gate.bounds.bounded` here, whatever made the verdict (the gate,
    a quest's ``prepare``, a gate of the quest's own): no fact can carry more than the cap.
    """

    outcome: Outcome
    facts: tuple[Fact, ...] = ()
    root_cause: str | None = None
    feedback: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "facts", bounded_facts(self.facts))

    @classmethod
    def short(cls, outcome: Outcome | str, *facts: Fact, root_cause: str | None = None) -> Verdict:
        """A verdict decided before the gate runs (by ``prepare``): never PASS.

        Raises:
            ValueError: for PASS; only the gate's aggregation yields PASS.
        """
        out = Outcome(outcome)
        if out not in SHORT_OUTCOMES:
            raise ValueError("a short verdict may be FAIL, SKIPPED, BLOCKED or REVIEW, never PASS")
        cause = root_cause if root_cause is not None else (facts[0].rule if facts else None)
        return cls(out, tuple(facts), cause or None)


def quote(text: str) -> str:
    """Quote a fact value on one line: newlines and control characters escaped, Unicode kept."""
    return readable_json(text)


def render(
    key: str,
    verdict: Verdict,
    *,
    state: str,
    tries: int,
    max_tries: int,
    answer: int | None = None,
) -> str:
    """The verdict as ``submit`` prints it and as the loop feeds it back (feedback parity).

    The first line names the item, the outcome and the answer it judged, and the state after
    recording (``a -> FAIL on answer 1 of 3 (state TODO, 2 answers left)``); then the root
    cause; then each fact as where / expected / actual, or the gate's walkthrough. ``tries``
    is the failures used after this verdict; ``answer``, the number of the answer judged, is
    read from it unless given (a person's re-judge of an earlier answer). At most
    :data:`~reins.gate.bounds.FACTS_SHOWN` facts are listed (the rest are counted) and the
    text is cut at :data:`~reins.gate.bounds.FEEDBACK_CAP` characters, saying so.
    """
    k = answer if answer is not None else judged_answer(verdict.outcome.value, tries)
    after = f"state {state_meaning(state)}"
    if state == "TODO":
        after += f", {answers_left(tries, max_tries)}"
    lines = [f"{key} -> {verdict.outcome} on {answer_of(k or 1, max_tries)} ({after})"]
    if verdict.feedback:  # a graph gate's walkthrough names the root cause itself
        told = clip_block(verdict.feedback, FEEDBACK_CAP)  # split no more than is kept
        for line in told.rstrip("\n").split("\n"):
            # What the next answer must clear, when this FAIL used the last one, is moot.
            spent = state == "DONE" and line.startswith(FLIP)
            lines.append(f"  {SPENT if spent else line}")
    else:
        if verdict.root_cause:
            lines.append(f"root cause: {verdict.root_cause}")
        for f in verdict.facts[:FACTS_SHOWN]:
            # A fact lighter than the verdict says so: a REVIEW fact in a FAIL is not what
            # must be fixed to pass, but a person will look at it.
            own = f" ({f.level})" if f.level and f.level != verdict.outcome else ""
            lines.append(f"  - {f.rule}{own}: {f.where}")
            lines.append(f"      expected: {quote(f.expected)}")
            lines.append(f"      actual:   {quote(f.actual)}")
        if len(verdict.facts) > FACTS_SHOWN:
            lines.append(hidden_line(len(verdict.facts) - FACTS_SHOWN, "  "))
    return clip_block("\n".join(lines) + "\n", FEEDBACK_CAP)
