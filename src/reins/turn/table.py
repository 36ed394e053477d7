"""The record table, parsed from turn.md: the only thing that decides a recorded transition.

The document is read and checked at import. A malformed, partial or ambiguous table raises
:class:`TurnTableError` then, so a broken document can never run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from reins.declare.tables import split_row
from reins.errors import ReinsError, TurnTableError
from reins.gate import Outcome
from reins.store.model import AttemptKind, State

DOCUMENT = Path(__file__).with_name("turn.md")
HEADER = ("kind", "outcome", "tries", "new state", "tries change", "locks")
TRIES_CLASSES = ("below max", "reaches max")
NO_OUTCOME = "-"
# The kinds of machine attempt that carry no verdict: neither may use a try or lock an item.
NO_VERDICT = (AttemptKind.GENERATION_ERROR, AttemptKind.JUDGE_ERROR)


@dataclass(frozen=True, slots=True)
class Row:
    """One row: which attempts it matches, and what recording one does."""

    kind: AttemptKind
    outcome: str
    tries: str
    state: State
    tries_delta: int
    locks: bool

    def matches(self, kind: AttemptKind, outcome: str, tries_class: str) -> bool:
        return self.kind is kind and self.outcome == outcome and self.tries in ("any", tries_class)


def domain() -> list[tuple[AttemptKind, str, str]]:
    """Every (kind, outcome, tries class) an attempt can have."""
    cells = [(AttemptKind.JUDGED, o.value, t) for o in Outcome for t in TRIES_CLASSES]
    for kind in NO_VERDICT:
        cells += [(kind, NO_OUTCOME, t) for t in TRIES_CLASSES]
    return cells


def tries_class(tries: int, max_tries: int) -> str:
    return "below max" if tries + 1 < max_tries else "reaches max"


class RecordTable:
    """The parsed table. :meth:`lookup` finds the single row for an attempt."""

    def __init__(self, rows: tuple[Row, ...]) -> None:
        self.rows = rows
        for cell in domain():
            hits = [r for r in rows if r.matches(*cell)]
            if len(hits) != 1:
                what = "no row" if not hits else f"{len(hits)} rows"
                raise TurnTableError(f"turn.md record table: {what} for {' × '.join(cell)}")
        # Invariant 6 and 10: neither kind of error uses a try or locks anything.
        for r in rows:
            if r.kind in NO_VERDICT and (r.tries_delta or r.locks):
                raise TurnTableError(
                    f"turn.md record table: a {r.kind} uses no try and locks nothing"
                )
        # Invariant 1: only the gate's PASS locks PASS, through exactly one row.
        passing = [r for r in rows if r.state is State.PASS]
        if len(passing) != 1 or (passing[0].kind, passing[0].outcome) != (
            AttemptKind.JUDGED,
            Outcome.PASS.value,
        ):
            raise TurnTableError(
                "turn.md record table: exactly one row, judged × PASS, may lead to state PASS"
            )

    def lookup(self, kind: AttemptKind, outcome: str | None, tries: int, max_tries: int) -> Row:
        out = NO_OUTCOME if outcome is None else outcome
        cls = tries_class(tries, max_tries)
        for row in self.rows:
            if row.matches(kind, out, cls):
                return row
        raise TurnTableError(f"turn.md record table has no row for {kind} × {out} × {cls}")


def markdown_table(
    text: str, name: str, header: tuple[str, ...], error: type[ReinsError]
) -> list[list[str]]:
    """The body rows of the table ``name`` between its begin and end markers in ``text``.

    Each row is its list of stripped cells, checked to have as many cells as ``header``.

    Raises:
        error: no markers, no rows, another header, no separator line, or a row that does not
            have one cell per column.
    """
    what = f"turn.md {name.replace('-', ' ')}"
    m = re.search(rf"<!-- {name}: begin -->\n(.*?)<!-- {name}: end -->", text, re.S)
    if m is None:
        raise error(f"turn.md has no {name.replace('-', ' ')} between its begin and end markers")
    lines = [ln.strip() for ln in m.group(1).strip().splitlines()]
    if len(lines) < 3:
        raise error(f"{what} has no rows")
    found = tuple(c.text.lower() for c in split_row(lines[0]) or ())
    if found != header:
        raise error(f"{what} header is {found}, expected {header}")
    if not re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", lines[1]):
        raise error(f"{what} lacks its |---| separator line")
    rows = []
    for n, line in enumerate(lines[2:], start=1):
        cells = [c.text for c in split_row(line) or ()]
        if len(cells) != len(header):
            raise error(f"{what} row {n}: {len(cells)} cells, expected {len(header)}")
        rows.append(cells)
    return rows


def parse(text: str) -> RecordTable:
    """Parse the record table between its begin and end markers in ``text``."""
    rows = markdown_table(text, "record-table", HEADER, TurnTableError)
    return RecordTable(tuple(_row(n, cells) for n, cells in enumerate(rows, start=1)))


def _row(n: int, cells: list[str]) -> Row:
    where = f"turn.md record table row {n}"
    kind, outcome, tries, state, delta, locks = cells
    try:
        row = Row(
            kind=AttemptKind(kind),
            outcome=outcome,
            tries=tries,
            state=State(state),
            tries_delta=int(delta),
            locks={"yes": True, "no": False}[locks],
        )
    except (ValueError, KeyError) as exc:
        raise TurnTableError(f"{where}: {exc}") from exc
    allowed_outcomes = [NO_OUTCOME] if row.kind in NO_VERDICT else list(Outcome)
    if row.kind is AttemptKind.HUMAN:
        raise TurnTableError(f"{where}: a person's actions belong in the human table")
    if row.outcome not in allowed_outcomes:
        raise TurnTableError(f"{where}: outcome {outcome!r} is not one of {allowed_outcomes}")
    if row.tries not in ("any", *TRIES_CLASSES):
        raise TurnTableError(f"{where}: tries {tries!r} is not any, below max or reaches max")
    if row.locks != row.state.terminal:
        raise TurnTableError(f"{where}: locks={locks} contradicts state {state}")
    if row.tries_delta not in (0, 1):
        raise TurnTableError(f"{where}: tries change must be +0 or +1")
    return row


TABLE = parse(DOCUMENT.read_text(encoding="utf-8"))
