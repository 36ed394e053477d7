"""A short "what was seen" for a fact: the quantity an IFEval instruction constrains, measured.

The verdict is the official checker's; this is only the line a generator reads to fix its next
try, so it measures what the checker's own arguments name (a word count for ``num_words``, the
forbidden words present for ``forbidden_words``, …), with the official utilities where they
exist. Never a verdict: a measure that cannot be taken says so.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["seen"]

_CUT = 60
_PLACEHOLDER = re.compile(r"\[.*?\]")
_BULLET = re.compile(r"^\s*[\*-][^\*].*$", flags=re.MULTILINE)
_HIGHLIGHT = re.compile(r"\*[^\n\*]+\*")


def seen(instruction_id: str, args: Mapping[str, Any], response: str) -> str:
    """What ``response`` shows of the quantity ``instruction_id`` constrains, in a few words."""
    name = instruction_id.rpartition(":")[2]
    try:
        for arg, measure in _BY_ARGUMENT.items():
            if arg in args:
                return measure(args, response)
        by_name = _BY_NAME.get(name)
        if by_name is not None:
            return by_name(response)
    except Exception:  # a measure is a courtesy; the official verdict stands without it
        pass
    return "not followed"


def _util() -> Any:
    from reins.packs.ifeval.official import load

    return load().util


def _short(text: str) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= _CUT else text[: _CUT - 1] + "…")


def _lower_words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def _paragraphs(args: Mapping[str, Any], text: str) -> str:
    if "nth_paragraph" in args:  # paragraphs separated by blank lines
        parts = [p for p in re.split(r"\n\n", text) if p.strip()]
        nth = int(args["nth_paragraph"])
        first = parts[nth - 1].split()[0] if len(parts) >= nth and parts[nth - 1].split() else ""
        return f"{len(parts)} paragraphs; paragraph {nth} starts with {_short(first)}"
    parts = [p for p in re.split(r"\s?\*\*\*\s?", text) if p.strip()]
    return f"{len(parts)} paragraphs separated by ***"


def _sections(args: Mapping[str, Any], text: str) -> str:
    marker = str(args["section_spliter"])
    count = len(re.split(r"\s?" + re.escape(marker) + r"\s?\d+\s?", text)) - 1
    return f"{count} sections marked {marker!r}"


def _keyword_count(args: Mapping[str, Any], text: str) -> str:
    keyword = str(args["keyword"])
    count = len(re.findall(re.escape(keyword), text, flags=re.IGNORECASE))
    return f"{keyword!r} {count} times"


def _letter_count(args: Mapping[str, Any], text: str) -> str:
    letter = str(args["letter"])
    return f"letter {letter!r} {text.lower().count(letter.lower())} times"


def _language(args: Mapping[str, Any], text: str) -> str:
    from reins.packs.ifeval.official import load

    return f"language detected: {load().langdetect.detect(text)}"


_BY_ARGUMENT: dict[str, Callable[[Mapping[str, Any], str], str]] = {
    "num_words": lambda a, t: f"{_util().count_words(t)} words",
    "num_sentences": lambda a, t: f"{_util().count_sentences(t)} sentences",
    "num_placeholders": lambda a, t: f"{len(_PLACEHOLDER.findall(t))} [placeholders]",
    "num_bullets": lambda a, t: f"{len(_BULLET.findall(t))} bullet points",
    "num_highlights": lambda a, t: f"{len(_HIGHLIGHT.findall(t))} *highlighted* sections",
    "section_spliter": _sections,
    "num_paragraphs": _paragraphs,
    "postscript_marker": lambda a, t: f"no line starting with {a['postscript_marker']!r}",
    "keywords": lambda a, t: (
        "missing: "
        + ", ".join(k for k in a["keywords"] if not re.search(re.escape(k), t, flags=re.IGNORECASE))
    ),
    "forbidden_words": lambda a, t: (
        "present: " + ", ".join(w for w in a["forbidden_words"] if w.lower() in _lower_words(t))
    ),
    "keyword": _keyword_count,
    "letter": _letter_count,
    "language": _language,
    "capital_frequency": lambda a, t: (
        f"{sum(1 for w in t.split() if w.isupper())} words in capitals"
    ),
    "end_phrase": lambda a, t: f"ends with {_short(t.strip()[-_CUT:])}",
    "prompt_to_repeat": lambda a, t: f"starts with {_short(t.strip()[:_CUT])}",
}

_BY_NAME: dict[str, Callable[[str], str]] = {
    "no_comma": lambda t: f"{t.count(',')} commas",
    "json_format": lambda t: f"not one JSON value: starts with {_short(t.strip()[:20])}",
    "title": lambda t: "no <<title>> in double angular brackets",
    "quotation": lambda t: (
        f"starts with {_short(t.strip()[:1])}, ends with {_short(t.strip()[-1:])}"
    ),
    "english_capital": lambda t: f"{sum(1 for c in t if c.islower())} lower-case letters",
    "english_lowercase": lambda t: f"{sum(1 for c in t if c.isupper())} capital letters",
    "two_responses": lambda t: f"{len(t.split('******'))} parts separated by ******",
    "constrained_response": lambda t: f"starts with {_short(t.strip()[:_CUT])}",
}
