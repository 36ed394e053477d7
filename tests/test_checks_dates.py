"""temporal: dates consistent with a reference date, through reins.verify.temporal."""

from __future__ import annotations

import pytest

from reins.checks import spec_of, validate
from reins.errors import JudgeError, ParamError, ParamValueError
from reins.values import Fact
from tests.kit.checkkit import HOSTILE, build, run

ITEM = {"date": "2024-03-01"}


def facts(submission: object, payload: object = ITEM, **given: object) -> list[Fact]:
    params = {"path": "submission.when", "reference": "item.date", **given}
    return run(build("temporal", **params), submission, payload=payload)


@pytest.mark.parametrize(
    "when",
    [
        "2024-03-01",
        "2024-02-29",
        "2024-03",  # the month starts on the reference day
        "2024",
        "2023-12-31/2024-01-02",
        "2024-02-01/2024-04-30",  # began before the reference
        "2024-03-01T09:30:00",
        {"kind": "relative", "offset_days": -1},
        {"start": "2024-01-15"},
        ["2024-01-01", None, "2023"],
        None,
    ],
)
def test_consistent_dates_leave_no_fact(when: object) -> None:
    assert facts({"when": when}) == []


def test_a_date_after_the_reference_is_a_fact() -> None:
    (fact,) = facts({"when": "2024-03-02"})
    assert fact == Fact(
        where="submission.when",
        expected="on or before 2024-03-01 (item.date)",
        actual="2024-03-02",
    )
    (fact,) = facts({"when": "2024-04"})
    assert fact.actual == "2024-04 (2024-04-01/2024-04-30)"
    (fact,) = facts({"when": {"kind": "relative", "offset_days": 2}})
    assert fact.actual.endswith("(2024-03-03)")


def test_after_the_reference_is_allowed_when_asked() -> None:
    assert facts({"when": "2025"}, not_after_reference=False) == []


def test_max_days_before_uses_the_last_day_a_date_names() -> None:
    assert facts({"when": "2024-02-01"}, max_days_before=29) == []
    (fact,) = facts({"when": "2024-01-31"}, max_days_before=29)
    assert fact.expected == "at most 29 days before 2024-03-01 (item.date)"
    assert facts({"when": "2024-01"}, max_days_before=30) == []  # ends 2024-01-31
    assert len(facts({"when": "2023"}, max_days_before=30)) == 1


@pytest.mark.parametrize(
    "when",
    [
        "March 2024",
        "2024-02-30",
        "2024-13",
        "2024-03-05/2024-03-01",
        "",
        42,
        True,
        {"kind": "sideways"},
        {"calendar": "persian", "start": "1402"},
        {"kind": "relative"},
        "\ud800",
        "9" * 100_000,
    ],
)
def test_values_that_are_not_dates_are_facts(when: object) -> None:
    (fact,) = facts({"when": when})
    assert fact.expected.startswith("a date YYYY[-MM[-DD]]")


def test_each_element_of_an_array_is_located() -> None:
    got = facts({"when": ["2024-01-01", "2024-05-01", ["x"]]})
    assert [f.where for f in got] == ["submission.when[1]", "submission.when[2][0]"]


@pytest.mark.parametrize("payload", [{}, {"date": "yesterday"}, {"date": 20240301}, None])
def test_a_missing_or_unreadable_reference_is_the_judge_s_failure(payload: object) -> None:
    with pytest.raises(JudgeError, match=r"reference item\.date"):
        facts({"when": "2024-01-01"}, payload=payload)


def test_a_datetime_reference_counts_by_its_day() -> None:
    assert facts({"when": "2024-03-01"}, payload={"date": "2024-03-01T00:00:01+02:00"}) == []


@pytest.mark.parametrize("submission", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_submissions_do_not_crash(submission: object) -> None:
    run(build("temporal", path="submission", reference="item.date"), submission, payload=ITEM)


def test_parameters_are_validated() -> None:
    spec = spec_of("temporal")
    with pytest.raises(ParamError, match="missing"):
        validate(spec, {"path": "submission.when"})
    with pytest.raises(ParamError, match="true or false"):
        validate(spec, {"path": "s", "reference": "item.date", "not_after_reference": 1})
    with pytest.raises(ParamValueError, match="0 or more"):
        build("temporal", path="submission", reference="item.date", max_days_before=-1)
    with pytest.raises(ParamValueError, match="character 1"):
        build("temporal", path="submission", reference="date")
