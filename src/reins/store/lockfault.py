"""A lock no attempt produced, and an attempt that does not follow, in plain words.

What :mod:`reins.store.provenance`'s queries find is read here into :class:`LockFault` (a
refused export, a line of ``reins ledger check``) and worded; nothing here is loaded until a
query finds something.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from reins.store.provenance import (
    ERROR_KINDS,
    HUMAN,
    HUMAN_KIND,
    JUDGED,
    JUDGED_KIND,
    TERMINAL,
    TODO,
)


@dataclass(frozen=True, slots=True)
class Step:
    """One attempt as provenance reads it: its turn, what made it, and what it left. Plain
    strings, since a forged row may hold any."""

    turn: int
    kind: str
    outcome: str | None
    action: str | None
    state: str
    tries: int
    round: int

    @classmethod
    def of(cls, row: Sequence[Any]) -> Step | None:
        """The step of seven columns in ``_STEP`` order; None for an attempt not found."""
        if row[0] is None:
            return None
        turn, kind, outcome, action, state, tries, round_ = row
        return cls(turn, kind, outcome, action, state, tries, round_)

    def described(self) -> str:
        """What made it, in words: "a judged FAIL", "a person's reopen"."""
        if self.kind == JUDGED_KIND:
            return (
                f"a judged {self.outcome}" if self.outcome else "a judged attempt with no outcome"
            )
        if self.kind in ERROR_KINDS:
            return "a generation error" if self.kind == ERROR_KINDS[0] else "a judge error"
        if self.kind == HUMAN_KIND:
            act = f"a person's {self.action or 'action'}"
            return act if self.outcome is None else f"{act} ({self.outcome})"
        return f"an attempt of kind {self.kind!r}"


def _or(values: Sequence[str]) -> str:
    return "a lock" if tuple(values) == TERMINAL else " or ".join(values)


def _failures(n: int) -> str:
    return f"{n} failure{'' if n == 1 else 's'} used"


def misfit(a: Step, before: Step | None) -> str | None:
    """How ``a`` does not follow from the turn ``before`` it by turn.md's tables, in words that
    follow "turn N is <a described> that"; None when it follows (as :data:`FITS` says)."""
    s0, t0, r0 = (before.state, before.tries, before.round) if before else (TODO, 0, 1)
    if a.kind == JUDGED_KIND:
        return _judged_misfit(a, t0, r0)
    if a.kind in ERROR_KINDS:
        if a.state != TODO:
            return f"left it {a.state}: an error never locks"
        if a.tries != t0:
            return (
                f"left {_failures(a.tries)} after the turn before left {t0}: an error uses no try"
            )
        return _round_misfit(a, r0)
    if a.kind == HUMAN_KIND:
        return _human_misfit(a, s0, t0, r0)
    return "no table of turn.md has"


def _judged_misfit(a: Step, t0: int, r0: int) -> str | None:
    judgment = JUDGED.get(a.outcome or "")
    if judgment is None:
        return "turn.md's record table does not have"
    if a.state not in judgment.leaves:
        return (
            f"left it {a.state}, where turn.md's record table has it leave {_or(judgment.leaves)}"
        )
    if a.tries != t0 + judgment.uses:
        uses = "uses one try" if judgment.uses else "uses none"
        return (
            f"left {_failures(a.tries)} after the turn before left {t0}, where a {a.outcome} {uses}"
        )
    return _round_misfit(a, r0)


def _round_misfit(a: Step, r0: int) -> str | None:
    if a.round != r0:
        return f"is in round {a.round} after a turn in round {r0}: only a person starts a round"
    return None


def _human_misfit(a: Step, s0: str, t0: int, r0: int) -> str | None:
    act = HUMAN.get((a.action or "", a.outcome))
    if act is None:
        return "turn.md's human table does not have"
    if s0 not in act.acts_on:
        why = f"acts on an item the turn before left {s0}, where it applies to {_or(act.acts_on)}"
        if s0 == TODO and act.acts_on == TERMINAL:
            why += " (as when a person reopens a lock no attempt produced)"
        return why
    if a.state != act.leaves:
        return f"left it {a.state}, where turn.md's human table has it leave {act.leaves}"
    tries, round_ = (0, r0 + 1) if act.new_round else (t0, r0)
    if a.tries != tries:
        keeps = "starts from 0" if act.new_round else f"keeps the {t0} of the turn before"
        return f"left {_failures(a.tries)}, where it {keeps}"
    if a.round != round_:
        keeps = "starts" if act.new_round else "stays in"
        return f"is in round {a.round}, where it {keeps} round {round_}"
    return None


@dataclass(frozen=True, slots=True)
class LockFault:
    """A terminal item whose lock no attempt produced: the item (``logged``: the attempts its
    log holds), its last attempt and the one before (None where the log has none)."""

    key: str
    state: str
    tries: int
    round: int
    turns: int
    logged: int
    last: Step | None
    before: Step | None

    @classmethod
    def of(cls, row: Sequence[Any]) -> LockFault:
        """The fault in a row of :data:`FAULTS`."""
        key, state, tries, round_, turns, logged = row[:6]
        return cls(
            key, state, tries, round_, turns, logged, Step.of(row[6:13]), Step.of(row[13:20])
        )

    def words(self) -> str:
        """What is wrong, in plain words that name the item."""
        head = f"item {self.key} is {self.state}, but no attempt locked it: "
        a, before = self.last, self.before
        if a is None:
            if self.logged == 0:
                return head + "it has no attempt in its log"
            if self.turns == 0:
                return head + f"it counts no turn, though its log holds {self.logged} attempt(s)"
            return head + f"its log has no turn {self.turns}, which the item counts as its last"
        last = f"its last attempt (turn {a.turn}) is {a.described()}"
        if a.state != self.state:
            return head + f"{last} that left it {a.state}"
        if a.kind in ERROR_KINDS:
            return head + f"{last}, which never locks"
        if a.kind == JUDGED_KIND and before is not None and before.state != TODO:
            return (
                head + f"{last} after turn {before.turn} had locked it {before.state}: only a "
                "person's action follows a lock"
            )
        why = misfit(a, before)
        if why is not None:
            return head + f"{last} that {why}"
        if (a.tries, a.round) != (self.tries, self.round):
            return (
                f"item {self.key} is {self.state} with {_failures(self.tries)} in round "
                f"{self.round}, but its last attempt (turn {a.turn}) left {a.tries} in round "
                f"{a.round}: no attempt locked it so"
            )
        return head + f"{last}, which does not follow turn.md's tables"


def misfit_words(row: Sequence[Any]) -> str:
    """A row of :data:`MISFITS` (the key, then the attempt and the one before) in words."""
    a = Step.of(row[1:8])
    assert a is not None  # MISFITS reads attempts that exist
    why = misfit(a, Step.of(row[8:15])) or "does not follow turn.md's tables"
    return f"item {row[0]}: turn {a.turn} is {a.described()} that {why}"
