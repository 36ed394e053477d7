"""Test-only checks for the declarative loader, registered by :func:`register` (a fixture's
work: the standard library's own checks are tested in their own files)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from reins.checks import STANDARD, BuiltCheck, CheckSpec
from reins.gate import Context, Fact, Level


@dataclass(frozen=True, slots=True)
class Field:
    field: str
    """the field"""


@dataclass(frozen=True, slots=True)
class Fields:
    field: str
    """submission field"""
    item_field: str
    """payload field"""


@dataclass(frozen=True, slots=True)
class Pattern:
    pattern: str
    """a regex"""
    flags: str | tuple[str, ...] = ()
    """unused: one flag or several"""


@dataclass(frozen=True, slots=True)
class Word:
    word: str
    """the word"""


@dataclass(frozen=True, slots=True)
class Nothing:
    """No parameters."""


def _has(params: Field) -> BuiltCheck:
    field = params.field

    def check(ctx: Context) -> Fact | None:
        sub = ctx.submission
        if not isinstance(sub, dict) or not isinstance(sub.get(field), str):
            return Fact(where=f"submission.{field}", expected="a string", actual=repr(sub)[:60])
        return None

    return check


def _same(params: Fields) -> BuiltCheck:
    field, item_field = params.field, params.item_field

    def check(ctx: Context) -> Fact | None:
        want = ctx.payload.get(item_field) if isinstance(ctx.payload, dict) else None
        got = ctx.submission.get(field) if isinstance(ctx.submission, dict) else None
        if want != got:
            return Fact(where=f"submission.{field}", expected=str(want), actual=str(got))
        return None

    return check


def _pattern(params: Pattern) -> BuiltCheck:
    try:
        compiled = re.compile(params.pattern)
    except re.error as exc:
        raise ValueError(f"pattern does not compile: {exc}") from exc

    def check(ctx: Context) -> Fact | None:
        text = ctx.submission if isinstance(ctx.submission, str) else str(ctx.submission)
        if not compiled.search(text):
            return Fact(where="submission", expected=compiled.pattern, actual=text[:60])
        return None

    return check


def _in_source(params: Nothing) -> BuiltCheck:
    def check(ctx: Context) -> Iterator[Fact]:
        for word in str(ctx.submission).split():
            if word not in ctx.source:
                yield Fact(where="submission", expected="a word of the source", actual=word)

    return check


def _strict_loose(params: Word) -> BuiltCheck:
    """FAIL when the word is missing, REVIEW when it is there only in another case."""
    word = params.word

    def check(ctx: Context) -> Fact | None:
        text = str(ctx.submission)
        if word in text:
            return None
        level = "REVIEW" if word.lower() in text.lower() else "FAIL"
        return Fact(where="submission", expected=word, actual=text[:60], level=level)

    return check


def _doubt(params: Nothing) -> BuiltCheck:
    def check(ctx: Context) -> Fact | None:
        return Fact(where="submission", expected="sure", actual="doubt", level="FAIL")

    return check


HAS_FIELD = CheckSpec("has_field", "the submission has a string field", Field, _has)
SAME = CheckSpec("same", "a submission field equals an item field", Fields, _same)
PATTERN = CheckSpec("pattern", "the submission matches a regex", Pattern, _pattern)
IN_SOURCE = CheckSpec("in_source", "every word is in the source", Nothing, _in_source)
STRICT_LOOSE = CheckSpec("strict_loose", "a word, strictly or loosely", Word, _strict_loose)
DOUBT = CheckSpec("doubt", "always doubts", Nothing, _doubt, ceiling=Level.REVIEW)

SPECS = {
    "has_field": "HAS_FIELD",
    "same": "SAME",
    "pattern": "PATTERN",
    "in_source": "IN_SOURCE",
    "strict_loose": "STRICT_LOOSE",
    "doubt": "DOUBT",
}


def register(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the test checks known to :func:`reins.checks.spec_of` for one test."""
    for name, attr in SPECS.items():
        monkeypatch.setitem(STANDARD, name, f"tests.kit.declare_checks:{attr}")


def write_quest(folder: object, gate: str, toml: str, items: str | None = None) -> None:
    """Write a quest folder: quest.toml, gate.md and (optionally) items.jsonl."""
    from pathlib import Path

    assert isinstance(folder, Path)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "quest.toml").write_text(toml, encoding="utf-8")
    (folder / "gate.md").write_text(gate, encoding="utf-8")
    if items is not None:
        (folder / "items.jsonl").write_text(items, encoding="utf-8")


CAPITALS_TOML = """\
name = "capitals"
description = "name the capital of a country"

[items]
source = "items.jsonl"
key = "country"

[prompt]
output = "json"
manual = "Answer with one JSON object: {\\"capital\\": \\"...\\"}."
template = "What is the capital of {{ item.country }}?"

[judge]
max_tries = 2
version = "1"

[[examples]]
input = { country = "Italy", capital = "Rome" }
output = '{"capital": "Rome"}'
"""

CAPITALS_GATE = """\
# Capitals

Prose for people.

## Rules

| id | level | check | parameters | coaching |
|----|-------|-------|------------|----------|
| shape | FAIL | has_field | field = "capital" | Answer with {"capital": "..."}. |
| right | FAIL | same | field = "capital", item_field = "capital" | Name the capital city. |
"""

CAPITALS_ITEMS = (
    '{"country": "France", "capital": "Paris"}\n{"country": "Spain", "capital": "Madrid"}\n'
)
