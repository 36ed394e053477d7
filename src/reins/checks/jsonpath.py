"""``json_path``: the presence and shape of parts of the submission.

``exists`` says whether the path must reach something (``true``) or nothing (``false``);
``type`` names the JSON type every value it reaches must have; ``count_min``/``count_max``
bound how many values it reaches (write ``[*]`` to count the elements of an array:
``submission.who[*]`` reaches each name, ``submission.who`` the one array).
"""

from __future__ import annotations

from dataclasses import dataclass

from reins.checks._common import excerpt, type_name
from reins.checks.paths import Path
from reins.checks.spec import BuiltCheck, CheckSpec
from reins.errors import ParamValueError
from reins.gate.rule import Context
from reins.values import Fact

NAME = "json_path"
TYPES = ("string", "number", "integer", "boolean", "null", "array", "object", "")


def has_type(value: object, kind: str) -> bool:
    """Whether ``value`` is of JSON type ``kind`` (an integer is a number without a fraction)."""
    if kind == "integer":
        if isinstance(value, float):
            return value.is_integer()
        return isinstance(value, int) and not isinstance(value, bool)
    return type_name(value) == kind


@dataclass(frozen=True, slots=True)
class JsonPathParams:
    path: Path
    """what to look for"""
    exists: bool = True
    """whether the path must reach something (or nothing)"""
    type: str = ""
    """string, number, integer, boolean, null, array or object"""
    count_min: int | None = None
    """the fewest values the path may reach"""
    count_max: int | None = None
    """the most values the path may reach"""


def _build(params: JsonPathParams) -> BuiltCheck:
    path, exists, kind = params.path, params.exists, params.type
    if kind not in TYPES:
        raise ParamValueError(NAME, "type", f"expected one of {', '.join(TYPES[:-1])}")
    low, high = params.count_min, params.count_max
    if low is not None and high is not None and low > high:
        raise ParamValueError(NAME, "count_max", f"count_max {high} is below count_min {low}")
    if not exists and (kind or low or high):
        raise ParamValueError(NAME, "exists", "exists = false takes no type or count")

    def check(ctx: Context) -> list[Fact]:
        found = path.resolve(ctx)
        if not exists:
            return [
                Fact(where=where, expected="nothing here", actual=excerpt(value, 80))
                for where, value in found
            ]
        facts: list[Fact] = []
        if not found:
            facts.append(Fact(where=str(path), expected="a value", actual="nothing there"))
        n = len(found)
        if (low is not None and n < low) or (high is not None and n > high):
            bounds = f"{low if low is not None else 0} to {high if high is not None else 'any'}"
            facts.append(Fact(where=str(path), expected=f"{bounds} values", actual=f"{n}"))
        if kind:
            facts.extend(
                Fact(where=where, expected=kind, actual=f"{type_name(value)} {excerpt(value, 60)}")
                for where, value in found
                if not has_type(value, kind)
            )
        return facts

    return check


JSON_PATH = CheckSpec(
    name=NAME,
    summary="the path reaches something (or nothing), of a JSON type, a number of times",
    params=JsonPathParams,
    build=_build,
)
