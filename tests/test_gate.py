"""The flat gate and the judge step: aggregation, root cause, fail-closed, short verdicts."""

from __future__ import annotations

import pytest

from reins import Context, Fact, Item, Level, Outcome, Quest, Rule, State, Verdict, evaluate, rule
from reins.errors import JudgeError
from reins.gate import CatalogEntry, render
from reins.turn import judge
from reins.turn.failures import JudgeFailure
from reins.turn.judge import GATE_RULE, PREPARE_RULE, SUBMISSION_RULE

CTX = Context(key="k", submission="x")


def firing(rule_id: str, level: Level, fires: bool = True) -> Rule:
    def check(ctx: Context) -> Fact | None:
        return Fact(where=rule_id, expected="e", actual="a") if fires else None

    return Rule(rule_id, level, rule_id, check)


def test_nothing_fired_passes() -> None:
    assert evaluate([firing("a", Level.FAIL, False)], CTX) == Verdict(Outcome.PASS)


def test_fail_beats_review_and_keeps_every_fact() -> None:
    v = evaluate(
        [firing("r", Level.REVIEW), firing("f1", Level.FAIL), firing("f2", Level.FAIL)], CTX
    )
    assert v.outcome is Outcome.FAIL
    assert v.root_cause == "f1"
    assert [f.rule for f in v.facts] == ["r", "f1", "f2"]


def test_review_alone_reviews_with_the_first_review_as_root_cause() -> None:
    v = evaluate(
        [firing("f", Level.FAIL, False), firing("r1", Level.REVIEW), firing("r2", Level.REVIEW)],
        CTX,
    )
    assert (v.outcome, v.root_cause) == (Outcome.REVIEW, "r1")


def test_a_rule_that_raises_is_a_judge_error_naming_it() -> None:
    def boom(ctx: Context) -> Fact | None:
        raise ZeroDivisionError("division by zero")

    with pytest.raises(JudgeError) as caught:
        evaluate([firing("r", Level.REVIEW), Rule("boom", Level.REVIEW, "d", boom)], CTX)
    assert caught.value.where == "boom"
    assert caught.value.cause == "ZeroDivisionError: division by zero"
    assert "Traceback" not in str(caught.value)


def test_a_check_returning_garbage_is_a_judge_error() -> None:
    with pytest.raises(JudgeError) as caught:
        evaluate([Rule("odd", Level.FAIL, "d", lambda ctx: "yes")], CTX)  # type: ignore[arg-type,return-value]
    assert caught.value.where == "odd"
    assert "'yes'" in caught.value.cause and "Fact or None" in caught.value.cause


def test_the_gate_stamps_the_rule_id_on_facts() -> None:
    @rule("stamped", Level.FAIL, "d")
    def stamped(ctx: Context) -> Fact | None:
        return Fact(rule="lies", where="w", expected="e", actual="a")

    assert evaluate([stamped], CTX).facts[0].rule == "stamped"


def test_a_short_verdict_can_never_be_pass() -> None:
    with pytest.raises(ValueError, match="never PASS"):
        Verdict.short(Outcome.PASS)


def test_rule_ids_must_be_words() -> None:
    with pytest.raises(ValueError):
        Rule("two words", Level.FAIL, "d", lambda ctx: None)


ITEM = Item(key="a", state=State.TODO, tries=0, payload={"word": "a"})


def judged(quest: Quest, raw: bytes | str, *, limit: int = 1024) -> tuple[Verdict, str]:
    """``judge`` for a submission the judge can judge: a verdict, never a judge failure."""
    v, text = judge(quest, ITEM, raw, limit=limit)
    assert isinstance(v, Verdict), v
    return v, text


def test_prepare_returning_pass_is_a_judge_failure(quest: Quest) -> None:
    import dataclasses

    cheat = dataclasses.replace(quest, prepare=lambda item, raw: Verdict(Outcome.PASS))
    v, _ = judge(cheat, ITEM, "anything")
    assert isinstance(v, JudgeFailure)
    assert v.where == PREPARE_RULE == "quest.prepare"
    assert "PASS" in v.cause


