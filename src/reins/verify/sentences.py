"""A rule-based sentence splitter for English-like prose that needs no data download.

A sentence ends at ``.``, ``!``, ``?`` or ``…`` (or a run of them), with any closing quotes and
brackets after it, when whitespace and then a plausible sentence start follow: a capital, a
digit, an opening quote or bracket, or the end of the text. A blank line always ends one.

A full stop does not end a sentence after:

- a title (``Mr.``, ``Dr.``, ``Prof.``, ``St.``, …) or a Latin abbreviation (``e.g.``,
  ``i.e.``, ``cf.``, ``vs.``, ``etc.`` unless a capital follows);
- a single capital letter (an initial: ``J. R. R. Tolkien``, ``John F. Kennedy``);
- a dotted acronym (``U.S.``, ``a.m.``, ``Ph.D.``) unless the next word usually starts a
  sentence (``He``, ``The``, ``It``, …);
- a list number at the start of a line (``1. First``), or an abbreviation before a number
  (``No. 5``, ``Fig. 2``, ``p. 14``).

Nothing ends before a lower-case word (``"Why?" she asked``, ``Yahoo! is``), and a decimal
point (``3.14``) has no space after it. The rules are heuristics: good on ordinary prose, never
perfect; the tests pin the cases they decide.
"""

from __future__ import annotations

import re

__all__ = ["count", "split"]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Titles before a name: never the end of a sentence.
_TITLES = _words(
    "mr mrs ms dr prof sr jr st mt rev hon gen col lt sgt capt cmdr adm gov sen rep pres "
    "messrs mme mlle fr br supt insp det ave blvd rd"
)
# Abbreviations before a number (No. 5, Fig. 2, Jan. 5): no end when a number follows.
_BEFORE_NUMBERS = _words(
    "no nos fig figs vol vols p pp ch sec art ed eq ref approx "
    "jan feb mar apr jun jul aug sep sept oct nov dec"
)
# Abbreviations that never end a sentence in running text.
_NEVER_LAST = _words("e.g i.e cf vs viz al ca")
# Words that usually start a sentence: after a dotted acronym, they say a new one began.
_STARTERS = _words(
    "i he she it we they you the a an this that these those there then but and so yet "
    "however in on at after before when while if his her its our their my your"
)

_OPENERS = "\"'“‘«([{¿¡"
_CLOSERS = "\"'”’»)]}"
_END = re.compile(r"[.!?…]+[" + re.escape(_CLOSERS) + r"]*")
_BLANK_LINE = re.compile(r"\n[ \t\r\f\v]*\n\s*")
_NEXT = re.compile(r"\s*")
_FOLLOWING = re.compile(r"[\w']*")
_ACRONYM = re.compile(r"(?:[^\W\d_]{1,2}\.)+[^\W\d_]{1,2}", re.UNICODE)


def split(text: str) -> list[str]:
    """The sentences of ``text``, trimmed, in order; empty pieces are dropped."""
    out: list[str] = []
    for block in _BLANK_LINE.split(text):
        start = 0
        for m in _END.finditer(block):
            if _ends_here(block, m.start(), m.end()):
                _add(out, block[start : m.end()])
                start = m.end()
        _add(out, block[start:])
    return out


def count(text: str) -> int:
    """How many sentences ``text`` holds."""
    return len(split(text))


def _add(out: list[str], piece: str) -> None:
    piece = piece.strip()
    if any(ch.isalnum() for ch in piece):
        out.append(piece)
    elif piece and out:  # stray punctuation ("!!", a closing quote) belongs to the last one
        out[-1] += piece


def _ends_here(text: str, start: int, end: int) -> bool:
    if end < len(text) and not text[end].isspace():
        return False  # "3.14", "example.com", "?!)" continuing
    nxt = _NEXT.match(text, end)
    assert nxt is not None
    if nxt.end() == len(text):
        return True
    first = text[nxt.end()]
    if first.islower():
        return False
    marks = text[start:end].rstrip(_CLOSERS)
    if marks != "." or end > start + 1:
        return True  # "!", "?", "…", "..." before a capital, or a closing quote/bracket
    at = start
    while at > 0 and not text[at - 1].isspace():  # the word before the stop, not a regex scan
        at -= 1
    following = _FOLLOWING.match(text, nxt.end())
    assert following is not None  # the pattern matches the empty string
    return _period_ends(text, at, text[at:start].lstrip(_OPENERS), first, following.group().lower())


def _period_ends(text: str, at: int, word: str, first: str, following: str) -> bool:
    """Whether the full stop after ``word`` (at ``at``) ends a sentence; ``first`` is the next
    character that is not a space, ``following`` the next word (lower case)."""
    bare = word.lower()
    if bare in _TITLES or bare in _NEVER_LAST:
        return False
    if bare in _BEFORE_NUMBERS and first.isdigit():
        return False
    if bare.isdigit() and _line_start(text, at):
        return False  # a numbered list item: "1. First"
    if len(word) == 1 and word.isupper():
        return False  # an initial
    if _ACRONYM.fullmatch(word):
        return following in _STARTERS
    return not (bare == "etc" and not first.isupper())


def _line_start(text: str, at: int) -> bool:
    """Whether only spaces stand between the last line break (or the start) and ``at``."""
    while at > 0 and text[at - 1] in " \t":
        at -= 1
    return at == 0 or text[at - 1] == "\n"
