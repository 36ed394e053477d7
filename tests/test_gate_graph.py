"""The defeat-graph gate: supersession, root cause, walkthrough, node identity, h-Categoriser."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reins.errors import ConfigError, JudgeError
from reins.gate import (
    CatalogEntry,
    Context,
    Counter,
    Fact,
    Graph,
    Level,
    Outcome,
    Rule,
    Verdict,
    ai_rule,
    evaluate,
    h_categoriser,
    render,
)
from reins.gate.graph import GRAPH_RULE, WARRANT
from reins.quest import Quest

GOLDEN = (math.sqrt(5) - 1) / 2  # the fixed point of x = 1 / (1 + x)


def make(id: str, level: Level | str = Level.FAIL, where: str = "answer") -> Rule:
    """A rule that fires when its id is in the submission and raises when ``id!`` is."""

    def check(ctx: Context) -> Fact | None:
        assert isinstance(ctx.submission, list)
        if f"{id}!" in ctx.submission:
            raise RuntimeError(f"{id} broke")
        if id in ctx.submission:
            return Fact(where=where, expected=f"no {id}", actual=f"{id} found")
        return None

    return Rule(id, Level(level), f"the answer has no {id}", check)


def ctx(*firing: str) -> Context:
    return Context(key="k", submission=list(firing))


def go_graph() -> Graph:
    """The Go implementation's pinned example: fmt ⊳ {holder, free}, free ⊳ holder."""
    return Graph(
        [
            Counter(make("fmt"), supersedes=("holder", "free")),
            Counter(make("holder")),
            Counter(make("free", Level.REVIEW), supersedes=("holder",)),
        ]
    )


@pytest.mark.parametrize(
    ("firing", "outcome", "root", "remaining"),
    [
        ((), Outcome.PASS, None, ()),
        (("fmt",), Outcome.FAIL, "fmt", ("fmt",)),
        (("holder",), Outcome.FAIL, "holder", ("holder",)),
        (("free",), Outcome.REVIEW, "free", ("free",)),
        (("fmt", "holder"), Outcome.FAIL, "fmt", ("fmt",)),
        (("fmt", "free"), Outcome.FAIL, "fmt", ("fmt",)),
        (("holder", "free"), Outcome.REVIEW, "free", ("free",)),
        (("fmt", "holder", "free"), Outcome.FAIL, "fmt", ("fmt",)),
    ],
)
def test_supersession_outcome_table(
    firing: Sequence[str], outcome: Outcome, root: str | None, remaining: Sequence[str]
) -> None:
    judgement = go_graph().judge(ctx(*firing))
    assert judgement.verdict.outcome is outcome
    assert judgement.verdict.root_cause == root
    assert judgement.remaining == tuple(remaining)
    assert [f.rule for f in judgement.verdict.facts] == list(remaining)
    assert set(judgement.active) == set(firing)


def test_only_an_active_upstream_supersedes_and_only_its_direct_targets() -> None:
    graph = Graph(
        [
            Counter(make("a"), supersedes=("b",)),
            Counter(make("b"), supersedes=("c",)),
            Counter(make("c")),
        ]
    )
    assert graph.judge(ctx("a", "b", "c")).remaining == ("a",)
    assert graph.judge(ctx("b", "c")).remaining == ("b",)
    assert graph.judge(ctx("a", "c")).remaining == ("a", "c")


def test_a_superseded_counter_still_supersedes_its_own_targets() -> None:
    graph = Graph(
        [
            Counter(make("a"), supersedes=("b",)),
            Counter(make("b"), supersedes=("c",)),
            Counter(make("c")),
        ]
    )
    judgement = graph.judge(ctx("a", "b", "c"))
    assert dict(judgement.superseded) == {"b": ("a",), "c": ("b",)}
    assert judgement.facts.keys() == {"a", "b", "c"}


