"""contains / absent: keywords by word boundary and case, counted."""

from __future__ import annotations

import pytest

from reins.checks import spec_of, validate
from reins.errors import ParamError, ParamValueError
from reins.verify.textmatch import count
from tests.kit.checkkit import HOSTILE, build, run

TEXT = "The cat sat.  Concatenate CATS? The Cat,\nthe cat!"


def test_count_is_non_overlapping_and_respects_word_edges() -> None:
    assert count("aaaa", "aa") == 2
    assert count(TEXT, "cat", casefold=True) == 5
    assert count(TEXT, "cat", words=True, casefold=True) == 3
    assert count(TEXT, "cat", words=True) == 2
    assert count(TEXT, "sat. concatenate", casefold=True) == 1  # whitespace folded
    assert count(TEXT, "") == 0


def test_contains_every_keyword() -> None:
    check = build("contains", keywords=["cat", "dog"])
    (fact,) = run(check, TEXT)
    assert (fact.where, fact.expected, fact.actual) == ("submission", "'dog'", "not found")
    assert run(build("contains", keywords=["cat", "the"]), TEXT) == []


def test_contains_any_keyword() -> None:
    assert run(build("contains", keywords=["dog", "cat"], mode="any"), TEXT) == []
    (fact,) = run(build("contains", keywords=["dog", "emu"], mode="any"), TEXT)
    assert fact.expected == "'dog' or 'emu'"


def test_contains_min_count_word_boundary_and_case() -> None:
    assert run(build("contains", keywords=["cat"], min_count=3), TEXT) == []
    (fact,) = run(build("contains", keywords=["cat"], min_count=4), TEXT)
    assert (fact.expected, fact.actual) == ("'cat' at least 4 times", "found 3 times")
    assert run(build("contains", keywords=["cat"], min_count=5, word_boundary=False), TEXT) == []
    (fact,) = run(build("contains", keywords=["cat"], min_count=3, case_sensitive=True), TEXT)
    assert fact.actual == "found 2 times"


def test_contains_on_a_missing_or_non_text_value_is_a_fact() -> None:
    check = build("contains", keywords=["x"], path="submission.body")
    assert [f.actual for f in run(check, {})] == ["nothing there"]
    assert [f.expected for f in run(check, {"body": ["x"]})] == ["text"]


def test_absent_fires_per_keyword_found() -> None:
    check = build("absent", keywords=["cat", "dog", "concatenate"])
    facts = run(check, TEXT)
    assert [(f.expected, f.actual) for f in facts] == [
        ("no 'cat'", "found 3 times"),
        ("no 'concatenate'", "found once"),
    ]
    assert run(build("absent", keywords=["dog"]), TEXT) == []
    assert run(build("absent", keywords=["x"], path="submission.body"), {}) == []


def test_keywords_in_other_scripts() -> None:
    assert run(build("contains", keywords=["Straße"]), "Die STRASSE ist lang") == []
    assert len(run(build("contains", keywords=["Straße"], case_sensitive=True), "STRASSE")) == 1
    assert run(build("contains", keywords=["北京"], word_boundary=False), "我住在北京市") == []


@pytest.mark.parametrize("submission", HOSTILE, ids=range(len(HOSTILE)))
@pytest.mark.parametrize("name", ["contains", "absent"])
def test_hostile_submissions_do_not_crash(submission: object, name: str) -> None:
    run(build(name, keywords=["x", "\ud800"]), submission)


@pytest.mark.parametrize("name", ["contains", "absent"])
def test_parameters_are_validated(name: str) -> None:
    spec = spec_of(name)
    with pytest.raises(ParamError, match="missing"):
        validate(spec, {})
    with pytest.raises(ParamError, match="array of strings"):
        validate(spec, {"keywords": "cat"})
    with pytest.raises(ParamError, match="array of strings"):
        validate(spec, {"keywords": ["cat", 1]})
    with pytest.raises(ParamValueError, match="non-blank"):
        build(name, keywords=[])
    with pytest.raises(ParamValueError, match="non-blank"):
        build(name, keywords=["cat", " "])


def test_contains_specific_parameters() -> None:
    with pytest.raises(ParamError, match="unknown"):
        validate(spec_of("absent"), {"keywords": ["x"], "min_count": 2})
    with pytest.raises(ParamValueError, match="at least 1"):
        build("contains", keywords=["x"], min_count=0)
    with pytest.raises(ParamValueError, match="all, any"):
        build("contains", keywords=["x"], mode="most")
