"""Rules that leave several facts, each with its own level: flat gate, graph gate, rendering."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from reins.errors import JudgeError
from reins.gate import (
    Context,
    Counter,
    Fact,
    Graph,
    Level,
    Outcome,
    Rule,
    ai_rule,
    evaluate,
    fire,
    render,
)

CTX = Context(key="k", submission="x")


def leaving(id: str, level: Level, *levels: str) -> Rule:
    """A rule that leaves one fact per entry of ``levels`` ("" = the rule's level)."""

    def check(ctx: Context) -> Iterator[Fact]:
        for i, own in enumerate(levels):
            yield Fact(where=f"{id}[{i}]", expected="e", actual="a", level=own)

    return Rule(id, level, id, check)


def test_a_rule_may_leave_several_facts_and_the_gate_keeps_them_all() -> None:
    v = evaluate([leaving("many", Level.FAIL, "", "", "")], CTX)
    assert v.outcome is Outcome.FAIL and v.root_cause == "many"
    assert [f.where for f in v.facts] == ["many[0]", "many[1]", "many[2]"]
    assert {f.rule for f in v.facts} == {"many"}


def test_each_fact_weighs_its_own_level() -> None:
    """One instruction: FAIL when strict fails, REVIEW when only loose passes."""
    loose_only = leaving("instruction", Level.FAIL, "REVIEW")
    assert evaluate([loose_only], CTX).outcome is Outcome.REVIEW
    both = leaving("instruction", Level.FAIL, "REVIEW", "FAIL")
    v = evaluate([both], CTX)
    assert v.outcome is Outcome.FAIL
    assert [f.level for f in v.facts] == ["REVIEW", "FAIL"]


def test_the_gate_stamps_the_effective_level_on_every_fact() -> None:
    facts = fire(leaving("r", Level.FAIL, "", "REVIEW"), CTX)
    assert [(f.rule, f.level) for f in facts] == [("r", "FAIL"), ("r", "REVIEW")]


def test_a_fact_never_weighs_more_than_its_rule() -> None:
    v = evaluate([leaving("capped", Level.REVIEW, "FAIL", "")], CTX)
    assert v.outcome is Outcome.REVIEW
    assert [f.level for f in v.facts] == ["REVIEW", "REVIEW"]


def test_an_ai_check_never_weighs_fail_even_through_a_fact_level() -> None:
    doubt = ai_rule(
        "skeptic",
        "a model doubts",
        ask=lambda q: "no",
        question=lambda ctx: "right?",
        read=lambda answer, ctx: Fact(where="a", expected="e", actual=answer, level="FAIL"),
    )
    v = evaluate([doubt], CTX)
    assert v.outcome is Outcome.REVIEW and v.facts[0].level == "REVIEW"


def test_root_cause_is_the_first_rule_that_left_a_fact_at_the_deciding_level() -> None:
    rules = [
        leaving("soft", Level.FAIL, "REVIEW"),  # fired, but only at REVIEW
        leaving("hard", Level.FAIL, "REVIEW", "FAIL"),
        leaving("later", Level.FAIL, ""),
    ]
    v = evaluate(rules, CTX)
    assert (v.outcome, v.root_cause) == (Outcome.FAIL, "hard")
    assert [f.rule for f in v.facts] == ["soft", "hard", "hard", "later"]


def test_an_empty_list_of_facts_is_silence() -> None:
    assert evaluate([leaving("quiet", Level.FAIL)], CTX).outcome is Outcome.PASS


@pytest.mark.parametrize(
    "junk",
    [[Fact(where="w", expected="e", actual="a"), "oops"], "text", {"where": "w"}, 42],
)
def test_anything_but_facts_is_a_judge_error(junk: object) -> None:
    with pytest.raises(JudgeError) as caught:
        evaluate([Rule("odd", Level.FAIL, "d", lambda ctx: junk)], CTX)  # type: ignore[arg-type,return-value]
    assert caught.value.where == "odd"


def test_a_fact_of_an_unknown_level_is_a_judge_error() -> None:
    with pytest.raises(JudgeError, match="BLOCKER"):
        evaluate([leaving("odd", Level.FAIL, "BLOCKER")], CTX)


def test_a_check_raising_midway_through_its_facts_is_a_judge_error() -> None:
    def check(ctx: Context) -> Iterator[Fact]:
        yield Fact(where="w", expected="e", actual="a")
        raise RuntimeError("half way")

    with pytest.raises(JudgeError) as caught:
        evaluate([Rule("half", Level.FAIL, "d", check)], CTX)
    assert caught.value.cause == "RuntimeError: half way"


def test_the_rendered_verdict_marks_facts_lighter_than_the_outcome() -> None:
    v = evaluate([leaving("i", Level.FAIL, "REVIEW", "FAIL")], CTX)
    text = render("k", v, state="TODO", tries=1, max_tries=3)
    assert "    i (REVIEW) at i[0]\n" in text and "    i at i[1]\n" in text


# --- graph ----------------------------------------------------------------------------------


def test_a_graph_node_fires_with_all_its_facts_and_weighs_its_strongest() -> None:
    graph = Graph([Counter(leaving("multi", Level.FAIL, "REVIEW", "FAIL", "REVIEW"))])
    judgement = graph.judge(CTX)
    assert judgement.verdict.outcome is Outcome.FAIL
    assert judgement.levels["multi"] is Level.FAIL
    assert [f.where for f in judgement.facts["multi"]] == ["multi[0]", "multi[1]", "multi[2]"]
    assert [f.level for f in judgement.verdict.facts] == ["REVIEW", "FAIL", "REVIEW"]


def test_a_graph_node_of_review_facts_only_reviews() -> None:
    graph = Graph([Counter(leaving("loose", Level.FAIL, "REVIEW", "REVIEW"))])
    verdict = graph.evaluate(CTX)
    assert (verdict.outcome, verdict.root_cause) == (Outcome.REVIEW, "loose")
    assert len(verdict.facts) == 2


def test_a_superseded_node_takes_all_its_facts_out_of_the_tally() -> None:
    graph = Graph(
        [
            Counter(leaving("up", Level.REVIEW, ""), supersedes=("down",)),
            Counter(leaving("down", Level.FAIL, "FAIL", "FAIL")),
        ]
    )
    verdict = graph.evaluate(CTX)
    assert verdict.outcome is Outcome.REVIEW
    assert [f.rule for f in verdict.facts] == ["up"]


def test_the_walkthrough_lists_every_fact_of_a_node() -> None:
    graph = Graph([Counter(leaving("multi", Level.FAIL, "FAIL", "REVIEW"))])
    assert graph.evaluate(CTX).feedback == (
        "FAIL. Root cause: multi (FAIL).\n"
        "  multi at multi[0]\n"
        '    expected: "e"\n'
        '    actual:   "a"\n'
        "  multi (REVIEW) at multi[1]\n"
        '    expected: "e"\n'
        '    actual:   "a"\n'
        "To flip the verdict to PASS, clear multi.\n"
    )
