"""Paths: how a rule in ``gate.md`` points into the submission and the item.

A path starts at a root and walks down::

    submission                  the decoded answer (JSON value, or the text for text output)
    submission.who              a field of an object
    submission.people[0].name   an element of an array (0-based), then a field
    submission.people[*].name   every element of an array (or every value of an object)
    submission["odd key"]       a field whose name is not a word (a JSON string in brackets)
    item.date                   the item's payload
    source                      the item's source text
    key                         the item's key
    raw                         the submission as the generator wrote it, before decoding

:func:`parse` reads a path (a ``ValueError`` names the character where it goes wrong);
:meth:`Path.resolve` lists every ``(location, value)`` it reaches in a context. A step that
finds nothing (a missing field, an index past the end, a field of a number) reaches nothing:
the check decides whether that is a fact.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from reins.gate.rule import Context

Root = Literal["submission", "item", "source", "key", "raw"]
ROOTS: tuple[Root, ...] = ("submission", "item", "source", "key", "raw")

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_INDEX = re.compile(r"\[(?:([0-9]+)|(\*)|(\"(?:[^\"\\]|\\.)*\"))\]")


@dataclass(frozen=True, slots=True)
class Field:
    """Step into the object member ``name``."""

    name: str


@dataclass(frozen=True, slots=True)
class Index:
    """Step into the array element ``index`` (0-based)."""

    index: int


@dataclass(frozen=True, slots=True)
class Every:
    """Step into every element of an array, or every member of an object."""


Step = Field | Index | Every


@dataclass(frozen=True, slots=True)
class Path:
    """A parsed path: a root and the steps below it. ``str(path)`` is its canonical text."""

    root: Root
    steps: tuple[Step, ...] = ()

    @property
    def definite(self) -> bool:
        """Whether the path names at most one place (it has no ``[*]``)."""
        return not any(isinstance(s, Every) for s in self.steps)

    def __str__(self) -> str:
        return self.root + "".join(_label(s) for s in self.steps)

    def resolve(self, ctx: Context) -> list[tuple[str, object]]:
        """Every ``(location, value)`` the path reaches in ``ctx``, in document order.

        ``location`` is the path to that one value, with ``[*]`` replaced by the index or
        member it took (``submission.people[2].name``). Nothing is raised for a shape that does
        not fit: a step that cannot be taken reaches nothing.
        """
        start: object = {
            "submission": ctx.submission,
            "item": ctx.payload,
            "source": ctx.source,
            "key": ctx.key,
            "raw": ctx.raw,
        }[self.root]
        return list(_walk(self.root, start, self.steps))


SUBMISSION = Path("submission")
"""The whole submission: the default of a check's ``path``."""
SOURCE = Path("source")
"""The item's source text."""


def parse(text: str) -> Path:
    """The path ``text`` spells.

    Raises:
        ValueError: the text is not a path; the message gives the 1-based character where it
            goes wrong and what was expected there.
    """
    if not isinstance(text, str):
        raise ValueError(f"a path is text, got {type(text).__name__}")
    m = _WORD.match(text)
    if m is None or m.group() not in ROOTS:
        roots = ", ".join(ROOTS)
        raise ValueError(f"path {text!r}, character 1: expected a root ({roots})")
    root: Root = m.group()  # type: ignore[assignment]
    steps: list[Step] = []
    pos = m.end()
    while pos < len(text):
        if text[pos] == ".":
            word = _WORD.match(text, pos + 1)
            if word is None:
                raise ValueError(f"path {text!r}, character {pos + 2}: expected a field name")
            steps.append(Field(word.group()))
            pos = word.end()
        elif text[pos] == "[":
            bracket = _INDEX.match(text, pos)
            if bracket is None:
                raise ValueError(
                    f'path {text!r}, character {pos + 1}: expected [0], [*] or ["name"]'
                )
            number, star, quoted = bracket.groups()
            if number is not None:
                steps.append(Index(int(number)))
            elif star is not None:
                steps.append(Every())
            else:
                steps.append(Field(_unquote(text, pos, quoted)))
            pos = bracket.end()
        else:
            raise ValueError(f"path {text!r}, character {pos + 1}: expected '.' or '['")
    if root in ("source", "key", "raw") and steps:
        raise ValueError(f"path {text!r}: {root} is text and has no parts")
    return Path(root, tuple(steps))


def _unquote(text: str, pos: int, quoted: str) -> str:
    try:
        name = json.loads(quoted)
    except json.JSONDecodeError:
        raise ValueError(f"path {text!r}, character {pos + 2}: a bad string") from None
    assert isinstance(name, str)
    return name


def member(where: str, name: str) -> str:
    """The location of member ``name`` of the object at ``where``."""
    return where + _label(Field(name))


def _label(step: Step) -> str:
    if isinstance(step, Field):
        if _WORD.fullmatch(step.name):
            return f".{step.name}"
        return f"[{json.dumps(step.name)}]"
    if isinstance(step, Index):
        return f"[{step.index}]"
    return "[*]"


def _walk(where: str, value: object, steps: tuple[Step, ...]) -> Iterator[tuple[str, object]]:
    if not steps:
        yield where, value
        return
    step, rest = steps[0], steps[1:]
    if isinstance(step, Field):
        if isinstance(value, dict) and step.name in value:
            yield from _walk(where + _label(step), value[step.name], rest)
    elif isinstance(step, Index):
        if isinstance(value, list) and step.index < len(value):
            yield from _walk(where + _label(step), value[step.index], rest)
    elif isinstance(value, list):
        for i, element in enumerate(value):
            yield from _walk(where + _label(Index(i)), element, rest)
    elif isinstance(value, dict):
        for name, member in value.items():
            yield from _walk(where + _label(Field(str(name))), member, rest)
