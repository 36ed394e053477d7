"""``anchored``: every extracted string occurs in the item's source as a whole token sequence.

Both texts are cut into tokens (runs of letters, digits and ``_``; every other visible character
is a token of its own) after Unicode NFC. A value is anchored when its tokens occur, in order and
next to each other, among the source's tokens. So a truncated word ("Smit" for "Smith"), a
prefix of an address, a changed letter or a dropped comma is not in the source, while a line
break or a double space between two tokens is: whitespace only separates tokens.

With ``tokens = "whitespace"`` a token is instead a whole run of non-space characters, with its
leading and trailing punctuation split off: then ``press@example`` is not in
``press@example.org.`` (an address, a URL or a code is found only whole), but ``Smithson`` is no
longer found in ``Smithson's`` either.

Values may be strings, numbers (their JSON text must be in the source), or arrays and objects
of them (every string inside is checked); ``null`` is skipped, ``true``/``false`` are facts.
The source missing or empty is the judge's failure (:class:`~reins.errors.JudgeError`), never
the submission's.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from reins.checks._common import excerpt, leaves, type_name
from reins.checks.paths import SOURCE, Path
from reins.checks.spec import BuiltCheck, CheckSpec
from reins.errors import JudgeError
from reins.gate.rule import Context
from reins.values import Fact

NAME = "anchored"
Mode = Literal["words", "whitespace"]
_TOKEN = re.compile(r"\w+|[^\w\s]")
# A run of non-space characters: leading punctuation, the core, trailing punctuation.
_CHUNK = re.compile(r"([^\w\s]*)(\S*?)([^\w\s]*)(?=\s|\Z)")


def tokens(text: str, *, casefold: bool = False, mode: str = "words") -> list[str]:
    """The tokens of ``text`` in NFC: word runs and single other visible characters
    (``words``), or whitespace-separated runs with their outer punctuation split off."""
    text = unicodedata.normalize("NFC", text)
    if casefold:
        text = unicodedata.normalize("NFC", text.casefold())
    if mode == "words":
        return _TOKEN.findall(text)
    out: list[str] = []
    for chunk in text.split():
        m = _CHUNK.fullmatch(chunk)
        assert m is not None
        lead, core, trail = m.groups()
        out.extend(lead)
        if core:
            out.append(core)
        out.extend(trail)
    return out


class Index:
    """A source's tokens, to find whole token sequences quickly.

    No token holds whitespace, so the tokens joined by single spaces, with a space at either
    end, contain ``" " + " ".join(needle) + " "`` exactly when the needle is a whole token
    sequence of the source; ``str``'s substring search then keeps a hostile value (thousands
    of repeated words) linear, where comparing token slices at every match of its first token
    was quadratic.
    """

    def __init__(self, source: str, *, casefold: bool = False, mode: str = "words") -> None:
        self.casefold, self.mode = casefold, mode
        self.joined = " " + " ".join(tokens(source, casefold=casefold, mode=mode)) + " "

    def __contains__(self, text: str) -> bool:
        needle = tokens(text, casefold=self.casefold, mode=self.mode)
        return bool(needle) and f" {' '.join(needle)} " in self.joined


@dataclass(frozen=True, slots=True)
class AnchoredParams:
    path: Path
    """where the extracted strings are (arrays and objects are walked)"""
    source: Path = SOURCE
    """the text they must come from"""
    case_sensitive: bool = True
    """whether case must match too"""
    tokens: Mode = "words"
    """words (split at punctuation) or whitespace (split at spaces)"""


def _build(params: AnchoredParams) -> BuiltCheck:
    path, source, mode = params.path, params.source, params.tokens
    casefold = not params.case_sensitive

    def check(ctx: Context) -> list[Fact]:
        index = Index(_source_text(source, ctx), casefold=casefold, mode=mode)
        return list(_unanchored(path, ctx, index))

    return check


def _source_text(source: Path, ctx: Context) -> str:
    found = source.resolve(ctx)
    if len(found) != 1 or not isinstance(found[0][1], str) or not found[0][1].strip():
        got = "nothing" if not found else f"{type_name(found[0][1])} {excerpt(found[0][1], 40)}"
        raise JudgeError(NAME, f"the source {source} must be a non-empty text, got {got}")
    return found[0][1]


def _unanchored(path: Path, ctx: Context, index: Index) -> Iterator[Fact]:
    for where, value in path.resolve(ctx):
        for here, leaf in leaves(where, value):
            if leaf is None:
                continue
            if isinstance(leaf, bool) or not isinstance(leaf, str | int | float):
                yield Fact(where=here, expected="text from the source", actual=type_name(leaf))
                continue
            text = leaf if isinstance(leaf, str) else str(leaf)
            if text not in index:
                yield Fact(where=here, expected="a span of the source", actual=excerpt(text))


ANCHORED = CheckSpec(
    name=NAME,
    summary="every string at the path occurs in the source as a whole token sequence",
    params=AnchoredParams,
    build=_build,
)
