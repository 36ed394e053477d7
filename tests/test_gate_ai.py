"""AI checks (L2) raise doubt at most: REVIEW, never FAIL and never PASS over a machine FAIL.

An AI check that cannot answer is a judge error: neither a verdict nor doubt.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reins.errors import BackendError, ConfigError, JudgeError
from reins.gate import (
    Context,
    Counter,
    Fact,
    FakeResolver,
    Graph,
    Level,
    Outcome,
    Rule,
    ai_rule,
    evaluate,
    is_ai,
)
from reins.gate.ai import Ask, Question, Read, cap

CTX = Context(key="k", submission="The capital of France is Lyon.")


def doubt_unless_yes(answer: str, ctx: Context) -> Fact | None:
    if answer.strip().lower().startswith("yes"):
        return None
    return Fact(where="submission", expected="a model to agree", actual=answer)


def skeptic(
    ask: Ask | None = None,
    *,
    question: Question | None = None,
    read: Read | None = None,
    level: Level | str = Level.REVIEW,
) -> Rule:
    return ai_rule(
        "skeptic",
        "a model agrees with the answer",
        ask=ask or (lambda q: "no, Paris"),
        question=question or (lambda ctx: f"Is this right? {ctx.submission}"),
        read=read or doubt_unless_yes,
        level=level,
    )


def test_an_ai_rule_asks_the_question_built_from_the_context() -> None:
    asked: list[str] = []

    def ask(question: str) -> str:
        asked.append(question)
        return "yes"

    assert evaluate([skeptic(ask)], CTX).outcome is Outcome.PASS
    assert asked == ["Is this right? The capital of France is Lyon."]


def test_an_ai_doubt_is_a_review_fact() -> None:
    verdict = evaluate([skeptic()], CTX)
    assert (verdict.outcome, verdict.root_cause) == (Outcome.REVIEW, "skeptic")
    assert verdict.facts[0].actual == "no, Paris"


@pytest.mark.parametrize("level", [Level.FAIL, "FAIL", "fatal"])
def test_declaring_an_ai_rule_above_review_is_a_config_error(level: Level | str) -> None:
    with pytest.raises(ConfigError, match="skeptic"):
        skeptic(level=level)


def raising(question: str) -> str:
    raise BackendError("model overloaded", backend="fake")


@pytest.mark.parametrize(
    ("options", "expected", "actual"),
    [
        ({"ask": raising}, "an answer from the AI", "BackendError: model overloaded"),
        ({"ask": lambda q: None}, "an answer from the AI", "TypeError: got NoneType"),
        ({"question": lambda ctx: ctx.payload["x"]}, "the question to be built", "TypeError"),
        ({"read": lambda a, ctx: int(a)}, "a readable answer (got 'no, Paris')", "ValueError"),
        ({"read": lambda a, ctx: "doubt"}, "the reader to return a Fact or None", "'doubt'"),
    ],
)
def test_a_failing_ai_check_is_a_judge_error_not_a_review(
    options: dict[str, Any], expected: str, actual: str
) -> None:
    """Fail closed means never PASS; but an outage is the judge's, not the item's: not a FAIL
    that burns a try, and not a REVIEW that parks a passing item for a person."""
    rule = skeptic(**options)
    for judging in (lambda c: evaluate([rule], c), Graph.from_rules([rule]).evaluate):
        with pytest.raises(JudgeError) as caught:
            judging(CTX)
        assert caught.value.where == "ai check skeptic"
        assert f"expected {expected}" in caught.value.cause
        assert actual in caught.value.cause
        assert "Traceback" not in str(caught.value)


def test_an_ai_rule_never_turns_a_machine_fail_into_anything_else() -> None:
    machine = Rule(
        "wrong",
        Level.FAIL,
        "the answer is wrong",
        lambda ctx: Fact(where="a", expected="b", actual="c"),
    )
    for verdict in (
        evaluate([skeptic(), machine], CTX),
        Graph.from_rules([skeptic(), machine]).evaluate(CTX),
    ):
        assert (verdict.outcome, verdict.root_cause) == (Outcome.FAIL, "wrong")


def test_a_graph_refuses_an_ai_rule_rebuilt_at_fail_level() -> None:
    rule = skeptic()
    for forged in (
        dataclasses.replace(rule, level=Level.FAIL),
        Rule(rule.id, Level.FAIL, rule.description, rule.check),
    ):
        assert is_ai(forged)
        assert cap(forged, Level.FAIL) is Level.REVIEW
        with pytest.raises(ConfigError, match="REVIEW at most"):
            Graph([Counter(forged)])


def test_a_graph_refuses_an_ai_rule_that_supersedes() -> None:
    machine = Rule("wrong", Level.FAIL, "wrong", lambda ctx: None)
    with pytest.raises(ConfigError, match="may raise doubt but not supersede wrong"):
        Graph([Counter(skeptic(), supersedes=("wrong",)), Counter(machine)])


def test_an_ai_rule_whose_ground_fails_is_a_judge_error_not_a_review() -> None:
    rule = ai_rule(
        "page-skeptic",
        "a model agrees with the cited page",
        ask=lambda q: "yes",
        question=lambda ctx: ctx.grounds["page"],
        read=doubt_unless_yes,
    )
    graph = Graph(
        [Counter(rule, needs=("page",))],
        grounds={"page": lambda ctx, snap: snap.fetch("https://example.org/")},
        resolver=FakeResolver(),
    )
    with pytest.raises(JudgeError) as caught:
        graph.evaluate(CTX)
    assert caught.value.where == "ground page" and "no answer" in caught.value.cause


def test_plain_rules_are_not_ai_checks() -> None:
    plain = Rule("plain", Level.FAIL, "plain", lambda ctx: None)
    assert not is_ai(plain)
    assert cap(plain, Level.FAIL) is Level.FAIL


answers = st.one_of(
    st.text(max_size=20), st.sampled_from([RuntimeError("down"), BackendError("x")])
)


@given(st.lists(answers, min_size=1, max_size=5))
def test_ai_checks_alone_never_fail_an_item(replies: list[str | Exception]) -> None:
    """An answer may raise doubt (REVIEW) at most; an outage is a judge error, never a verdict."""

    def make(i: int, reply: str | Exception) -> Rule:
        def ask(question: str) -> str:
            if isinstance(reply, Exception):
                raise reply
            return reply

        return ai_rule(f"ai{i}", "ai", ask=ask, question=lambda ctx: "?", read=doubt_unless_yes)

    rules = [make(i, r) for i, r in enumerate(replies)]
    down = [i for i, r in enumerate(replies) if isinstance(r, Exception)]
    for judging in (lambda c: evaluate(rules, c), Graph.from_rules(rules).evaluate):
        if down:
            with pytest.raises(JudgeError) as caught:
                judging(CTX)
            assert caught.value.where == f"ai check ai{down[0]}"
        else:
            assert judging(CTX).outcome in (Outcome.PASS, Outcome.REVIEW)
