"""numeric, equals and json_path: values and shapes of the submission."""

from __future__ import annotations

import pytest

from reins.checks import spec_of, validate
from reins.errors import JudgeError, ParamError, ParamValueError
from tests.kit.checkkit import HOSTILE, build, run

# numeric


def test_numeric_within_an_absolute_tolerance() -> None:
    check = build("numeric", path="submission.total", expected=10.0, tolerance=0.5)
    assert run(check, {"total": 10.4}) == []
    assert run(check, {"total": 10}) == []
    (fact,) = run(check, {"total": 10.6})
    assert (fact.expected, fact.actual) == ("10 ± 0.5", "10.6")


def test_numeric_exact_and_relative() -> None:
    exact = build("numeric", path="submission", expected=3)
    assert run(exact, 3) == []
    assert [f.expected for f in run(exact, 3.0001)] == ["3"]
    relative = build("numeric", path="submission", expected=200, relative=0.01)
    assert run(relative, 198) == []
    assert len(run(relative, 197.9)) == 1


def test_numeric_reads_the_expected_number_from_the_item() -> None:
    check = build("numeric", path="submission.n", expected_path="item.n")
    assert run(check, {"n": 7}, payload={"n": 7}) == []
    assert len(run(check, {"n": 8}, payload={"n": 7})) == 1
    for payload in ({}, {"n": "7"}, {"n": True}, None):
        with pytest.raises(JudgeError, match="expected_path"):
            run(check, {"n": 7}, payload=payload)


@pytest.mark.parametrize("value", ["42", True, None, float("nan"), float("inf"), 10**400, [42]])
def test_numeric_wrong_types_are_facts(value: object) -> None:
    (fact,) = run(build("numeric", path="submission.n", expected=42), {"n": value})
    assert fact.expected == "the number 42"


def test_numeric_missing_is_a_fact_and_wildcards_check_each() -> None:
    check = build("numeric", path="submission[*]", expected=1)
    assert [f.where for f in run(check, [1, 2, 1.0])] == ["submission[1]"]
    assert [f.actual for f in run(check, [])] == ["nothing there"]


def test_numeric_parameters() -> None:
    with pytest.raises(ParamValueError, match="one of them"):
        build("numeric", path="submission")
    with pytest.raises(ParamValueError, match="one of them"):
        build("numeric", path="submission", expected=1, expected_path="item.n")
    with pytest.raises(ParamValueError, match="negative"):
        build("numeric", path="submission", expected=1, tolerance=-1)
    with pytest.raises(ParamValueError, match="finite"):
        build("numeric", path="submission", expected=float("nan"))
    with pytest.raises(ParamError, match="a number"):
        validate(spec_of("numeric"), {"path": "submission", "expected": "1"})


# equals


def test_equals_is_json_equality() -> None:
    check = build("equals", path="submission.a", expected=1)
    assert run(check, {"a": 1}) == []
    assert run(check, {"a": 1.0}) == []
    assert len(run(check, {"a": True})) == 1
    assert len(run(check, {"a": "1"})) == 1
    table = build("equals", path="submission", expected={"x": [1, "b"], "y": False})
    assert run(table, {"y": False, "x": [1, "b"]}) == []
    assert len(run(table, {"y": 0, "x": [1, "b"]})) == 1
    assert len(run(table, {"y": False, "x": [1, "b"], "z": None})) == 1


@pytest.mark.parametrize(
    ("mode", "value", "fires"),
    [
        ("none", "New  York", True),
        ("whitespace", " New \n York ", False),
        ("whitespace", "new york", True),
        ("casefold", "NEW YORK", False),
        ("casefold", "new  york", True),
        ("both", " NEW\tyork", False),
    ],
)
def test_equals_normalises_strings(mode: str, value: str, fires: bool) -> None:
    check = build("equals", path="submission", expected="New York", normalise=mode)
    assert bool(run(check, value)) is fires
    nested = build("equals", path="submission", expected=["New York"], normalise=mode)
    assert bool(run(nested, [value])) is fires


def test_equals_from_the_item_and_when_missing() -> None:
    check = build("equals", path="submission.answer", expected_path="item.answer")
    assert run(check, {"answer": "B"}, payload={"answer": "B"}) == []
    (fact,) = run(check, {"answer": "C"}, payload={"answer": "B"})
    assert (fact.expected, fact.actual) == ("B", "C")
    assert [f.actual for f in run(check, {}, payload={"answer": "B"})] == ["nothing there"]
    with pytest.raises(JudgeError):
        run(check, {"answer": "B"}, payload={})


def test_equals_parameters() -> None:
    with pytest.raises(ParamValueError, match="one of them"):
        build("equals", path="submission")
    with pytest.raises(ParamValueError, match="none, whitespace, casefold, both"):
        build("equals", path="submission", expected=1, normalise="lower")


# json_path


def test_json_path_exists() -> None:
    check = build("json_path", path="submission.who")
    assert run(check, {"who": None}) == []
    assert [f.actual for f in run(check, {})] == ["nothing there"]
    never = build("json_path", path="submission.debug", exists=False)
    assert run(never, {}) == []
    assert [f.where for f in run(never, {"debug": 1})] == ["submission.debug"]


def test_json_path_type_and_count() -> None:
    check = build("json_path", path="submission.who[*]", type="string", count_min=1, count_max=2)
    assert run(check, {"who": ["a", "b"]}) == []
    facts = run(check, {"who": ["a", 2, "c"]})
    assert [(f.where, f.expected) for f in facts] == [
        ("submission.who[*]", "1 to 2 values"),
        ("submission.who[1]", "string"),
    ]
    integer = build("json_path", path="submission.n", type="integer")
    assert run(integer, {"n": 3}) == [] and run(integer, {"n": 3.0}) == []
    assert len(run(integer, {"n": 3.5})) == 1 and len(run(integer, {"n": True})) == 1


def test_json_path_parameters() -> None:
    with pytest.raises(ParamValueError, match="string, number"):
        build("json_path", path="submission", type="str")
    with pytest.raises(ParamValueError, match="below count_min"):
        build("json_path", path="submission", count_min=3, count_max=1)
    with pytest.raises(ParamValueError, match="no type or count"):
        build("json_path", path="submission", exists=False, type="string")


@pytest.mark.parametrize("submission", HOSTILE, ids=range(len(HOSTILE)))
@pytest.mark.parametrize(
    ("name", "given"),
    [
        ("numeric", {"path": "submission.who", "expected": 1}),
        ("equals", {"path": "submission.who", "expected": {"a": [1]}, "normalise": "both"}),
        ("equals", {"path": "submission", "expected": "x", "normalise": "both"}),
        ("json_path", {"path": "submission[*]", "type": "integer", "count_max": 2}),
    ],
)
def test_hostile_submissions_do_not_crash(
    submission: object, name: str, given: dict[str, object]
) -> None:
    run(build(name, **given), submission)


@pytest.mark.parametrize("name", ["numeric", "equals", "json_path"])
def test_unknown_and_missing_parameters(name: str) -> None:
    spec = spec_of(name)
    with pytest.raises(ParamError, match="missing"):
        validate(spec, {})
    with pytest.raises(ParamError, match="unknown"):
        validate(spec, {"path": "submission", "expect": 1})