def test_root_cause_is_the_remaining_fail_with_the_largest_reach() -> None:
    graph = Graph(
        [
            Counter(make("plain")),
            Counter(make("deep"), supersedes=("mid",)),
            Counter(make("mid"), supersedes=("leaf",)),
            Counter(make("leaf")),
            Counter(make("doubt", Level.REVIEW), supersedes=("mid", "leaf", "plain")),
        ]
    )
    assert [graph.reach(n) for n in ("plain", "deep", "mid", "leaf", "doubt")] == [0, 2, 1, 0, 3]
    # reach counts nodes that did not fire; a REVIEW counter never wins a FAIL verdict
    verdict = graph.evaluate(ctx("plain", "deep"))
    assert (verdict.outcome, verdict.root_cause) == (Outcome.FAIL, "deep")


def test_root_cause_ties_go_to_catalog_order() -> None:
    graph = Graph(
        [
            Counter(make("first"), supersedes=("x",)),
            Counter(make("second"), supersedes=("y",)),
            Counter(make("x")),
            Counter(make("y")),
        ]
    )
    assert graph.evaluate(ctx("second", "first")).root_cause == "first"


def test_a_review_verdict_roots_at_the_review_counter_with_the_largest_reach() -> None:
    graph = Graph(
        [
            Counter(make("r1", Level.REVIEW)),
            Counter(make("r2", Level.REVIEW), supersedes=("hidden",)),
            Counter(make("hidden")),
        ]
    )
    verdict = graph.evaluate(ctx("r1", "r2", "hidden"))
    assert (verdict.outcome, verdict.root_cause) == (Outcome.REVIEW, "r2")
    assert [f.rule for f in verdict.facts] == ["r1", "r2"]


WALKTHROUGH = """\
FAIL. Root cause: fmt (FAIL, upstream of 2 rules).
  fmt at answer[0]
    expected: "no fmt"
    actual:   "fmt found"
Also remaining:
  dup (FAIL) at answer[2]
    expected: "no dup"
    actual:   "dup found"
  odd (REVIEW) at "line\\nbreak"
    expected: "no odd"
    actual:   "odd found"
Superseded while their upstream stands:
  fmt supersedes holder and free.
  free supersedes holder.
To flip the verdict to REVIEW, clear fmt and dup.
"""


def test_the_walkthrough_text_is_exact() -> None:
    graph = Graph(
        [
            Counter(make("fmt", where="answer[0]"), supersedes=("holder", "free")),
            Counter(make("holder")),
            Counter(make("free", Level.REVIEW, "answer[1]"), supersedes=("holder",)),
            Counter(make("dup", where="answer[2]")),
            Counter(make("odd", Level.REVIEW, "line\nbreak")),
        ]
    )
    verdict = graph.evaluate(ctx("fmt", "holder", "free", "dup", "odd"))
    assert verdict.feedback == WALKTHROUGH
    printed = render("k", verdict, state="TODO", tries=1, max_tries=3)
    assert printed.splitlines()[:3] == [
        "k -> FAIL on answer 1 of 3 (state TODO, 2 answers left)",
        "  FAIL. Root cause: fmt (FAIL, upstream of 2 rules).",
        "    fmt at answer[0]",
    ]


def test_the_fail_that_locks_done_offers_no_round_to_clear() -> None:
    """The last answer is spent: what the next one must clear would mislead (it said "To flip
    the verdict to PASS, clear …" on the FAIL that locked the item DONE)."""
    verdict = go_graph().evaluate(ctx("fmt", "holder"))
    retry = render("k", verdict, state="TODO", tries=2, max_tries=3)
    assert "  To flip the verdict to PASS, clear fmt, then holder." in retry.splitlines()
    locked = render("k", verdict, state="DONE", tries=3, max_tries=3)
    assert "To flip" not in locked
    assert (
        locked.splitlines()[0]
        == "k -> FAIL on answer 3 of 3 (state DONE — out of tries, not passed)"
    )
    assert locked.splitlines()[-1] == (
        "  No answer is left to clear them: the item is DONE, out of tries, not passed "
        "(a person may reopen it for a new round)."
    )


