"""Text matching for anchors: is a token really in the source, and which tokens are not.

Both sides are normalized the same way: Unicode NFC, every run of whitespace folded to one
space, ends trimmed, and optionally case-folded. A token that normalizes to nothing, or is
shorter than ``min_length`` characters, is never found, so an empty or tiny anchor cannot pass by
accident. In word mode a match may not cut a run of letters or a run of digits in the source:
"10" is not found in "2010", nor "cat" in "concatenate", but "10" is found in "10th" and "2017"
in "2017年". Scripts written without spaces (Chinese, Japanese, Thai) have no such runs to go by,
so their words inside compounds are not found in word mode; use plain containment for them.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable


def normalize(text: str, *, casefold: bool = False) -> str:
    """``text`` in NFC with whitespace folded to single spaces and trimmed (and case-folded)."""
    text = unicodedata.normalize("NFC", text)
    if casefold:
        text = unicodedata.normalize("NFC", text.casefold())
    return " ".join(text.split())


def contains(
    source: str,
    token: str,
    *,
    words: bool = False,
    min_length: int = 1,
    casefold: bool = False,
) -> bool:
    """Whether ``token`` occurs in ``source`` once both are normalized.

    Args:
        words: the match may not cut a run of letters or digits in the source.
        min_length: tokens shorter than this (in characters, after normalizing) are not found.
        casefold: compare case-insensitively.
    """
    _check(min_length)
    return _found(normalize(source, casefold=casefold), token, words, min_length, casefold)


def missing(
    source: str,
    tokens: Iterable[str],
    *,
    words: bool = False,
    min_length: int = 1,
    casefold: bool = False,
) -> list[str]:
    """The tokens ``contains`` would not find, in their order and as given."""
    _check(min_length)
    text = normalize(source, casefold=casefold)
    return [t for t in tokens if not _found(text, t, words, min_length, casefold)]


def count(
    source: str,
    token: str,
    *,
    words: bool = False,
    min_length: int = 1,
    casefold: bool = False,
) -> int:
    """How many times ``token`` occurs in ``source``, as :func:`contains` finds it.

    Occurrences do not overlap ("aa" occurs twice in "aaaa"); in word mode only those that cut
    no run of letters or digits count.
    """
    _check(min_length)
    text = normalize(source, casefold=casefold)
    needle = normalize(token, casefold=casefold)
    if len(needle) < min_length:
        return 0
    found, start = 0, text.find(needle)
    while start >= 0:
        end = start + len(needle)
        if not words or _at_edges(text, needle, start, end):
            found += 1
            start = text.find(needle, end)
        else:
            start = text.find(needle, start + 1)
    return found


def _at_edges(text: str, needle: str, start: int, end: int) -> bool:
    return _edge(needle[0], text[start - 1] if start else "") and _edge(
        needle[-1], text[end] if end < len(text) else "", after=True
    )


def _check(min_length: int) -> None:
    if min_length < 1:
        raise ValueError(f"min_length must be at least 1, got {min_length}")


def _found(text: str, token: str, words: bool, min_length: int, casefold: bool) -> bool:
    needle = normalize(token, casefold=casefold)
    if len(needle) < min_length:
        return False
    if not words:
        return needle in text
    start = text.find(needle)
    while start >= 0:
        end = start + len(needle)
        if _edge(needle[0], text[start - 1] if start else "") and _edge(
            needle[-1], text[end] if end < len(text) else "", after=True
        ):
            return True
        start = text.find(needle, start + 1)
    return False


def _edge(inside: str, outside: str, *, after: bool = False) -> bool:
    """Whether a match ending in ``inside`` may stand next to ``outside`` in word mode."""
    if not outside:
        return True
    if after and unicodedata.category(outside).startswith("M"):
        return False  # a combining mark belongs to the character the match ends with
    return _kind(inside) == "" or _kind(inside) != _kind(outside)


def _kind(ch: str) -> str:
    if ch.isdecimal():
        return "digit"
    if ch.isalpha():
        return "letter"
    return ""
