"""``numeric``: a number in the submission equals an expected one within a tolerance.

The expected number is given (``expected``) or read from the item (``expected_path``, e.g.
``item.total``; missing or not a number there is the judge's failure). A value passes when it is
within ``tolerance`` (absolute) or within ``relative`` times the expected value's size. Values
must be JSON numbers: a numeric string such as ``"42"``, ``true``, NaN or an infinity is a fact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from reins.checks._common import excerpt, nothing_at, type_name
from reins.checks.paths import Path
from reins.checks.spec import BuiltCheck, CheckSpec
from reins.errors import JudgeError, ParamValueError
from reins.gate.rule import Context
from reins.values import Fact

NAME = "numeric"


def number(value: object) -> float | None:
    """``value`` as a finite float if it is a JSON number, else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        result = float(value)
    except OverflowError:  # an int too large for a float
        return None
    return result if math.isfinite(result) else None


@dataclass(frozen=True, slots=True)
class NumericParams:
    path: Path
    """the numbers to check"""
    expected: float | None = None
    """the expected number"""
    expected_path: Path | None = None
    """where to read the expected number, e.g. item.total"""
    tolerance: float = 0.0
    """the absolute difference allowed"""
    relative: float | None = None
    """the difference allowed, as a fraction of expected"""


def _build(params: NumericParams) -> BuiltCheck:
    path, fixed, source = params.path, params.expected, params.expected_path
    if (fixed is None) == (source is None):
        raise ParamValueError(NAME, "expected", "give expected or expected_path (one of them)")
    if fixed is not None and not math.isfinite(fixed):
        raise ParamValueError(NAME, "expected", f"expected a finite number, got {fixed}")
    tolerance, relative = params.tolerance, params.relative
    if tolerance < 0 or (relative is not None and relative < 0):
        raise ParamValueError(NAME, "tolerance", "tolerances may not be negative")

    def check(ctx: Context) -> list[Fact]:
        target = fixed
        if source is not None:
            found = source.resolve(ctx)
            target = number(found[0][1]) if len(found) == 1 else None
            if target is None:
                shown = excerpt(found[0][1], 40) if found else "nothing"
                raise JudgeError(NAME, f"expected_path {source} is not a number: {shown}")
        assert target is not None
        slack = max(tolerance, abs(target) * relative if relative is not None else 0.0)
        wanted = f"{target:g}" + (f" ± {slack:g}" if slack else "")
        found = path.resolve(ctx)
        if not found:
            return [nothing_at(path, f"the number {wanted}")]
        facts: list[Fact] = []
        for where, value in found:
            got = number(value)
            if got is None:
                actual = f"{type_name(value)} {excerpt(value, 60)}"
                facts.append(Fact(where=where, expected=f"the number {wanted}", actual=actual))
            elif abs(got - target) > slack:
                facts.append(Fact(where=where, expected=wanted, actual=f"{got:g}"))
        return facts

    return check


NUMERIC = CheckSpec(
    name=NAME,
    summary="numbers at the path equal the expected number within a tolerance",
    params=NumericParams,
    build=_build,
)
