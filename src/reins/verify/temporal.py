"""Structured time specs, resolved against an injected reference time to ISO 8601 dates.

A spec is what a generator states about *when* (an absolute date, a relative offset, or an
interval of either), not prose. :func:`resolve` turns it into an ISO date, a reduced-precision
date (``2017``, ``2017-03``) or an interval ``start/end``, or says why it is undetermined.
Nothing reads the clock: the reference time is always given.
"""

from __future__ import annotations

import calendar as _calendar
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from datetime import date, datetime, timedelta
from enum import StrEnum
from typing import Any

from reins.verify.textmatch import contains

GREGORIAN = "gregorian"
CALENDARS = frozenset({"gregorian", "persian", "islamic", "hebrew", "chinese"})

# ASCII digits only: \d would accept Arabic-Indic or full-width digits as a year.
_DATE = re.compile(r"([0-9]{4})(?:-([0-9]{2})(?:-([0-9]{2}))?)?")
_RUN = re.compile(r"[0-9]+")


class Kind(StrEnum):
    """Whether a spec names calendar dates or days counted from the reference time."""

    ABSOLUTE = "absolute"
    RELATIVE = "relative"


@dataclass(frozen=True, slots=True)
class TimeSpec:
    """When something happened, as stated.

    Args:
        kind: absolute (``start``/``end`` are dates) or relative (offsets from the reference).
        calendar: the calendar ``start``/``end`` are written in; only gregorian resolves.
        start: ``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD`` (absolute).
        end: same form; given, the spec is an interval from ``start`` to ``end``.
        offset_days: days from the reference date (relative; negative is earlier).
        end_offset_days: given, the spec is an interval from ``offset_days`` to this (relative).
        anchors: source text the date was read from, for :func:`unanchored`.
    """

    kind: Kind = Kind.ABSOLUTE
    calendar: str = GREGORIAN
    start: str = ""
    end: str = ""
    offset_days: int | None = None
    end_offset_days: int | None = None
    anchors: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TimeSpec:
        """A spec from decoded JSON, with every key and type checked.

        Raises:
            ValueError: an unknown key, kind or calendar, or a value of the wrong type.
        """
        if not isinstance(data, Mapping):
            raise ValueError(f"a time spec is an object, got {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown time spec keys: {', '.join(map(str, unknown))}")
        try:
            kind = Kind(data.get("kind", Kind.ABSOLUTE))
        except (ValueError, TypeError):
            raise ValueError(f"kind must be absolute or relative, got {data['kind']!r}") from None
        text = {k: data.get(k, "") for k in ("calendar", "start", "end")}
        for key, value in text.items():
            if not isinstance(value, str):
                raise ValueError(f"{key} must be text, got {value!r}")
        calendar = text["calendar"] or GREGORIAN
        if calendar not in CALENDARS:
            raise ValueError(f"calendar must be one of {', '.join(sorted(CALENDARS))}")
        offsets = {k: data.get(k) for k in ("offset_days", "end_offset_days")}
        for key, value in offsets.items():
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise ValueError(f"{key} must be a whole number, got {value!r}")
        anchors = data.get("anchors", ())
        if not isinstance(anchors, list | tuple) or not all(isinstance(a, str) for a in anchors):
            raise ValueError("anchors must be a list of text")
        return cls(
            kind=kind,
            calendar=calendar,
            start=text["start"],
            end=text["end"],
            offset_days=offsets["offset_days"],
            end_offset_days=offsets["end_offset_days"],
            anchors=tuple(anchors),
        )


@dataclass(frozen=True, slots=True)
class Resolved:
    """A resolved spec: ``value`` is an ISO date or ``start/end``; ``reason`` says why not."""

    value: str = ""
    interval: bool = False
    determined: bool = False
    reason: str = ""

    @classmethod
    def undetermined(cls, reason: str) -> Resolved:
        return cls(reason=reason)


def resolve(spec: TimeSpec, ref: date) -> Resolved:
    """``spec`` as ISO 8601, relative days counted in ``ref``'s own time zone.

    ``ref`` may be a date or a datetime. An interval must not end before it starts (each end
    compared by the first day it names). Undetermined: a calendar other than gregorian, a date
    that is not strictly ``YYYY[-MM[-DD]]`` or does not exist, a relative spec without an
    offset, a result outside years 1 to 9999, or an interval that runs backwards.
    """
    day = ref.date() if isinstance(ref, datetime) else ref
    if spec.kind is Kind.RELATIVE:
        if spec.offset_days is None:
            return Resolved.undetermined("a relative spec needs offset_days")
        try:
            first = day + timedelta(days=spec.offset_days)
            last = None if spec.end_offset_days is None else day + timedelta(spec.end_offset_days)
        except OverflowError:
            return Resolved.undetermined("the offset leaves the years 1 to 9999")
        if last is None:
            return Resolved(first.isoformat(), determined=True)
        return _interval(first.isoformat(), first, last.isoformat(), last)
    if spec.calendar != GREGORIAN:
        return Resolved.undetermined(f"the {spec.calendar} calendar is not supported")
    start = _parse(spec.start)
    if start is None:
        return Resolved.undetermined(f"start {spec.start!r} is not a date YYYY[-MM[-DD]]")
    if not spec.end:
        return Resolved(spec.start, determined=True)
    end = _parse(spec.end)
    if end is None:
        return Resolved.undetermined(f"end {spec.end!r} is not a date YYYY[-MM[-DD]]")
    return _interval(spec.start, start, spec.end, end)


def unanchored(spec: TimeSpec, anchors: Iterable[str] | None = None) -> list[str]:
    """The date components of ``spec`` no anchor states; empty when all are stated.

    Components are the digit runs of ``start`` and ``end`` (``2017-01-10`` → 2017, 01, 10).
    A run is stated when an anchor contains it as a whole number, as written or without
    leading zeros ("01" is stated by "1 January"), in word mode: "10" inside "2010" does not
    count. Digits of other scripts in an anchor count as their value.
    """
    texts = [_ascii_digits(a) for a in (spec.anchors if anchors is None else anchors)]
    runs = [run for part in (spec.start, spec.end) for run in _RUN.findall(part)]
    return [
        run
        for run in runs
        if not any(
            contains(text, form, words=True)
            for text in texts
            for form in dict.fromkeys((run, run.lstrip("0") or "0"))
        )
    ]


def _parse(text: str) -> date | None:
    """The first day ``text`` names, if it is strictly ``YYYY[-MM[-DD]]`` and exists."""
    m = _DATE.fullmatch(text)
    if m is None:
        return None
    year, month, day = (int(g) if g else 1 for g in m.groups())
    if year < 1 or not 1 <= month <= 12 or not 1 <= day <= _calendar.monthrange(year, month)[1]:
        return None
    return date(year, month, day)


def _interval(start: str, first: date, end: str, last: date) -> Resolved:
    if last < first:
        return Resolved.undetermined(f"the interval ends ({end}) before it starts ({start})")
    return Resolved(f"{start}/{end}", interval=True, determined=True)


def _ascii_digits(text: str) -> str:
    return "".join(str(int(ch)) if ch.isdecimal() and not ch.isascii() else ch for ch in text)
