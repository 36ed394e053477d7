"""Verdicts: the gate's answer, and the one text rendering that both people and models read,
in one shape for every gate."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from reins.gate.bounds import FACTS_SHOWN, FEEDBACK_CAP, bounded_facts, clip_block, hidden_line
from reins.gate.rule import Fact, Level
from reins.gate.wording import (
    FLIP,
    SPENT,
    answer_of,
    answers_left,
    judged_answer,
    state_meaning,
)
from reins.values import readable_json

PERSON_DECIDES = "A person decides: the item waits for `reins resolve --accept|--reject`."


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
    """The verdict as ``submit`` prints it and as the loop feeds it back (feedback parity), in
    one shape for every gate.

    The first line names the item, the outcome and the answer it judged, and the state after
    recording (``a -> FAIL on answer 1 of 3 (state TODO, 2 answers left)``); then the
    walkthrough: a graph gate's own, else :func:`flat_walkthrough` of the verdict's facts (the
    root cause and its facts, the rest remaining, what to clear to flip it). ``tries`` is the
    failures used after this verdict; ``answer``, the number of the answer judged, is read from
    it unless given (a person's re-judge of an earlier answer). At most
    :data:`~reins.gate.bounds.FACTS_SHOWN` facts are listed (the rest are counted) and the
    text is cut at :data:`~reins.gate.bounds.FEEDBACK_CAP` characters, saying so.
    """
    k = answer if answer is not None else judged_answer(verdict.outcome.value, tries)
    after = f"state {state_meaning(state)}"
    if state == "TODO":
        after += f", {answers_left(tries, max_tries)}"
    lines = [f"{key} -> {verdict.outcome} on {answer_of(k or 1, max_tries)} ({after})"]
    told = verdict.feedback or flat_walkthrough(verdict)
    told = clip_block(told, FEEDBACK_CAP)  # split no more than is kept
    for line in told.rstrip("\n").split("\n") if told.strip() else []:
        # What the next answer must clear, when this FAIL used the last one, is moot.
        spent = state == "DONE" and line.startswith(FLIP)
        lines.append(f"  {SPENT if spent else line}")
    return clip_block("\n".join(lines) + "\n", FEEDBACK_CAP)


def flat_walkthrough(verdict: Verdict) -> str:
    """The walkthrough of a verdict that has none of its own (the flat gate's, ``prepare``'s):
    the root cause and its facts, each other rule's as remaining, and, for a FAIL, the rules to
    clear (all at once: a flat gate supersedes nothing) and what the verdict would then be."""
    by_rule: dict[str, list[Fact]] = {}
    for fact in verdict.facts:
        by_rule.setdefault(fact.rule, []).append(fact)
    if not by_rule:
        return ""
    levels = {rule: _weight(facts, verdict.outcome) for rule, facts in by_rule.items()}
    root = verdict.root_cause if verdict.root_cause in by_rule else next(iter(by_rule))
    head = f"{verdict.outcome}. Root cause: {root} ({levels[root]})."
    side = [rule for rule in by_rule if rule != root]
    lines = cause_and_remaining(head, root, side, levels, by_rule)
    if verdict.outcome is Outcome.REVIEW:
        lines.append(PERSON_DECIDES)
    elif verdict.outcome is Outcome.FAIL:
        fails = [rule for rule, level in levels.items() if level is Level.FAIL]
        after = Outcome.REVIEW if len(fails) < len(levels) else Outcome.PASS
        lines.append(f"{FLIP}{after}, clear {and_list(fails)}.")
    return "\n".join(lines) + "\n"


def cause_and_remaining(
    head: str,
    root: str,
    others: Sequence[str],
    levels: Mapping[str, Level],
    facts: Mapping[str, Sequence[Fact]],
) -> list[str]:
    """A walkthrough's first lines, the same for every gate: ``head``, the root cause's facts,
    then each other remaining rule's, at most :data:`FACTS_SHOWN` facts in all (counting the
    rest)."""
    lines = [head]
    shown = Shown(FACTS_SHOWN)
    lines += shown.node(root, levels[root], facts[root], "  ")
    if others:
        lines.append("Also remaining:")
        for rule in others:
            lines += shown.node(f"{rule} ({levels[rule]})", levels[rule], facts[rule], "  ")
    if shown.hidden:
        lines.append(hidden_line(shown.hidden, "  "))
    return lines


def _weight(facts: Sequence[Fact], outcome: Outcome) -> Level:
    """A rule's level in a flat verdict: FAIL if any of its facts is, else REVIEW; a fact of
    ``prepare`` has none of its own, and weighs what its verdict does."""
    if any(f.level is Level.FAIL for f in facts):
        return Level.FAIL
    if any(f.level is Level.REVIEW for f in facts):
        return Level.REVIEW
    return Level.REVIEW if outcome is Outcome.REVIEW else Level.FAIL


class Shown:
    """The facts a walkthrough lists, up to ``left`` over all its nodes; it counts the rest."""

    def __init__(self, left: int) -> None:
        self.left = left
        self.hidden = 0

    def node(self, name: str, level: Level, facts: Sequence[Fact], indent: str) -> list[str]:
        """A node's facts while the budget lasts (a fact lighter than the node's weight says
        its own level); a node whose facts are all left out is still named."""
        lines: list[str] = []
        for fact in facts[: self.left]:
            own = f" ({fact.level})" if fact.level and fact.level != level else ""
            lines += fact_lines(f"{name}{own}", fact, indent)
        listed = min(len(facts), self.left)
        self.left -= listed
        self.hidden += len(facts) - listed
        if not listed:
            lines.append(f"{indent}{name}: {len(facts)} fact(s), not shown here")
        return lines


def fact_lines(name: str, fact: Fact, indent: str) -> list[str]:
    where = fact.where if fact.where.isprintable() else quote(fact.where)
    return [
        f"{indent}{name} at {where}" if where else f"{indent}{name}",
        f"{indent}  expected: {quote(fact.expected)}",
        f"{indent}  actual:   {quote(fact.actual)}",
    ]


def and_list(names: Sequence[str]) -> str:
    items = list(names)
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"