def test_prepare_returning_junk_is_a_judge_failure(quest: Quest) -> None:
    import dataclasses

    junk = dataclasses.replace(quest, prepare=lambda item, raw: 42)  # type: ignore[arg-type,return-value]
    v, _ = judge(junk, ITEM, "anything")
    assert isinstance(v, JudgeFailure)
    assert v.where == "quest.prepare" and "42" in v.cause


def test_prepare_that_raises_is_a_judge_failure(quest: Quest) -> None:
    v, text = judge(quest, ITEM, "explode")
    assert v == JudgeFailure("quest.prepare", "RuntimeError: prepare blew up")
    assert v.error == "quest.prepare: RuntimeError: prepare blew up"
    assert text == "explode"


def test_short_verdicts_from_prepare_are_used(quest: Quest) -> None:
    assert judged(quest, "skip")[0].outcome is Outcome.SKIPPED
    assert judged(quest, "block")[0].outcome is Outcome.BLOCKED


def test_invalid_utf8_is_a_judged_fail_with_a_fact(quest: Quest) -> None:
    v, text = judged(quest, b"good \xff\xfe answer")
    assert v.outcome is Outcome.FAIL and v.root_cause == SUBMISSION_RULE
    assert v.facts[0].expected == "UTF-8 text" and "\\xff" in v.facts[0].actual
    assert "\\xff" in text


def test_an_oversized_submission_is_a_judged_fail(quest: Quest) -> None:
    v, _ = judged(quest, b"x" * 101, limit=100)
    assert v.outcome is Outcome.FAIL and v.facts[0].expected == "at most 100 bytes"


def test_same_submission_same_verdict(quest: Quest) -> None:
    assert judge(quest, ITEM, "bad meh") == judge(quest, ITEM, "bad meh")
    assert judge(quest, ITEM, "explode") == judge(quest, ITEM, "explode")


def test_a_gate_that_raises_is_a_judge_failure_naming_the_gate(quest: Quest) -> None:
    import dataclasses

    class Broken:
        def evaluate(self, ctx: Context) -> Verdict:
            raise KeyError("lost")

        def catalog(self) -> list[CatalogEntry]:
            return []

    v, _ = judge(dataclasses.replace(quest, gate=Broken()), ITEM, "good")
    assert v == JudgeFailure(GATE_RULE, "KeyError: 'lost'")


def test_a_judge_error_raised_inside_prepare_keeps_its_own_name(quest: Quest) -> None:
    import dataclasses

    def prepare(item: Item, raw: str) -> Context | Verdict:
        raise JudgeError("ground dictionary", "TimeoutError: no answer")

    v, _ = judge(dataclasses.replace(quest, prepare=prepare), ITEM, "good")
    assert v == JudgeFailure("ground dictionary", "TimeoutError: no answer")


def test_render_shows_outcome_root_cause_and_facts_on_one_line_each() -> None:
    v = Verdict(
        Outcome.FAIL, (Fact(rule="r", where="w", expected="two\nlines", actual='"q"'),), "r"
    )
    text = render("k", v, state="TODO", tries=1, max_tries=3)
    assert text == (
        "k -> FAIL on answer 1 of 3 (state TODO, 2 answers left)\n"
        "  FAIL. Root cause: r (FAIL).\n"
        "    r at w\n"
        '      expected: "two\\nlines"\n'
        '      actual:   "\\"q\\""\n'
        "  To flip the verdict to PASS, clear r.\n"
    )


def test_an_ai_check_wrapped_in_a_fail_rule_still_counts_only_as_review() -> None:
    from reins.gate.ai import ai_rule

    doubt = ai_rule(
        "skeptic",
        "an AI doubts the answer",
        ask=lambda question: "doubtful",
        question=lambda ctx: f"Is {ctx.submission!r} right?",
        read=lambda answer, ctx: Fact(where="answer", expected="no doubt", actual=answer),
    )
    smuggled = Rule("skeptic", Level.FAIL, "wrapped at FAIL by hand", doubt.check)
    verdict = evaluate([smuggled], CTX)
    assert verdict.outcome is Outcome.REVIEW and verdict.root_cause == "skeptic"
