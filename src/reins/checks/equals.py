"""``equals``: the value at a path equals an expected JSON value, after optional normalising.

The expected value is given (``expected``, any TOML value) or read from the item
(``expected_path``; missing there is the judge's failure). Comparison is JSON's: ``true`` is not
``1``, ``1`` is ``1.0``, objects compare member by member. ``normalise`` applies to every string
on both sides: ``whitespace`` (NFC, runs of whitespace folded to one space, ends trimmed),
``casefold``, or ``both``.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Literal

from reins.checks._common import excerpt, nothing_at
from reins.checks.paths import Path
from reins.checks.spec import BuiltCheck, CheckSpec
from reins.errors import JudgeError, ParamValueError
from reins.gate.rule import Context
from reins.values import JSON, Fact

NAME = "equals"


def normalised(value: object, mode: str) -> object:
    """``value`` with every string inside normalised by ``mode`` (iteratively deep)."""
    if mode == "none":
        return value
    if isinstance(value, str):
        if mode in ("casefold", "both"):
            value = value.casefold()
        value = unicodedata.normalize("NFC", value)
        return " ".join(value.split()) if mode in ("whitespace", "both") else value
    if isinstance(value, list):
        return [normalised(v, mode) for v in value]
    if isinstance(value, dict):
        return {k: normalised(v, mode) for k, v in value.items()}
    return value


def same(a: object, b: object) -> bool:
    """JSON equality: a boolean never equals a number, whatever Python says."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and a == b


@dataclass(frozen=True, slots=True)
class EqualsParams:
    path: Path
    """the value to compare"""
    expected: JSON = None
    """the expected value (any TOML value)"""
    expected_path: Path | None = None
    """where to read the expected value, e.g. item.answer"""
    normalise: Literal["none", "whitespace", "casefold", "both"] = "none"
    """none, whitespace, casefold or both (applies to strings)"""


def _build(params: EqualsParams) -> BuiltCheck:
    # TOML has no null, so None can only mean "not given"
    path, given, source, mode = params.path, params.expected, params.expected_path, params.normalise
    if (given is None) == (source is None):
        raise ParamValueError(NAME, "expected", "give expected or expected_path (one of them)")

    def check(ctx: Context) -> list[Fact]:
        target: object = given
        if source is not None:
            found = source.resolve(ctx)
            if len(found) != 1:
                raise JudgeError(NAME, f"expected_path {source} names no single value")
            target = found[0][1]
        want = normalised(target, mode)
        found = path.resolve(ctx)
        if not found:
            return [nothing_at(path, excerpt(target))]
        try:
            return [
                Fact(where=where, expected=excerpt(target), actual=excerpt(value))
                for where, value in found
                if not same(normalised(value, mode), want)
            ]
        except RecursionError:
            return [Fact(where=str(path), expected=excerpt(target), actual="nested too deeply")]

    return check


EQUALS = CheckSpec(
    name=NAME,
    summary="the value at the path equals the expected value (optionally normalised)",
    params=EqualsParams,
    build=_build,
)
