"""``contains`` and ``absent``: keywords that the text at a path must hold, or must not.

Matching is :mod:`reins.verify.textmatch`'s: Unicode NFC, whitespace folded, optionally
case-folded; with ``word_boundary`` a keyword may not cut a run of letters or digits ("cat" is
not in "concatenate"). Scripts written without spaces have no such runs: use
``word_boundary = false`` for Chinese, Japanese or Thai keywords.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from reins.checks._common import not_text, nothing_at
from reins.checks.paths import SUBMISSION, Path
from reins.checks.spec import BuiltCheck, CheckSpec
from reins.errors import ParamValueError
from reins.gate.rule import Context
from reins.values import Fact
from reins.verify.textmatch import count


@dataclass(frozen=True, slots=True)
class AbsentParams:
    keywords: tuple[str, ...]
    """the keywords that must not occur"""
    path: Path = SUBMISSION
    """the text to search"""
    word_boundary: bool = True
    """a keyword may not cut a run of letters or digits"""
    case_sensitive: bool = False
    """whether case must match"""


@dataclass(frozen=True, slots=True)
class ContainsParams(AbsentParams):
    keywords: tuple[str, ...]
    """the keywords to find"""
    min_count: int = 1
    """how many times each keyword must occur"""
    mode: Literal["all", "any"] = "all"
    """all (every keyword) or any (at least one)"""


def _keywords(check: str, params: AbsentParams) -> list[str]:
    if not params.keywords or not all(w.strip() for w in params.keywords):
        raise ParamValueError(check, "keywords", "expected at least one non-blank keyword")
    return list(params.keywords)


def _build_contains(params: ContainsParams) -> BuiltCheck:
    keywords = _keywords("contains", params)
    path, words, casefold = params.path, params.word_boundary, not params.case_sensitive
    need = params.min_count
    if need < 1:
        raise ParamValueError("contains", "min_count", f"expected at least 1, got {need}")
    every = params.mode == "all"

    def check(ctx: Context) -> list[Fact]:
        return list(_lacking(path, ctx, keywords, need, every, words, casefold))

    return check


def _lacking(
    path: Path,
    ctx: Context,
    keywords: list[str],
    need: int,
    every: bool,
    words: bool,
    casefold: bool,
) -> Iterator[Fact]:
    found = path.resolve(ctx)
    if not found:
        yield nothing_at(path, "text with " + ", ".join(map(repr, keywords)))
    times = f" at least {need} times" if need > 1 else ""
    for where, value in found:
        if not isinstance(value, str):
            yield not_text(where, value)
            continue
        counts = {k: count(value, k, words=words, casefold=casefold) for k in keywords}
        short = {k: n for k, n in counts.items() if n < need}
        if every:
            for k, n in short.items():
                yield Fact(where=where, expected=f"{k!r}{times}", actual=_seen(n))
        elif len(short) == len(keywords):
            listed = " or ".join(map(repr, keywords))
            yield Fact(where=where, expected=f"{listed}{times}", actual="none of them")


def _build_absent(params: AbsentParams) -> BuiltCheck:
    keywords = _keywords("absent", params)
    path, words, casefold = params.path, params.word_boundary, not params.case_sensitive

    def check(ctx: Context) -> list[Fact]:
        facts: list[Fact] = []
        for where, value in path.resolve(ctx):
            if not isinstance(value, str):
                facts.append(not_text(where, value))
                continue
            for k in keywords:
                n = count(value, k, words=words, casefold=casefold)
                if n:
                    facts.append(Fact(where=where, expected=f"no {k!r}", actual=_seen(n)))
        return facts

    return check


def _seen(n: int) -> str:
    return {0: "not found", 1: "found once"}.get(n, f"found {n} times")


CONTAINS = CheckSpec(
    name="contains",
    summary='the text at the path holds every keyword (or any, with mode = "any")',
    params=ContainsParams,
    build=_build_contains,
)

ABSENT = CheckSpec(
    name="absent",
    summary="the text at the path holds none of the keywords",
    params=AbsentParams,
    build=_build_absent,
)
