"""The e-mail quest's graph gate: syntax explains absence, free mail is doubt, MX is staged."""

from __future__ import annotations

import sys

import pytest

from reins.errors import ConfigError, JudgeError
from reins.gate import Context, Fact, FakeResolver, Level, Outcome, Rule
from reins.quests.emails import RULES
from reins.quests.emails.graph import MX, build_graph, domains

TEXT = "Write to alice@example.org, or to Bob at bob@mail.example.net.\n"


def ctx(*addresses: str, source: str = TEXT) -> Context:
    return Context(key="k", submission=list(addresses), source=source)


def test_a_correct_answer_passes() -> None:
    verdict = build_graph(RULES).evaluate(ctx("alice@example.org", "bob@mail.example.net"))
    assert verdict.outcome is Outcome.PASS


def test_bad_syntax_supersedes_the_source_check() -> None:
    judgement = build_graph(RULES).judge(ctx("alice@example.org", "bob#mail.example.net"))
    assert judgement.verdict.outcome is Outcome.FAIL
    assert judgement.verdict.root_cause == "address-syntax"
    assert judgement.superseded == {"address-in-source": ("address-syntax",)}
    assert judgement.remaining == ("address-syntax", "address-missing")
    assert "  address-syntax supersedes address-in-source.\n" in judgement.verdict.feedback


def test_a_well_formed_invented_address_still_fails_the_source_check() -> None:
    verdict = build_graph(RULES).evaluate(ctx("alice@example.org", "bob@example.net"))
    assert (verdict.outcome, verdict.root_cause) == (Outcome.FAIL, "address-in-source")


def test_free_mail_raises_review() -> None:
    source = "Reach me at jo.doe@gmail.com any time."
    verdict = build_graph(RULES).evaluate(ctx("jo.doe@gmail.com", source=source))
    assert (verdict.outcome, verdict.root_cause) == (Outcome.REVIEW, "free-mail")


def test_the_catalog_shows_the_edges_and_no_mx_by_default() -> None:
    catalog = {e.id: e for e in build_graph(RULES).catalog()}
    assert [e.id for e in build_graph(RULES).catalog()] == [r.id for r in RULES]
    assert catalog["address-syntax"].supersedes == ("address-in-source",)
    assert catalog["free-mail"].level is Level.REVIEW
    assert all(not e.needs for e in catalog.values())


def test_the_mx_counter_fails_a_domain_without_mx_and_looks_each_domain_up_once() -> None:
    # local parts compare case-sensitively (RFC 5321 §2.4): the text writes B as the answer does
    source = "a@nomx.example, B@nomx.example and c@ok.example"
    resolver = FakeResolver(domains={"nomx.example": False, "ok.example": True})
    graph = build_graph(RULES, mx=True, resolver=resolver)
    verdict = graph.evaluate(ctx("a@nomx.example", "B@NOMX.example", "c@ok.example", source=source))
    assert (verdict.outcome, verdict.root_cause) == (Outcome.FAIL, "address-mx")
    assert verdict.facts[0].actual == "a@nomx.example: nomx.example has no MX record"
    assert sorted(resolver.calls) == [("mx", "nomx.example"), ("mx", "ok.example")]


def test_the_mx_counter_leaves_a_fact_for_each_address_without_mx() -> None:
    source = "a@nomx.example, c@ok.example and d@gone.example"
    resolver = FakeResolver(
        domains={"nomx.example": False, "ok.example": True, "gone.example": False}
    )
    graph = build_graph(RULES, mx=True, resolver=resolver)
    verdict = graph.evaluate(ctx("a@nomx.example", "c@ok.example", "d@gone.example", source=source))
    assert (verdict.outcome, verdict.root_cause) == (Outcome.FAIL, "address-mx")
    assert [(f.rule, f.where) for f in verdict.facts] == [
        ("address-mx", "addresses[0]"),
        ("address-mx", "addresses[2]"),
    ]
    assert "d@gone.example: gone.example has no MX record" in verdict.feedback


