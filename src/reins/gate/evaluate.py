"""The flat gate: run every rule; any FAIL fact fails, else any REVIEW fact reviews, else PASS."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from reins.errors import JudgeError
from reins.gate.rule import Context, Fact, Level, Rule
from reins.gate.verdict import Outcome, Verdict

EXCERPT = 200


def excerpt(text: str, limit: int = EXCERPT) -> str:
    """The start of ``text``, cut at ``limit`` characters with a marker."""
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more characters)"


def fire(rule: Rule, ctx: Context) -> tuple[Fact | None, Level]:
    """Run one rule: its fact (None when it did not fire) and the level that fact counts at.

    Raises:
        JudgeError: the rule raised, or returned something other than a Fact or None. That is
            the judge's failure, not the submission's: it is never a verdict (fail closed
            without charging the generator a try).
    """
    try:
        fact = rule.check(ctx)
    except JudgeError:
        raise
    except Exception as exc:
        raise JudgeError(rule.id, excerpt(f"{type(exc).__name__}: {exc}")) from exc
    if fact is None:
        return None, rule.level
    if not isinstance(fact, Fact):
        raise JudgeError(rule.id, f"returned {excerpt(repr(fact), 80)}, not a Fact or None")
    # An AI check (its check carries a REVIEW ceiling) never counts at FAIL, however it was
    # wrapped: the machine locks PASS, an AI may only raise doubt.
    ceiling = getattr(rule.check, "ceiling", None)
    level = Level.REVIEW if ceiling is Level.REVIEW else rule.level
    return replace(fact, rule=rule.id), level


def evaluate(rules: Sequence[Rule], ctx: Context) -> Verdict:
    """Judge ``ctx`` against ``rules`` in catalog order.

    Root cause is the first fired rule of the deciding level. Deterministic for a given
    (rules, ctx).

    Raises:
        JudgeError: a rule raised or returned something other than a fact.
    """
    facts: list[Fact] = []
    first_fail: str | None = None
    first_review: str | None = None
    for r in rules:
        fact, level = fire(r, ctx)
        if fact is None:
            continue
        facts.append(fact)
        if level is Level.FAIL and first_fail is None:
            first_fail = r.id
        elif level is Level.REVIEW and first_review is None:
            first_review = r.id
    if first_fail is not None:
        return Verdict(Outcome.FAIL, tuple(facts), first_fail)
    if first_review is not None:
        return Verdict(Outcome.REVIEW, tuple(facts), first_review)
    return Verdict(Outcome.PASS)
