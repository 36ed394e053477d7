"""Rules, facts and the context they read: the vocabulary of a gate."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from reins.values import JSON, Fact, JudgeTree

__all__ = ["CatalogEntry", "Check", "Context", "Fact", "Level", "Rule", "rule"]


class Level(StrEnum):
    """How much a fired rule weighs: FAIL sends the item back, REVIEW parks it for a human."""

    FAIL = "FAIL"
    REVIEW = "REVIEW"


@dataclass(frozen=True, slots=True)
class Context:
    """What a rule reads: the decoded submission, the item it answers, and its source text.

    ``workspace`` is the judge's tree of a coding item (the base, the recorded patch, the
    judge's own files): reins built it for this judgment, and a check that runs in it
    (``pytest``, ``command`` with ``workspace = true``) judges the files there. None for a
    text item.
    """

    key: str
    submission: JSON
    payload: JSON = None
    source: str = ""
    raw: str = ""
    grounds: Mapping[str, Any] = field(default_factory=dict)
    workspace: JudgeTree | None = None


Check = Callable[[Context], "Fact | Iterable[Fact] | None"]
"""A check: None when nothing is wrong, else a fact or several (each may carry its own level)."""


@dataclass(frozen=True, slots=True)
class Rule:
    """A violation detector: ``check`` returns a fact (or several) when it finds a problem, else
    None. ``level`` is the most any of its facts weighs."""

    id: str
    level: Level
    description: str
    check: Check

    def __post_init__(self) -> None:
        if not self.id or any(c.isspace() for c in self.id):
            raise ValueError(f"a rule id must be a non-empty word, got {self.id!r}")
        if not isinstance(self.level, Level):
            object.__setattr__(self, "level", Level(self.level))


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    """One line of ``reins rules``: what actually judges, with a graph gate's edges, and for a
    rule read from gate.md its check and parameters as written."""

    id: str
    level: Level
    description: str
    supersedes: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()
    check: str = ""
    parameters: str = ""


def rule(id: str, level: Level | str, description: str) -> Callable[[Check], Rule]:
    """Decorator: turn a check function into a :class:`Rule`.

    >>> @rule("non-empty", Level.FAIL, "the answer is not empty")
    ... def non_empty(ctx): ...
    """

    def wrap(check: Check) -> Rule:
        return Rule(id, Level(level), description, check)

    return wrap