def test_the_mx_ground_is_not_looked_up_after_a_cheaper_fail() -> None:
    resolver = FakeResolver(domains={"example.org": True})
    graph = build_graph(RULES, mx=True, resolver=resolver)
    judgement = graph.judge(ctx("alice@example.org"))  # bob is missing
    assert judgement.verdict.root_cause == "address-missing"
    assert judgement.skipped == ("address-mx",)
    assert resolver.calls == []


def test_an_mx_lookup_that_fails_is_a_judge_error_naming_the_ground() -> None:
    """DNS not answering says nothing about the addresses: no verdict, no try charged."""
    resolver = FakeResolver(domains={"example.org": True, "mail.example.net": TimeoutError("dns")})
    with pytest.raises(JudgeError) as caught:
        build_graph(RULES, mx=True, resolver=resolver).evaluate(
            ctx("alice@example.org", "bob@mail.example.net")
        )
    assert caught.value.where == f"ground {MX}"
    assert "mx mail.example.net: TimeoutError: dns" in caught.value.cause


def test_an_mx_lookup_that_fails_is_not_consulted_when_a_cheap_fail_settles_it() -> None:
    resolver = FakeResolver(domains={"mail.example.net": TimeoutError("dns")})
    judgement = build_graph(RULES, mx=True, resolver=resolver).judge(ctx("alice@example.org"))
    assert judgement.verdict.root_cause == "address-missing"
    assert resolver.calls == []


def test_mx_with_no_resolver_needs_dnspython(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "dns", None)
    monkeypatch.setitem(sys.modules, "dns.resolver", None)
    with pytest.raises(ConfigError, match="pip install dnspython"):
        build_graph(RULES, mx=True)


def quiet(id: str, level: Level = Level.FAIL) -> Rule:
    return Rule(id, level, id, lambda ctx: None)


SMALL = [quiet("address-syntax"), quiet("address-in-source"), quiet("free-mail", Level.REVIEW)]


def test_a_submission_the_mx_ground_cannot_read_fails_closed() -> None:
    """Never a PASS: a context the ground cannot read is a judge error (prepare refuses such a
    submission with a json-shape FAIL before the gate ever sees it)."""
    graph = build_graph(SMALL, mx=True, resolver=FakeResolver())
    with pytest.raises(JudgeError) as caught:
        graph.evaluate(Context(key="k", submission={"addresses": []}))
    assert caught.value.where == "ground mx"
    assert "expected a list of addresses" in caught.value.cause


def test_domains_are_lower_cased_and_listed_once() -> None:
    assert domains(ctx("a@X.example", "b@x.example", "broken", "c@")) == ["x.example"]


def test_a_json_shape_rule_supersedes_every_other_rule() -> None:
    shape = Rule(
        "json-shape",
        Level.FAIL,
        "shape",
        lambda ctx: Fact(where="submission", expected="JSON", actual="prose"),
    )
    graph = build_graph([shape, *RULES])
    assert graph.catalog()[0].supersedes == tuple(r.id for r in RULES)
    verdict = graph.evaluate(ctx("bob@mail"))
    assert (verdict.root_cause, [f.rule for f in verdict.facts]) == ("json-shape", ["json-shape"])


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        (SMALL[1:], "no rule address-syntax"),
        ([*SMALL[:2], quiet("free-mail")], "free-mail must be a REVIEW rule"),
    ],
)
def test_a_rule_set_the_graph_cannot_stand_on_is_refused(rules: list[Rule], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        build_graph(rules)


def test_passing_address_mx_yourself_with_mx_on_is_refused() -> None:
    graph = build_graph(SMALL, mx=True, resolver=FakeResolver())
    with pytest.raises(ConfigError, match="added by mx=True"):
        build_graph(graph.rules, mx=True, resolver=FakeResolver())
