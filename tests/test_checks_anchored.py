"""anchored: extracted strings must be whole token sequences of the source."""

from __future__ import annotations

import pytest

from reins.checks import spec_of, validate
from reins.checks.spec import BuiltCheck
from reins.errors import JudgeError, ParamError, ParamValueError
from reins.gate.rule import Context
from reins.values import JSON, Fact

SOURCE = (
    "Mayor Jane Smithson of Springfield said on Monday that the bridge,\n"
    "closed since 2019, will reopen. Contact: press@springfield.gov."
)


def build(**given: object) -> BuiltCheck:
    spec = spec_of("anchored")
    return spec.build(validate(spec, given))


def facts(check: BuiltCheck, submission: JSON, source: str = SOURCE) -> list[Fact]:
    out = check(Context(key="k", submission=submission, source=source))
    assert isinstance(out, list)
    return out


def test_whole_spans_are_anchored_across_whitespace_and_line_breaks() -> None:
    check = build(path="submission.who[*]")
    ok: list[JSON] = [
        "Jane Smithson",
        "Mayor Jane Smithson",
        "the bridge,  closed",
        "2019",
        "Monday",
    ]
    assert facts(check, {"who": ok}) == []


@pytest.mark.parametrize(
    "value",
    [
        "Jane Smith",  # a truncated word
        "Smithso",
        "Jane  Smithsons",  # an altered word
        "the bridge closed",  # a dropped comma
        "jane smithson",  # case, by default
        "Mayor Smithson",  # not contiguous
        "",  # nothing
        "   ",
    ],
)
def test_truncated_altered_or_empty_strings_are_facts(value: str) -> None:
    check = build(path="submission.who[*]")
    assert facts(check, {"who": [value]}) == [
        Fact(where="submission.who[0]", expected="a span of the source", actual=value)
    ]


def test_word_tokens_accept_part_of_an_address_and_whitespace_tokens_do_not() -> None:
    words = build(path="submission.who")
    spaces = build(path="submission.who", tokens="whitespace")
    for part in ("press@springfield", "springfield.gov"):
        assert facts(words, {"who": part}) == []
        assert [f.actual for f in facts(spaces, {"who": part})] == [part]
    for whole in ("press@springfield.gov", "press@springfield.gov.", "bridge,", "Jane Smithson"):
        assert facts(spaces, {"who": whole}) == []
    assert facts(spaces, {"who": "the bridge,\n closed since 2019"}) == []
    assert len(facts(spaces, {"who": "Smithso"})) == 1


def test_an_unknown_token_mode_is_refused_at_build() -> None:
    with pytest.raises(ParamValueError, match="words, whitespace"):
        build(path="submission", tokens="chars")


def test_case_insensitive_when_asked() -> None:
    assert facts(build(path="submission.who", case_sensitive=False), {"who": "JANE smithson"}) == []


def test_arrays_and_objects_are_walked_and_each_leaf_located() -> None:
    check = build(path="submission.people")
    got = facts(
        check,
        {"people": [{"name": "Jane Smithson", "town": "Springfeld"}, None, 2019, True, 7]},
    )
    assert [(f.where, f.actual) for f in got] == [
        ("submission.people[0].town", "Springfeld"),
        ("submission.people[3]", "boolean"),
        ("submission.people[4]", "7"),
    ]


def test_a_missing_field_is_no_fact_here() -> None:
    assert facts(build(path="submission.who"), {"what": "x"}) == []
    assert facts(build(path="submission.who"), "plain text") == []


def test_the_source_may_come_from_the_payload() -> None:
    check = build(path="submission.who", source="item.text")
    ctx = Context(key="k", submission={"who": "Ada"}, payload={"text": "Ada Lovelace"})
    assert check(ctx) == []


@pytest.mark.parametrize("source", ["", "  \n"])
def test_an_empty_source_is_the_judge_s_failure(source: str) -> None:
    with pytest.raises(JudgeError, match="source"):
        facts(build(path="submission.who"), {"who": "x"}, source=source)


def test_a_missing_source_field_is_the_judge_s_failure() -> None:
    check = build(path="submission.who", source="item.text")
    with pytest.raises(JudgeError, match=r"item\.text"):
        check(Context(key="k", submission={"who": "x"}, payload={}))


def test_hostile_values_do_not_crash() -> None:
    check = build(path="submission[*]")
    huge = "Jane " * 200_000
    got = facts(check, ["\ud800", huge, "\x00", {"a": [[[["Monday"]]]]}, 1e308, float("nan")])
    assert [f.where for f in got] == [
        "submission[0]",
        "submission[1]",
        "submission[2]",
        "submission[4]",
        "submission[5]",
    ]
    deep: JSON = "Monday"
    for _ in range(5000):
        deep = [deep]
    assert facts(check, [deep]) == []


def test_parameters_are_validated() -> None:
    spec = spec_of("anchored")
    with pytest.raises(ParamError, match="missing"):
        validate(spec, {})
    with pytest.raises(ParamError, match="unknown"):
        validate(spec, {"path": "submission", "sorce": "source"})
    with pytest.raises(ParamError, match="true or false"):
        validate(spec, {"path": "submission", "case_sensitive": "yes"})
    with pytest.raises(ParamValueError, match="character 1"):
        build(path="answer.who")