def test_the_walkthrough_names_every_round_to_clear_before_a_pass() -> None:
    verdict = go_graph().evaluate(ctx("fmt", "holder"))
    assert verdict.feedback == (
        "FAIL. Root cause: fmt (FAIL, upstream of 2 rules).\n"
        "  fmt at answer\n"
        '    expected: "no fmt"\n'
        '    actual:   "fmt found"\n'
        "Superseded while their upstream stands:\n"
        "  fmt supersedes holder.\n"
        "To flip the verdict to PASS, clear fmt, then holder.\n"
    )


def test_a_review_walkthrough_leaves_the_item_to_a_person() -> None:
    """REVIEW locks the item: no round the generator could clear is offered."""
    verdict = go_graph().evaluate(ctx("holder", "free"))
    assert verdict.feedback == (
        "REVIEW. Root cause: free (REVIEW, upstream of 1 rule).\n"
        "  free at answer\n"
        '    expected: "no free"\n'
        '    actual:   "free found"\n'
        "Superseded while their upstream stands:\n"
        "  free supersedes holder.\n"
        "A person decides: the item waits for `reins resolve --accept|--reject`.\n"
    )


def test_pass_has_no_feedback_and_no_facts() -> None:
    assert go_graph().evaluate(ctx()) == Verdict(Outcome.PASS)


def test_evaluation_is_deterministic() -> None:
    graph = go_graph()
    verdicts = {graph.evaluate(ctx("fmt", "holder", "free")) for _ in range(4)}
    assert len(verdicts) == 1


@pytest.mark.parametrize("level", [Level.FAIL, Level.REVIEW])
def test_a_raising_check_is_a_judge_error_whatever_its_level(level: Level) -> None:
    graph = Graph([Counter(make("boom", level)), Counter(make("meh", Level.REVIEW))])
    with pytest.raises(JudgeError) as caught:
        graph.evaluate(ctx("boom!", "meh"))
    assert (caught.value.where, caught.value.cause) == ("boom", "RuntimeError: boom broke")


def test_a_raising_check_is_a_judge_error_even_when_its_fact_would_be_superseded() -> None:
    """Supersession applies to facts; a check that could not answer has none to supersede."""
    graph = go_graph()
    assert graph.evaluate(ctx("fmt", "holder")).root_cause == "fmt"
    with pytest.raises(JudgeError, match="holder: RuntimeError: holder broke"):
        graph.evaluate(ctx("fmt", "holder!"))


def test_a_check_returning_junk_is_a_judge_error() -> None:
    junk = Rule("junk", Level.REVIEW, "returns a string", lambda ctx: "oops")  # type: ignore[arg-type,return-value]
    with pytest.raises(JudgeError) as caught:
        Graph([Counter(junk)]).evaluate(ctx())
    assert caught.value.where == "junk" and "'oops'" in caught.value.cause


def test_an_engine_error_is_a_judge_error_naming_the_graph() -> None:
    """Defence in depth: a cycle that slipped past the build check still cannot PASS, nor FAIL
    the item: the gate is broken, not the submission."""
    graph = Graph([Counter(make("a")), Counter(make("b"))])
    object.__setattr__(graph, "_upstream", {"a": ("b",), "b": ("a",)})
    for judging in (graph.judge, graph.evaluate, graph.acceptability):
        with pytest.raises(JudgeError) as caught:
            judging(ctx("a", "b"))
        assert caught.value.where == GRAPH_RULE
        assert "supersession removed every active counter" in caught.value.cause
        assert "Traceback" not in str(caught.value)


