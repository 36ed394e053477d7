"""temporal: structured time specs resolved against an injected reference time."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reins.verify import Kind, Resolved, TimeSpec, resolve, unanchored

REF = datetime(2026, 6, 5, 9, 30, tzinfo=UTC)
ABSOLUTE, RELATIVE = Kind.ABSOLUTE, Kind.RELATIVE


def ok(value: str, interval: bool = False) -> Resolved:
    return Resolved(value, interval=interval, determined=True)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (TimeSpec(start="2017-01-10"), ok("2017-01-10")),
        (TimeSpec(start="2017-01"), ok("2017-01")),
        (TimeSpec(start="2017"), ok("2017")),
        (TimeSpec(start="2017-01-10", end="2017-01-14"), ok("2017-01-10/2017-01-14", True)),
        (TimeSpec(start="2017-01", end="2017-03-02"), ok("2017-01/2017-03-02", True)),
        (TimeSpec(start="2017-01-10", end="2017-01-10"), ok("2017-01-10/2017-01-10", True)),
        (TimeSpec(start="2024-02-29"), ok("2024-02-29")),
        (TimeSpec(kind=RELATIVE, offset_days=-1), ok("2026-06-04")),
        (TimeSpec(kind=RELATIVE, offset_days=0), ok("2026-06-05")),
        (
            TimeSpec(kind=RELATIVE, offset_days=-7, end_offset_days=-1),
            ok("2026-05-29/2026-06-04", True),
        ),
    ],
)
def test_determined_specs_resolve_to_iso_dates(spec: TimeSpec, expected: Resolved) -> None:
    assert resolve(spec, REF) == expected


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        (TimeSpec(calendar="persian", start="1395-10-21"), "persian calendar is not supported"),
        (TimeSpec(start="nope"), "is not a date"),
        (TimeSpec(start=""), "is not a date"),
        (TimeSpec(start="2017-1-10"), "is not a date"),
        (TimeSpec(start="2017-01-10T00:00"), "is not a date"),
        (TimeSpec(start=" 2017-01-10"), "is not a date"),
        (TimeSpec(start="٢٠١٧-٠١-١٠"), "is not a date"),
        (TimeSpec(start="2023-02-29"), "is not a date"),
        (TimeSpec(start="2017-13"), "is not a date"),
        (TimeSpec(start="2017-04-31"), "is not a date"),
        (TimeSpec(start="0000-01-01"), "is not a date"),
        (TimeSpec(start="2017-01-10", end="2017-02-30"), "end '2017-02-30' is not a date"),
        (TimeSpec(start="2017-01-14", end="2017-01-10"), "ends (2017-01-10) before it starts"),
        (TimeSpec(start="2017-06", end="2017"), "before it starts"),
        (TimeSpec(kind=RELATIVE), "needs offset_days"),
        (TimeSpec(kind=RELATIVE, offset_days=-1, end_offset_days=-3), "before it starts"),
        (TimeSpec(kind=RELATIVE, offset_days=10**7), "leaves the years"),
    ],
)
def test_undecidable_specs_are_undetermined_with_a_reason(spec: TimeSpec, reason: str) -> None:
    result = resolve(spec, REF)
    assert (result.determined, result.value, result.interval) == (False, "", False)
    assert reason in result.reason


def test_relative_days_are_counted_in_the_reference_times_own_zone() -> None:
    late = datetime(
        2026, 6, 5, 23, 30, tzinfo=timezone(timedelta(hours=-5))
    )  # 04:30 UTC on the 6th
    assert resolve(TimeSpec(kind=RELATIVE, offset_days=1), late).value == "2026-06-06"
    assert resolve(TimeSpec(kind=RELATIVE, offset_days=1), date(2026, 12, 31)).value == "2027-01-01"


@pytest.mark.parametrize(
    ("data", "spec"),
    [
        ({"start": "2017-01-10"}, TimeSpec(start="2017-01-10")),
        (
            {"kind": "relative", "offset_days": -2, "anchors": ["two days ago"]},
            TimeSpec(kind=RELATIVE, offset_days=-2, anchors=("two days ago",)),
        ),
        ({"kind": "absolute", "calendar": "", "start": "2017"}, TimeSpec(start="2017")),
    ],
)
def test_specs_are_read_from_json(data: dict[str, Any], spec: TimeSpec) -> None:
    assert TimeSpec.from_dict(data) == spec


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"kind": "someday"}, "kind must be"),
        ({"kind": ["relative"]}, "kind must be"),
        ({"when": "today"}, "unknown time spec keys: when"),
        ({"start": 2017}, "start must be text"),
        ({"calendar": "julian"}, "calendar must be one of"),
        ({"kind": "relative", "offset_days": "-1"}, "offset_days must be a whole number"),
        ({"kind": "relative", "offset_days": True}, "offset_days must be a whole number"),
        ({"kind": "relative", "offset_days": 1.5}, "offset_days must be a whole number"),
        ({"anchors": "yesterday"}, "anchors must be a list"),
        ([], "a time spec is an object"),
    ],
)
def test_malformed_json_specs_are_refused(data: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        TimeSpec.from_dict(data)


@pytest.mark.parametrize(
    ("start", "end", "anchors", "unstated"),
    [
        ("2017-01-10", "", ["on 10 January 2017"], ["01"]),
        ("2017-01-10", "", ["2017-01-10"], []),
        ("2017-01-10", "", ["10/1/2017"], []),
        ("2017-01-10", "", ["Türkiye Kurtulmuş said"], ["2017", "01", "10"]),
        ("2010-10-10", "", ["in 2010"], ["10", "10"]),
        ("2017-01-10", "", ["2017", "1月10日"], []),
        ("2017-01-10", "", ["٢٠١٧/١/١٠"], []),
        ("2017-01", "2017-03", ["January to March 2017"], ["01", "03"]),
        ("2017-01-10", "2017-01-14", ["10-14/01/2017"], []),
        ("", "", [], []),
    ],
)
def test_unanchored_lists_date_components_no_anchor_states_as_a_whole_number(
    start: str, end: str, anchors: list[str], unstated: list[str]
) -> None:
    spec = TimeSpec(start=start, end=end, anchors=tuple(anchors))
    assert unanchored(spec) == unstated
    assert unanchored(TimeSpec(start=start, end=end), anchors) == unstated


@given(st.dates(min_value=date(1, 1, 1), max_value=date(9999, 12, 31)))
def test_every_real_date_resolves_to_itself(day: date) -> None:
    text = day.isoformat()
    assert resolve(TimeSpec(start=text), REF) == ok(text)


@given(st.integers(-5000, 5000), st.integers(-5000, 5000))
def test_a_relative_interval_is_determined_exactly_when_it_runs_forward(a: int, b: int) -> None:
    result = resolve(TimeSpec(kind=RELATIVE, offset_days=a, end_offset_days=b), REF)
    assert result.determined is (a <= b)
