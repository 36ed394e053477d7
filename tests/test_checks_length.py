"""length: chars, words, sentences, paragraphs and bullets between min and max."""

from __future__ import annotations

import pytest

from reins.checks import spec_of, validate
from reins.errors import ParamError, ParamValueError
from tests.kit.checkkit import HOSTILE, build, run

TEXT = """Intro: Mr. Smith's well-known plan costs 3.5 million. It won't work!

* first item
- second item
+ third item
1. numbered
2) also numbered
-not a bullet
**bold** is not a bullet

Last paragraph.
"""


@pytest.mark.parametrize(
    ("unit", "n"),
    [("chars", len(TEXT)), ("words", 32), ("sentences", 4), ("paragraphs", 3), ("bullets", 5)],
)
def test_each_unit_counts_exactly(unit: str, n: int) -> None:
    assert run(build("length", unit=unit, min=n, max=n), TEXT) == []
    (low,) = run(build("length", unit=unit, min=n + 1), TEXT)
    assert (low.expected, low.actual) == (f"at least {n + 1} {unit}", f"{n} {unit}")
    (high,) = run(build("length", unit=unit, max=n - 1), TEXT)
    assert high.expected == f"at most {n - 1} {unit}"


def test_words_keep_apostrophes_hyphens_and_decimal_points_inside() -> None:
    text = "don't well-known café 3.5 10,000 a,b"
    assert run(build("length", unit="words", min=7, max=7), text) == []


def test_chars_count_composed_characters_once() -> None:
    assert run(build("length", unit="chars", max=4), "cafe\u0301") == []


def test_a_range_is_described() -> None:
    (fact,) = run(build("length", unit="words", min=2, max=3), "one")
    assert fact.expected == "2 to 3 words"


def test_missing_and_non_text_values_are_facts() -> None:
    check = build("length", unit="words", path="submission.body", min=1)
    assert [f.actual for f in run(check, {})] == ["nothing there"]
    assert [f.expected for f in run(check, {"body": 12})] == ["text"]


def test_wildcards_measure_each_value() -> None:
    check = build("length", unit="words", path="submission[*]", max=2)
    assert [f.where for f in run(check, ["a b", "a b c", "a"])] == ["submission[1]"]


@pytest.mark.parametrize("submission", HOSTILE, ids=range(len(HOSTILE)))
@pytest.mark.parametrize("unit", ["chars", "words", "sentences", "paragraphs", "bullets"])
def test_hostile_submissions_do_not_crash(submission: object, unit: str) -> None:
    run(build("length", unit=unit, min=1, max=10), submission)


def test_parameters_are_validated() -> None:
    spec = spec_of("length")
    with pytest.raises(ParamError, match="missing"):
        validate(spec, {"min": 1})
    with pytest.raises(ParamError, match="whole number"):
        validate(spec, {"unit": "words", "min": 1.5})
    with pytest.raises(ParamValueError, match="chars, words, sentences"):
        build("length", unit="lines", min=1)
    with pytest.raises(ParamValueError, match="give min, max or both"):
        build("length", unit="words")
    with pytest.raises(ParamValueError, match="below min"):
        build("length", unit="words", min=3, max=2)
