"""``temporal``: dates in the submission are consistent with a reference time (an article's date).

A value is a date written ``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD`` (a time after ``T`` is
ignored), an interval ``START/END`` of those, or a structured time spec (an object such as
``{"kind": "relative", "offset_days": -1}``, see :mod:`reins.verify.temporal`), resolved against
the reference. Arrays are walked; ``null`` is skipped. A value that does not resolve is a fact.

Consistency is judged leniently, because a date of reduced precision names a period: with
``not_after_reference`` the period must *start* on or before the reference day (``2024-03`` is
consistent with a reference of 2024-03-01); with ``max_days_before`` it must *end* no more than
that many days before it. The reference missing or unreadable is the judge's failure
(:class:`~reins.errors.JudgeError`).
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime

from reins.checks._common import excerpt, type_name
from reins.checks.paths import Path
from reins.checks.spec import BuiltCheck, CheckSpec
from reins.errors import JudgeError, ParamValueError
from reins.gate.rule import Context
from reins.values import Fact
from reins.verify.temporal import TimeSpec, resolve

NAME = "temporal"
_ISO_DAY = re.compile(r"([0-9]{4})(?:-([0-9]{2})(?:-([0-9]{2}))?)?")
WANTED = "a date YYYY[-MM[-DD]], an interval START/END, or a time spec"


@dataclass(frozen=True, slots=True)
class TemporalParams:
    path: Path
    """the dates: ISO text, START/END intervals or time specs"""
    reference: Path
    """the reference date, e.g. item.date (ISO 8601)"""
    not_after_reference: bool = True
    """a date may not start after the reference"""
    max_days_before: int | None = None
    """a date may not end more days before it"""


def _build(params: TemporalParams) -> BuiltCheck:
    path, reference = params.path, params.reference
    not_after, days = params.not_after_reference, params.max_days_before
    if days is not None and days < 0:
        raise ParamValueError(NAME, "max_days_before", f"expected 0 or more, got {days}")

    def check(ctx: Context) -> list[Fact]:
        ref = _reference(reference, ctx)
        facts: list[Fact] = []
        for where, value in path.resolve(ctx):
            for here, item in _values(where, value):
                facts.extend(_judge(here, item, ref, reference, not_after, days))
        return facts

    return check


def _reference(reference: Path, ctx: Context) -> date:
    found = reference.resolve(ctx)
    value = found[0][1] if len(found) == 1 else None
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.strip()).date()
        except ValueError:
            pass
    got = "nothing" if not found else f"{type_name(value)} {excerpt(value, 40)}"
    raise JudgeError(NAME, f"the reference {reference} must be an ISO date, got {got}")


def _values(where: str, value: object) -> Iterator[tuple[str, object]]:
    stack = [(where, value)]
    while stack:
        here, current = stack.pop()
        if isinstance(current, list):
            stack.extend((f"{here}[{i}]", v) for i, v in reversed(list(enumerate(current))))
        elif current is not None:
            yield here, current


def _judge(
    where: str, value: object, ref: date, reference: Path, not_after: bool, days: int | None
) -> Iterator[Fact]:
    span = _span(value, ref)
    if isinstance(span, str):
        yield Fact(where=where, expected=WANTED, actual=span)
        return
    first, last = span
    if not_after and first > ref:
        yield Fact(
            where=where,
            expected=f"on or before {ref.isoformat()} ({reference})",
            actual=_shown(value, first, last),
        )
    if days is not None and (ref - last).days > days:
        yield Fact(
            where=where,
            expected=f"at most {days} days before {ref.isoformat()} ({reference})",
            actual=_shown(value, first, last),
        )


def _span(value: object, ref: date) -> tuple[date, date] | str:
    """The first and last day ``value`` names, or why it names none."""
    if isinstance(value, dict):
        try:
            spec = TimeSpec.from_dict(value)
        except ValueError as exc:
            return f"{excerpt(value, 80)}: {exc}"
    elif isinstance(value, str):
        text = value.strip()
        start, _, end = text.partition("/")
        spec = TimeSpec(start=start.split("T", 1)[0], end=end.split("T", 1)[0])
    else:
        return f"{type_name(value)} {excerpt(value, 80)}"
    resolved = resolve(spec, ref)
    if not resolved.determined:
        return f"{excerpt(value, 80)}: {resolved.reason}"
    start, _, end = resolved.value.partition("/")
    first, last = _days(start), _days(end or start)
    assert first is not None and last is not None  # resolve() gave ISO dates
    return first[0], last[1]


def _days(text: str) -> tuple[date, date] | None:
    m = _ISO_DAY.fullmatch(text)
    if m is None:
        return None
    year = int(m.group(1))
    if m.group(3):
        day = date(year, int(m.group(2)), int(m.group(3)))
        return day, day
    if m.group(2):
        month = int(m.group(2))
        return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])
    return date(year, 1, 1), date(year, 12, 31)


def _shown(value: object, first: date, last: date) -> str:
    text = excerpt(value, 80)
    named = first.isoformat() if first == last else f"{first.isoformat()}/{last.isoformat()}"
    return text if text == named else f"{text} ({named})"


TEMPORAL = CheckSpec(
    name=NAME,
    summary="dates at the path are consistent with a reference date (not after it, not too old)",
    params=TemporalParams,
    build=_build,
)
