"""Helpers for the check library's tests: build a check from given parameters, and run it."""

from __future__ import annotations

from collections.abc import Iterable

from reins.checks import spec_of, validate
from reins.checks.spec import BuiltCheck
from reins.gate.rule import Context
from reins.values import Fact


def build(name: str, **given: object) -> BuiltCheck:
    """The check ``name`` built as the loader builds it: validated, then built."""
    spec = spec_of(name)
    return spec.build(validate(spec, given))


def run(check: BuiltCheck, submission: object, **context: object) -> list[Fact]:
    """The facts ``check`` leaves on ``submission`` (None → no facts, one fact → a list)."""
    ctx = Context(key=str(context.pop("key", "k")), submission=submission, **context)  # type: ignore[arg-type]
    out = check(ctx)
    if out is None:
        return []
    if isinstance(out, Fact):
        return [out]
    assert isinstance(out, Iterable)
    facts = list(out)
    assert all(isinstance(f, Fact) for f in facts), facts
    return facts


HOSTILE: list[object] = [
    None,
    True,
    0,
    -1.5,
    float("nan"),
    float("inf"),
    "",
    "\ud800 lone surrogate \udfff",
    "\x00\x01\x02",
    "x" * 1_000_000,
    [],
    ["a", 1, None, {"b": []}],
    {},
    {"who": {"nested": [[[]]]}},
]
"""Submissions a check must judge without raising: wrong types are facts, not exceptions."""
