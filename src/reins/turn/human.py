"""The human table, parsed from turn.md: what a person's action does to a locked item.

Like the record table it is read and checked at import: every action names where it may start,
what it leads to, and whether it opens a new round; a malformed or ambiguous table raises
:class:`~reins.errors.TurnTableError` then, so a broken document can never run.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from reins.errors import IllegalTransition, TurnTableError
from reins.gate import Outcome
from reins.store.model import State, Transition
from reins.turn.table import DOCUMENT, NO_OUTCOME, markdown_table

HEADER = ("action", "from", "outcome", "new state", "tries", "round")


class Action(StrEnum):
    """What a person may do to a locked item (and ``drop``, to any item)."""

    ACCEPT = "accept"
    REJECT = "reject"
    REOPEN = "reopen"
    REJUDGE = "rejudge"
    DROP = "drop"
    UNDO = "undo"


@dataclass(frozen=True, slots=True)
class HumanRow:
    """One row: the action, the states it starts from, the verdict it applies, its effect."""

    action: Action
    sources: frozenset[State]
    outcome: str
    state: State
    new_round: bool

    @property
    def transition(self) -> Transition:
        return Transition(self.state, 0, new_round=self.new_round)


class HumanTable:
    """The parsed table. :meth:`lookup` finds the single row for an action on an item."""

    def __init__(self, rows: tuple[HumanRow, ...]) -> None:
        self.rows = rows
        seen: set[tuple[Action, State, str]] = set()
        for r in rows:
            for source in r.sources:
                cell = (r.action, source, r.outcome)
                if cell in seen:
                    raise TurnTableError(f"turn.md human table: two rows for {' × '.join(cell)}")
                seen.add(cell)
        missing = [a for a in Action if not any(r.action is a for r in rows)]
        if missing:
            raise TurnTableError(f"turn.md human table: no row for action {missing[0]!r}")

    def lookup(self, action: Action, state: State, outcome: str | None = None) -> HumanRow:
        """The row for ``action`` on an item in ``state`` (with the re-judged ``outcome``).

        Raises:
            IllegalTransition: the action does not apply to an item in that state.
        """
        out = NO_OUTCOME if outcome is None else outcome
        for row in self.rows:
            if row.action is action and state in row.sources and row.outcome == out:
                return row
        starts = sorted({s.value for r in self.rows if r.action is action for s in r.sources})
        raise IllegalTransition(
            f"a person may {action.value} an item that is {' or '.join(starts)}, not {state}"
        )


def parse_human(text: str) -> HumanTable:
    """Parse the human table between its begin and end markers in ``text``."""
    rows = markdown_table(text, "human-table", HEADER, TurnTableError)
    return HumanTable(tuple(_row(n, cells) for n, cells in enumerate(rows, start=1)))


def _row(n: int, cells: list[str]) -> HumanRow:
    where = f"turn.md human table row {n}"
    action, sources, outcome, state, tries, round_ = cells
    try:
        row = HumanRow(
            action=Action(action),
            sources=frozenset(State(s.strip()) for s in sources.split(",")),
            outcome=outcome,
            state=State(state),
            new_round={"next": True, "keep": False}[round_],
        )
        resets = {"reset": True, "keep": False}[tries]
    except (ValueError, KeyError) as exc:
        raise TurnTableError(f"{where}: {exc}") from exc
    if any(not s.terminal for s in row.sources) and row.action is not Action.DROP:
        raise TurnTableError(f"{where}: a person acts on locked items only (and drops any)")
    if resets != row.new_round or row.new_round != (row.state is State.TODO):
        raise TurnTableError(
            f"{where}: tries reset exactly when a new round starts, and only back to TODO"
        )
    allowed = [o.value for o in Outcome] if row.action is Action.REJUDGE else [NO_OUTCOME]
    if row.outcome not in allowed:
        raise TurnTableError(f"{where}: outcome {outcome!r} is not one of {allowed}")
    return row


HUMAN = parse_human(DOCUMENT.read_text(encoding="utf-8"))
