"""regex: must match / must not match, compiled at load, hostile text bounded."""

from __future__ import annotations

import pytest

from reins.checks import spec_of, validate
from reins.errors import ParamError, ParamValueError
from tests.kit.checkkit import HOSTILE, build, run


def test_must_match_fires_only_without_a_match() -> None:
    check = build("regex", pattern=r"^\d{4}-\d{2}-\d{2}$", path="submission.when")
    assert run(check, {"when": "2024-03-01"}) == []
    (fact,) = run(check, {"when": "March 1"})
    assert (fact.where, fact.expected, fact.actual) == (
        "submission.when",
        r"text matching /^\d{4}-\d{2}-\d{2}$/",
        "March 1",
    )


def test_must_match_on_a_missing_field_is_a_fact() -> None:
    check = build("regex", pattern="x", path="submission.when")
    assert [f.actual for f in run(check, {})] == ["nothing there"]


def test_must_not_match_names_what_matched_and_where() -> None:
    check = build("regex", pattern=r"\bTODO\b", mode="must_not_match")
    assert run(check, "all done") == []
    (fact,) = run(check, "done TODO later")
    assert fact.actual == "'TODO' at character 6"
    assert run(check, {"a": 1}) != []  # a JSON object is not text: a fact
    missing = build("regex", pattern="x", path="submission.note", mode="must_not_match")
    assert run(missing, {}) == []


def test_flags() -> None:
    assert run(build("regex", pattern="^yes$", flags="im"), "no\nYES\n") == []
    assert len(run(build("regex", pattern="^yes$", flags="m"), "no\nYES\n")) == 1


def test_each_value_of_a_wildcard_is_searched() -> None:
    check = build("regex", pattern="@", path="submission[*]")
    facts = run(check, ["a@b", "ab", 3])
    assert [(f.where, f.expected) for f in facts] == [
        ("submission[1]", "text matching /@/"),
        ("submission[2]", "text"),
    ]


def test_text_longer_than_the_cap_is_not_searched_but_is_a_fact() -> None:
    check = build("regex", pattern="(a+)+$", max_chars=1000)
    (fact,) = run(check, "a" * 5000 + "!")
    assert fact.expected == "at most 1000 characters to search"


@pytest.mark.parametrize("submission", HOSTILE, ids=range(len(HOSTILE)))
@pytest.mark.parametrize("mode", ["must_match", "must_not_match"])
def test_hostile_submissions_do_not_crash(submission: object, mode: str) -> None:
    run(build("regex", pattern=r"\w+", mode=mode, path="submission"), submission)


@pytest.mark.parametrize(
    ("given", "param", "message"),
    [
        ({"pattern": "(unclosed"}, "pattern", "does not compile"),
        ({"pattern": "x", "flags": "q"}, "flags", "unknown flag"),
        ({"pattern": "x", "mode": "should_match"}, "mode", "must_match, must_not_match"),
        ({"pattern": "x", "path": "submission.["}, "path", "character 12"),
        ({"pattern": "x", "max_chars": 0}, "max_chars", "at least 1"),
    ],
)
def test_unusable_values_are_refused_at_build(
    given: dict[str, object], param: str, message: str
) -> None:
    with pytest.raises(ParamValueError, match=message) as caught:
        build("regex", **given)
    assert caught.value.param == param


def test_parameters_are_validated() -> None:
    spec = spec_of("regex")
    with pytest.raises(ParamError, match="missing"):
        validate(spec, {})
    with pytest.raises(ParamError, match="a string"):
        validate(spec, {"pattern": ["x"]})
    with pytest.raises(ParamError, match="unknown"):
        validate(spec, {"pattern": "x", "ignorecase": True})


def test_a_pattern_names_the_item_s_own_values_each_as_written() -> None:
    # One rule for every item: no file changed but the item's own. A path's "." is a dot only,
    # so an agent's `toolz/utilsXpy` is not the item's `toolz/utils.py`.
    check = build("regex", pattern=r'^diff --git "?a/(?!{item.path} )', mode="must_not_match",
                  flags="m")  # fmt: skip
    item = {"path": "toolz/utils.py"}
    own = "diff --git a/toolz/utils.py b/toolz/utils.py\n"
    assert run(check, own, payload=item) == []
    (fact,) = run(check, own + "diff --git a/toolz/utilsXpy b/toolz/utilsXpy\n", payload=item)
    assert fact.actual.startswith("'diff --git a/'")
    keyed = build("regex", pattern=r"^{key}:", mode="must_match")
    assert run(keyed, "a+b: done", key="a+b") == []  # "+" matched as itself
    assert run(keyed, "aab: done", key="a+b") != []


def test_a_pattern_naming_a_missing_field_is_the_judge_s_error() -> None:
    from reins.errors import JudgeError

    check = build("regex", pattern="{item.path}")
    with pytest.raises(JudgeError, match="no field 'path'"):
        run(check, "text", payload={})


def test_a_pattern_with_fields_that_does_not_compile_is_refused_at_load() -> None:
    with pytest.raises(ParamValueError, match="does not compile"):
        build("regex", pattern="({item.path}")
