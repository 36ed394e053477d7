"""AI checks (L2): rules that ask a model, and that can never weigh more than REVIEW.

The three levels hold like this: the machine's rules (L1) are the only thing that can PASS or
FAIL an item; an AI check (L2) can only raise doubt, which parks the item for a person (L3).
The gate imports no backend: an AI rule takes a plain synchronous ``ask(question) -> answer``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, NoReturn

from reins.errors import ConfigError, JudgeError, cause_of
from reins.gate.evaluate import excerpt
from reins.gate.rule import Context, Fact, Level, Rule

Ask = Callable[[str], str]
Question = Callable[[Context], str]
Read = Callable[[str, Context], "Fact | None"]


@dataclass(frozen=True, slots=True)
class AICheck:
    """The check of an AI rule: build the question, ask, read a fact from the answer.

    When any step fails (the question cannot be built, ``ask`` raises or returns something
    other than text, ``read`` raises or returns something other than a fact), it raises
    :class:`~reins.errors.JudgeError`: the verifier is part of the judge, and its outage is the
    judge's, never the generator's. Not a PASS (fail closed), not a FAIL that burns a try, and
    not a REVIEW either: an outage must not park passing items for a person.

    ``ceiling`` marks the check: graph and flat evaluation read it to cap the level it counts at.
    """

    ceiling: ClassVar[Level] = Level.REVIEW

    rule: str
    ask: Ask
    question: Question
    read: Read

    def __call__(self, ctx: Context) -> Fact | None:
        try:
            prompt = self.question(ctx)
        except Exception as exc:
            self._doubt("the question to be built", exc)
        try:
            answer = self.ask(prompt)
        except Exception as exc:
            self._doubt("an answer from the AI", exc)
        if not isinstance(answer, str):
            self._doubt("an answer from the AI", TypeError(f"got {type(answer).__name__}"))
        try:
            fact = self.read(answer, ctx)
        except Exception as exc:
            self._doubt(f"a readable answer (got {excerpt(answer, 80)!r})", exc)
        if fact is not None and not isinstance(fact, Fact):
            self._doubt("the reader to return a Fact or None", TypeError(repr(fact)))
        return fact

    def _doubt(self, expected: str, exc: Exception) -> NoReturn:
        cause = excerpt(f"expected {expected}; {cause_of(exc)}")
        raise JudgeError(f"ai check {self.rule}", cause) from exc


def ai_rule(
    id: str,
    description: str,
    *,
    ask: Ask,
    question: Question,
    read: Read,
    level: Level | str = Level.REVIEW,
) -> Rule:
    """A rule that asks an AI. It fires at REVIEW level at most.

    Args:
        ask: sends a question to a model and returns its answer (a backend call, say).
        question: builds the question from the context.
        read: turns the answer into a fact when it expresses a doubt, else None.
        level: REVIEW; stated only so that a FAIL declaration is caught, not ignored.

    Raises:
        ConfigError: ``level`` is FAIL (or not a level at all).
    """
    try:
        declared = Level(level)
    except ValueError as exc:
        raise ConfigError(f"AI rule {id}: {level!r} is not a level") from exc
    if declared is not Level.REVIEW:
        raise ConfigError(
            f"AI rule {id}: an AI check may raise REVIEW at most, never {declared}; "
            "only the machine's own rules may fail an item"
        )
    return Rule(id, Level.REVIEW, description, AICheck(id, ask, question, read))


def is_ai(rule: Rule) -> bool:
    """Whether ``rule`` asks an AI (its check carries the REVIEW ceiling)."""
    return getattr(rule.check, "ceiling", None) is Level.REVIEW


def cap(rule: Rule, level: Level) -> Level:
    """The level a fired ``rule`` counts at: never above REVIEW for an AI check."""
    return Level.REVIEW if is_ai(rule) else level
