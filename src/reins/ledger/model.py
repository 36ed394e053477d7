"""The ledger's values: item states, items and attempts (the log).

The ledger knows nothing of gates or models: an attempt carries its verdict as plain data
(an outcome string, a root cause, facts as dictionaries and the rendered feedback).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class State(StrEnum):
    """Where an item stands. Everything but TODO is terminal."""

    TODO = "TODO"
    PASS = "PASS"
    REVIEW = "REVIEW"
    DONE = "DONE"
    SKIPPED = "SKIPPED"
    BLOCKED = "BLOCKED"

    @property
    def terminal(self) -> bool:
        return self is not State.TODO


TERMINAL_STATES: tuple[State, ...] = tuple(s for s in State if s.terminal)


class AttemptKind(StrEnum):
    """A judged attempt has a verdict; a generation error has only its cause."""

    JUDGED = "judged"
    GENERATION_ERROR = "generation_error"


@dataclass(frozen=True, slots=True)
class Item:
    """One unit of work as the ledger holds it."""

    key: str
    state: State
    tries: int
    payload: Any = None
    turns: int = 0
    created_at: str = ""
    updated_at: str = ""
    locked_at: str | None = None
    lease_owner: str | None = None
    lease_expires: float | None = None
    exported: bool = False


@dataclass(frozen=True, slots=True)
class Attempt:
    """One recorded turn of an item. ``turn`` N is the N-th attempt of that item."""

    key: str
    turn: int
    kind: AttemptKind
    driver: str
    state_after: State
    tries_after: int
    outcome: str | None = None
    root_cause: str | None = None
    facts: tuple[dict[str, str], ...] = ()
    feedback: str = ""
    submission: str | None = None
    error: str | None = None
    policy: str = "facts"
    backend: str | None = None
    prompt_digest: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost: float | None = None
    latency: float | None = None
    started_at: str | None = None
    recorded_at: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def judged(self) -> bool:
        return self.kind is AttemptKind.JUDGED


@dataclass(frozen=True, slots=True)
class Transition:
    """What recording an attempt does to its item: decided by the turn table, checked here."""

    state: State
    tries_delta: int
