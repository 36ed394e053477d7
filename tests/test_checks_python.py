"""python: module:function checks, loaded at build, their failures the judge's."""

from __future__ import annotations

import pytest

from reins.checks import spec_of, validate
from reins.errors import JudgeError, ParamError, ParamValueError
from tests.kit.checkkit import build, run


def test_a_function_returning_one_fact_or_none() -> None:
    check = build("python", function="tests.kit.checkfuncs:too_long", params={"limit": 3})
    assert run(check, "abc") == []
    (fact,) = run(check, "abcd")
    assert fact.expected == "at most 3"


def test_a_function_returning_several_facts_with_their_levels() -> None:
    check = build("python", function="tests.kit.checkfuncs:each_word")
    facts = run(check, "one Two")
    assert [(f.actual, f.level) for f in facts] == [("one", "REVIEW"), ("Two", "FAIL")]


@pytest.mark.parametrize("function", ["broken", "wrong"])
def test_a_failing_function_is_the_judge_s_failure(function: str) -> None:
    check = build("python", function=f"tests.kit.checkfuncs:{function}")
    with pytest.raises(JudgeError, match=f"python check tests.kit.checkfuncs:{function}"):
        run(check, "x")


@pytest.mark.parametrize(
    ("function", "message"),
    [
        ("tests.kit.checkfuncs", "expected module:function"),
        ("tests.no_such_module:f", "cannot import tests.no_such_module: ModuleNotFoundError"),
        ("tests.kit.checkfuncs:missing", "has no missing"),
        ("tests.kit.checkfuncs:NOT_CALLABLE", "is not callable"),
        (":f", "expected module:function"),
    ],
)
def test_bad_references_are_refused_at_build(function: str, message: str) -> None:
    with pytest.raises(ParamValueError, match=message) as caught:
        build("python", function=function)
    assert caught.value.param == "function"


def test_parameters_are_validated() -> None:
    spec = spec_of("python")
    with pytest.raises(ParamError, match="missing"):
        validate(spec, {})
    with pytest.raises(ParamError, match="expected a table, got list"):  # a type error now
        validate(spec, {"function": "tests.kit.checkfuncs:too_long", "params": [1]})
