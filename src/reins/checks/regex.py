"""``regex``: the text at a path must (or must not) match a regular expression.

The pattern is compiled when the gate loads; one that does not compile is a load error at the
``pattern`` parameter. Python's ``re`` has no time limit, so a pattern that backtracks badly
could stall the judge on a hostile answer: texts longer than ``max_chars`` are not searched but
leave a fact (write patterns without nested repetition, such as ``(a+)+``, all the same).

``{key}`` and ``{item.FIELD}`` in the pattern stand for the item's key and a field of its
payload, each matched as it is written (escaped: a path's ``.`` matches a dot only), so one
rule can name each item's own file (``(?!{item.path} )``); such a pattern is compiled per item,
and checked at load with every value a plain word.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from reins.checks._common import blanked, excerpt, filled, has_fields, not_text, nothing_at
from reins.checks.paths import SUBMISSION, Path
from reins.checks.spec import BuiltCheck, CheckSpec
from reins.errors import ParamValueError
from reins.gate.rule import Context
from reins.values import Fact

NAME = "regex"
FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE, "a": re.ASCII}


def compile_pattern(check: str, pattern: str, flags: str) -> re.Pattern[str]:
    """``pattern`` compiled with ``flags`` (letters of ``imsxa``), or a ParamValueError."""
    value = 0
    for letter in flags:
        if letter not in FLAGS:
            raise ParamValueError(check, "flags", f"unknown flag {letter!r} (known: imsxa)")
        value |= FLAGS[letter]
    try:
        return re.compile(pattern, value)
    except (re.error, OverflowError, RecursionError) as exc:
        raise ParamValueError(check, "pattern", f"does not compile: {exc}") from None


@dataclass(frozen=True, slots=True)
class RegexParams:
    pattern: str
    """a Python regular expression (write it in 'single quotes'); {key} and {item.FIELD} match
    the item's own values"""
    path: Path = SUBMISSION
    """the text to search"""
    mode: Literal["must_match", "must_not_match"] = "must_match"
    """must_match or must_not_match"""
    flags: str = ""
    """letters: i (ignore case), m, s, x, a"""
    max_chars: int = 100_000
    """longer texts are not searched but leave a fact"""


def _build(params: RegexParams) -> BuiltCheck:
    pattern, flags = params.pattern, params.flags
    per_item = has_fields(pattern)
    # A pattern that names the item's values is checked now with each a plain word.
    regex = compile_pattern(NAME, blanked(pattern) if per_item else pattern, flags)
    path, must_match, limit = params.path, params.mode == "must_match", params.max_chars
    if limit < 1:
        raise ParamValueError(NAME, "max_chars", f"expected at least 1, got {limit}")

    def check(ctx: Context) -> list[Fact]:
        own = regex
        if per_item:
            own = compile_pattern(NAME, filled(pattern, ctx, check=NAME, escape=re.escape), flags)
        return list(_facts(own, path, must_match, limit, ctx))

    return check


def _facts(
    regex: re.Pattern[str], path: Path, must_match: bool, limit: int, ctx: Context
) -> Iterator[Fact]:
    found = path.resolve(ctx)
    if not found and must_match:
        yield nothing_at(path, f"text matching /{regex.pattern}/")
    for where, value in found:
        if not isinstance(value, str):
            yield not_text(where, value)
        elif len(value) > limit:
            yield Fact(
                where=where,
                expected=f"at most {limit} characters to search",
                actual=f"{len(value)} characters",
            )
        else:
            match = regex.search(value)
            if must_match and match is None:
                yield Fact(
                    where=where, expected=f"text matching /{regex.pattern}/", actual=excerpt(value)
                )
            elif not must_match and match is not None:
                yield Fact(
                    where=where,
                    expected=f"no text matching /{regex.pattern}/",
                    actual=f"{excerpt(match.group(), 80)!r} at character {match.start() + 1}",
                )


REGEX = CheckSpec(
    name=NAME,
    summary="the text at the path must (or must not) match a regular expression",
    params=RegexParams,
    build=_build,
)