@pytest.mark.parametrize(
    ("counters", "message"),
    [
        ([Counter(make("a"), supersedes=("ghost",))], "supersedes 'ghost', which is not a node"),
        ([Counter(make("a")), Counter(make("a"))], "duplicate nodes: a"),
        ([Counter(make("a"), supersedes=("a",))], "cycle: a → a"),
        (
            [
                Counter(make("a"), supersedes=("b",)),
                Counter(make("b"), supersedes=("c",)),
                Counter(make("c"), supersedes=("a",)),
            ],
            "cycle: a → b → c → a",
        ),
        ([Counter(make("a"), needs=("page",))], "needs ground 'page', which the graph does not"),
        ([Counter(make("reins:pass"))], "belong to reins"),
        ([make("a")], "must be Counters"),
    ],
)
def test_a_graph_that_could_misjudge_is_refused_when_built(
    counters: list[Counter], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        Graph(counters)


def test_from_rules_refuses_edges_keyed_by_an_unknown_rule() -> None:
    with pytest.raises(ConfigError, match="supersedes names gohst, which no rule has"):
        Graph.from_rules([make("a"), make("b")], supersedes={"gohst": ["b"]})
    with pytest.raises(ConfigError, match="which is not a node"):
        Graph.from_rules([make("a")], supersedes={"a": "b"})


def test_from_rules_accepts_a_single_id_as_an_edge() -> None:
    graph = Graph.from_rules([make("a"), make("b")], supersedes={"a": "b"})
    assert graph.catalog()[0].supersedes == ("b",)


def test_the_catalog_shows_what_judges_with_edges() -> None:
    graph = Graph(
        [
            Counter(make("a"), supersedes=("b",)),
            Counter(make("b", Level.REVIEW), needs=("page",)),
        ],
        grounds={"page": lambda ctx, snapshot: ""},
    )
    assert graph.catalog() == [
        CatalogEntry("a", Level.FAIL, "the answer has no a", ("b",), ()),
        CatalogEntry("b", Level.REVIEW, "the answer has no b", (), ("page",)),
    ]
    assert graph.rules == (graph.counters[0].rule, graph.counters[1].rule)


def test_the_graph_plugs_into_a_quest_as_its_gate() -> None:
    graph = go_graph()
    quest = Quest(
        name="g",
        seed=lambda args: [],
        render=lambda item: "",
        prepare=lambda item, raw: Context(key=item.key, submission=[raw]),
        rules=graph.rules,
        gate=graph,
    )
    assert quest.judge is graph
    assert quest.judge.evaluate(ctx("holder")).root_cause == "holder"
    assert [e.id for e in quest.judge.catalog()] == ["fmt", "holder", "free"]


def test_an_ai_counter_is_capped_at_review_in_a_graph() -> None:
    doubt = ai_rule(
        "skeptic",
        "a model doubts the answer",
        ask=lambda q: "doubtful",
        question=lambda ctx: "is it right?",
        read=lambda answer, ctx: Fact(where="answer", expected="sure", actual=answer),
    )
    graph = Graph([Counter(doubt)])
    assert graph.evaluate(ctx()).outcome is Outcome.REVIEW
    assert graph.catalog()[0].level is Level.REVIEW


# --- the property: no edges, same judgment as the flat gate -------------------------------

BEHAVIOURS = ("quiet", "fire", "raise", "junk", "several", "loose")


def behaving(id: str, level: Level, behaviour: str) -> Rule:
    def check(ctx: Context) -> Fact | list[Fact] | None:
        if behaviour == "fire":
            return Fact(where=f"w-{id}", expected="e", actual="a")
        if behaviour == "several":
            return [Fact(where=f"w-{id}.{i}", expected="e", actual="a") for i in range(2)]
        if behaviour == "loose":  # a FAIL rule whose facts weigh REVIEW, then FAIL
            return [
                Fact(where=f"w-{id}.loose", expected="e", actual="a", level="REVIEW"),
                Fact(where=f"w-{id}.strict", expected="e", actual="a"),
            ][: 1 + (int(id[1:]) % 2)]
        if behaviour == "raise":
            raise ValueError(id)
        if behaviour == "junk":
            return 42  # type: ignore[return-value]
        return None

    return Rule(id, level, id, check)


def judging(judge: Callable[[Context], Verdict], context: Context) -> object:
    """The verdict's outcome, facts and root cause, or where and why the judge failed."""
    try:
        v = judge(context)
    except JudgeError as exc:
        return ("judge error", exc.where, exc.cause)
    return (v.outcome, v.facts, v.root_cause)


@given(
    st.lists(
        st.tuples(st.sampled_from([Level.FAIL, Level.REVIEW]), st.sampled_from(BEHAVIOURS)),
        max_size=8,
    )
)
def test_a_graph_without_edges_judges_like_the_flat_gate(spec: list[tuple[Level, str]]) -> None:
    rules = [behaving(f"r{i}", level, b) for i, (level, b) in enumerate(spec)]
    context = Context(key="k", submission=None)
    flat = judging(lambda c: evaluate(rules, c), context)
    graph = judging(Graph.from_rules(rules).evaluate, context)
    assert graph == flat
    broken = [f"r{i}" for i, (_, b) in enumerate(spec) if b in ("raise", "junk")]
    if broken:  # the first broken rule in catalog order names the judge error
        assert flat[:2] == ("judge error", broken[0])  # type: ignore[index]


# --- h-Categoriser ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("weights", "attacks", "expected"),
    [
        ({"a": 1.0}, [], {"a": 1.0}),
        ({"a": 0.4}, [], {"a": 0.4}),
        ({"a": 1.0, "b": 1.0}, [("a", "b")], {"a": 1.0, "b": 0.5}),
        ({"a": 1, "b": 1, "c": 1}, [("a", "b"), ("b", "c")], {"a": 1, "b": 0.5, "c": 2 / 3}),
        ({"a": 0.0, "b": 1.0}, [("a", "b")], {"a": 0.0, "b": 1.0}),
        ({"a": 1.0, "b": 1.0}, [("a", "b"), ("b", "a")], {"a": GOLDEN, "b": GOLDEN}),
        ({"a": 1.0}, [("a", "a")], {"a": GOLDEN}),
        (
            {"a": 1, "b": 1, "c": 1},
            [("a", "b"), ("b", "c"), ("c", "a")],
            {"a": GOLDEN, "b": GOLDEN, "c": GOLDEN},
        ),
    ],
)
def test_h_categoriser_values_on_small_graphs(
    weights: dict[str, float], attacks: list[tuple[str, str]], expected: dict[str, float]
) -> None:
    assert h_categoriser(weights, attacks) == pytest.approx(expected, abs=1e-9)


