"""``length``: the text at a path is between ``min`` and ``max`` units long.

Units:

- ``chars``: characters (Unicode code points after NFC);
- ``words``: runs of letters and digits, with inner apostrophes and hyphens, and points or
  commas between digits (``don't``, ``well-known``, ``3.5``, ``10,000`` are one word each);
- ``sentences``: by :mod:`reins.verify.sentences` (rule-based, no data download);
- ``paragraphs``: blocks separated by blank lines;
- ``bullets``: lines that start (after indentation) with ``*``, ``-`` or ``+`` and a space, or
  a number with ``.`` or ``)`` and a space (``1.``, ``2)``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from reins.checks._common import not_text, nothing_at
from reins.checks.paths import SUBMISSION, Path
from reins.checks.spec import BuiltCheck, CheckSpec
from reins.errors import ParamValueError
from reins.gate.rule import Context
from reins.values import Fact
from reins.verify import sentences

NAME = "length"
_WORD = re.compile(r"[^\W_]+(?:(?:['’-]|(?<=[0-9])[.,](?=[0-9]))[^\W_]+)*")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t\r\f\v]*\n")
_BULLET = re.compile(r"^[ \t]*(?:[*+-]|[0-9]+[.)])[ \t]+\S", re.MULTILINE)


def _chars(text: str) -> int:
    return len(unicodedata.normalize("NFC", text))


def _words(text: str) -> int:
    return sum(1 for _ in _WORD.finditer(text))


def _paragraphs(text: str) -> int:
    return sum(1 for block in _PARAGRAPH_BREAK.split(text) if block.strip())


def _bullets(text: str) -> int:
    return sum(1 for _ in _BULLET.finditer(text))


Unit = Literal["chars", "words", "sentences", "paragraphs", "bullets"]
COUNTERS: dict[Unit, Callable[[str], int]] = {
    "chars": _chars,
    "words": _words,
    "sentences": sentences.count,
    "paragraphs": _paragraphs,
    "bullets": _bullets,
}


@dataclass(frozen=True, slots=True)
class LengthParams:
    unit: Unit
    """chars, words, sentences, paragraphs or bullets"""
    path: Path = SUBMISSION
    """the text to measure"""
    min: int | None = None
    """the fewest units allowed (none: no lower bound)"""
    max: int | None = None
    """the most units allowed (none: no upper bound)"""


def _build(params: LengthParams) -> BuiltCheck:
    path, unit, low, high = params.path, params.unit, params.min, params.max
    if low is None and high is None:
        raise ParamValueError(NAME, "min", "give min, max or both")
    if low is not None and high is not None and low > high:
        raise ParamValueError(NAME, "max", f"max {high} is below min {low}")
    counter = COUNTERS[unit]
    wanted = _describe(low, high, unit)

    def check(ctx: Context) -> list[Fact]:
        found = path.resolve(ctx)
        if not found:
            return [nothing_at(path, wanted)]
        facts: list[Fact] = []
        for where, value in found:
            if not isinstance(value, str):
                facts.append(not_text(where, value))
                continue
            n = counter(value)
            if (low is not None and n < low) or (high is not None and n > high):
                facts.append(Fact(where=where, expected=wanted, actual=f"{n} {unit}"))
        return facts

    return check


def _describe(low: int | None, high: int | None, unit: str) -> str:
    if low is None:
        return f"at most {high} {unit}"
    if high is None:
        return f"at least {low} {unit}"
    return f"{low} {unit}" if low == high else f"{low} to {high} {unit}"


LENGTH = CheckSpec(
    name=NAME,
    summary="the text at the path is min to max chars, words, sentences, paragraphs or bullets",
    params=LengthParams,
    build=_build,
)
