"""The flat gate: run every rule; any FAIL fact fails, else any REVIEW fact reviews, else PASS."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from reins.errors import JudgeError, cause_of
from reins.gate.bounds import bounded
from reins.gate.rule import Context, Fact, Level, Rule
from reins.gate.verdict import Outcome, Verdict

EXCERPT = 200


def excerpt(text: str, limit: int = EXCERPT) -> str:
    """The start of ``text``, cut at ``limit`` characters with a marker."""
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more characters)"


def fire(rule: Rule, ctx: Context) -> tuple[Fact, ...]:
    """Run one rule: the facts it left (empty when it did not fire), each stamped with the
    rule's id and the level it counts at, and :func:`~reins.gate.bounds.bounded`.

    A check returns None, a :class:`Fact`, or an iterable of facts. Each fact weighs its own
    ``level``, or the rule's when it has none, and never more than the rule's level, nor more
    than REVIEW for an AI check (its check carries a REVIEW ``ceiling``).

    Raises:
        JudgeError: the rule raised, returned something other than facts, or left a fact whose
            level is neither FAIL nor REVIEW. That is the judge's failure, not the submission's:
            it is never a verdict (fail closed without charging the generator a try).
    """
    try:
        found = _facts(rule.check(ctx))
    except JudgeError as exc:
        # A check shared by many rules names itself (python check m:f); say which rule failed.
        # An AI check's "ai check <rule>" names it already.
        if exc.where == rule.id or exc.where.endswith(f" {rule.id}"):
            raise
        raise JudgeError(rule.id, f"{exc.where}: {exc.cause}") from exc
    except _NotFacts as bad:
        raise JudgeError(
            rule.id,
            f"returned {excerpt(repr(bad.value), 80)}, not a Fact or None (nor Facts)",
        ) from None
    except Exception as exc:
        raise JudgeError(rule.id, excerpt(cause_of(exc))) from exc
    if not found:
        return ()
    # An AI check never counts at FAIL, however it was wrapped: the machine locks PASS, an AI
    # may only raise doubt.
    top = Level.REVIEW if getattr(rule.check, "ceiling", None) is Level.REVIEW else rule.level
    out: list[Fact] = []
    for fact in found:
        try:
            own = Level(fact.level) if fact.level else top
        except ValueError:
            raise JudgeError(
                rule.id, f"left a fact of level {excerpt(repr(fact.level), 40)}, not FAIL or REVIEW"
            ) from None
        level = Level.REVIEW if Level.REVIEW in (own, top) else Level.FAIL
        # Bounded here, where every gate's facts come from, so that a graph's walkthrough
        # quotes exactly the facts its verdict records.
        out.append(bounded(replace(fact, rule=rule.id, level=level.value)))
    return tuple(out)


def strongest(facts: Sequence[Fact]) -> Level:
    """The level the heaviest of ``facts`` (stamped by :func:`fire`) counts at."""
    return Level.FAIL if any(f.level == Level.FAIL for f in facts) else Level.REVIEW


class _NotFacts(Exception):
    def __init__(self, value: object) -> None:
        self.value = value


def _facts(outcome: object) -> tuple[Fact, ...]:
    """A check's answer as a tuple of facts; an iterable is drained here, inside the guard."""
    if outcome is None:
        return ()
    if isinstance(outcome, Fact):
        return (outcome,)
    if isinstance(outcome, str | bytes | Mapping) or not isinstance(outcome, Iterable):
        raise _NotFacts(outcome)
    facts = tuple(outcome)
    for fact in facts:
        if not isinstance(fact, Fact):
            raise _NotFacts(fact)
    return facts


def evaluate(rules: Sequence[Rule], ctx: Context) -> Verdict:
    """Judge ``ctx`` against ``rules`` in catalog order.

    The verdict keeps every fact. Root cause is the first rule that left a fact at the deciding
    level. Deterministic for a given (rules, ctx).

    Raises:
        JudgeError: a rule raised or returned something other than facts.
    """
    facts: list[Fact] = []
    first_fail: str | None = None
    first_review: str | None = None
    for r in rules:
        for fact in fire(r, ctx):
            facts.append(fact)
            if fact.level == Level.FAIL:
                first_fail = first_fail or r.id
            else:
                first_review = first_review or r.id
    if first_fail is not None:
        return Verdict(Outcome.FAIL, tuple(facts), first_fail)
    if first_review is not None:
        return Verdict(Outcome.REVIEW, tuple(facts), first_review)
    return Verdict(Outcome.PASS)