def test_h_categoriser_stopped_early_returns_a_value_between_the_last_two_rounds() -> None:
    values = h_categoriser({"a": 1.0, "b": 1.0}, [("a", "b"), ("b", "a")], rounds=3)
    assert abs(values["a"] - GOLDEN) < 0.1


def test_h_categoriser_refuses_bad_weights_and_unknown_nodes() -> None:
    with pytest.raises(ValueError, match="in \\[0, 1\\]"):
        h_categoriser({"a": 2.0}, [])
    with pytest.raises(ValueError, match="'z', which is not a node"):
        h_categoriser({"a": 1.0}, [("z", "a")])


def test_graph_acceptability_grades_the_warrant_and_each_counter() -> None:
    graph = Graph([Counter(make("a"), supersedes=("b",)), Counter(make("b")), Counter(make("c"))])
    assert graph.acceptability(ctx()) == {WARRANT: 1.0, "a": 0.0, "b": 0.0, "c": 0.0}
    assert graph.acceptability(ctx("c")) == {WARRANT: 0.5, "a": 0.0, "b": 0.0, "c": 1.0}
    both = graph.acceptability(ctx("b", "c"))
    assert both[WARRANT] == pytest.approx(1 / 3)
    superseded = graph.acceptability(ctx("a", "b"))
    assert superseded == pytest.approx({WARRANT: 1 / 2.5, "a": 1.0, "b": 0.5, "c": 0.0})
    assert list(superseded) == [WARRANT, "a", "b", "c"]
