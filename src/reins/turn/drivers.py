"""The driver table, parsed from turn.md: who generates under each driver, and how it records.

Every driver enters the same turn; the table says what differs. The document is read and
checked at import, like the record table: a malformed, partial or inconsistent table raises
:class:`~reins.turn.table.TurnTableError` then, so a broken document can never run.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum

from reins.errors import TurnTableError
from reins.store.model import Notes
from reins.turn.table import DOCUMENT, markdown_table

HEADER = ("driver", "commands", "generates", "prompt", "leases", "default name")
REQUIRED = ("manual", "loop", "replay")
_WORD = re.compile(r"[a-z][a-z0-9_-]*\Z")


class Generates(StrEnum):
    """Who performs the generate step."""

    PERSON = "person"
    BACKEND = "backend"
    FILE = "file"


class PromptUse(StrEnum):
    """What the driver does with the composed prompt."""

    PRINTED = "printed"
    SENT = "sent"
    DIGEST = "digest"


# Each kind of generator meets the prompt in exactly one way.
_PROMPT_OF = {
    Generates.PERSON: PromptUse.PRINTED,
    Generates.BACKEND: PromptUse.SENT,
    Generates.FILE: PromptUse.DIGEST,
}


@dataclass(frozen=True, slots=True)
class Driver:
    """One row of the driver table."""

    name: str
    commands: tuple[str, ...]
    generates: Generates
    prompt: PromptUse
    leases: bool
    default_name: str

    def notes(
        self,
        *,
        seed: int | None = None,
        escalated_by: str | None = None,
        model: str | None = None,
        line: int | None = None,
        temperature: float | None = None,
    ) -> Notes:
        """What an attempt of this driver keeps beside its columns: ``via`` and the rest."""
        return Notes(
            via=self.name, seed=seed, temperature=temperature, escalated_by=escalated_by,
            model=model, line=line,
        )  # fmt: skip


class DriverTable:
    """The parsed table: exactly the required drivers, each command entering one driver."""

    def __init__(self, rows: tuple[Driver, ...]) -> None:
        self.rows = rows
        names = [r.name for r in rows]
        for name in sorted({n for n in names if names.count(n) > 1}):
            raise TurnTableError(f"turn.md driver table: driver {name!r} has more than one row")
        missing = [n for n in REQUIRED if n not in names]
        if missing:
            raise TurnTableError(f"turn.md driver table: no row for driver {missing[0]!r}")
        extra = [n for n in names if n not in REQUIRED]
        if extra:
            raise TurnTableError(
                f"turn.md driver table: driver {extra[0]!r} is not one reins runs "
                f"({', '.join(REQUIRED)})"
            )
        commands = [c for r in rows for c in r.commands]
        for command in sorted({c for c in commands if commands.count(c) > 1}):
            raise TurnTableError(
                f"turn.md driver table: command {command!r} enters more than one driver"
            )

    def __getitem__(self, name: str) -> Driver:
        for row in self.rows:
            if row.name == name:
                return row
        raise KeyError(name)

    def __iter__(self) -> Iterator[Driver]:
        return iter(self.rows)


def parse_drivers(text: str) -> DriverTable:
    """Parse the driver table between its begin and end markers in ``text``."""
    rows = markdown_table(text, "driver-table", HEADER, TurnTableError)
    return DriverTable(tuple(_row(n, cells) for n, cells in enumerate(rows, start=1)))


def _row(n: int, cells: list[str]) -> Driver:
    where = f"turn.md driver table row {n}"
    name, commands, generates, prompt, leases, default_name = cells
    try:
        row = Driver(
            name=name,
            commands=tuple(c.strip() for c in commands.split(",")),
            generates=Generates(generates),
            prompt=PromptUse(prompt),
            leases={"yes": True, "no": False}[leases],
            default_name=default_name,
        )
    except (ValueError, KeyError) as exc:
        raise TurnTableError(f"{where}: {exc}") from exc
    for word in (row.name, *row.commands, row.default_name):
        if not _WORD.match(word):
            raise TurnTableError(f"{where}: {word!r} is not a lower-case word")
    if row.prompt is not _PROMPT_OF[row.generates]:
        raise TurnTableError(
            f"{where}: a driver whose generator is a {row.generates} has its prompt "
            f"{_PROMPT_OF[row.generates]}, not {row.prompt}"
        )
    if row.generates is Generates.BACKEND and not row.leases:
        raise TurnTableError(
            f"{where}: a backend driver runs unattended and concurrently, so it must lease"
        )
    return row


DRIVERS = parse_drivers(DOCUMENT.read_text(encoding="utf-8"))
