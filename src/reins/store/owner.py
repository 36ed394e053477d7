"""The quest a ledger belongs to: recorded when the ledger is made, checked whenever it opens.

The store knows nothing of quests; it keeps an :class:`Owner` as two plain strings in its meta
table (``owner.name``, ``owner.origin``) and compares names only. Both engines check it while
opening, before anything is written (a migration, SQLite's switch to WAL, the adoption below),
so a ledger refused for belonging to another quest is left exactly as it was. A ledger made
before owners were recorded takes the first owner that opens it, once.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from reins.errors import WrongQuest

NAME_KEY = "owner.name"
ORIGIN_KEY = "owner.origin"


@dataclass(frozen=True, slots=True)
class Owner:
    """A ledger's quest, as text: its ``name`` (what is compared) and its ``origin``.

    ``origin`` is where the quest was loaded from (a folder, a pack's name, ``module:attr``, an
    entry point): a reference to pass back as ``--quest``, kept for messages only, so the same
    quest loaded by a relative and by an absolute path is the same owner. Empty when the quest
    was handed over as a value.
    """

    name: str
    origin: str = ""

    def describe(self) -> str:
        """``'name' (origin)``, or ``'name'`` alone when the origin says no more."""
        said = self.origin and self.origin != self.name
        return f"{self.name!r} ({self.origin})" if said else repr(self.name)


def read(values: dict[str, str]) -> Owner | None:
    """The owner recorded among a ledger's meta ``values`` (None: a ledger from before owners)."""
    name = values.get(NAME_KEY)
    return None if not name else Owner(name, values.get(ORIGIN_KEY, ""))


def refuse_other(location: str, recorded: Owner | None, given: Owner | None) -> None:
    """Raise :class:`WrongQuest` when ``location`` belongs to a quest other than ``given``.

    A ledger with no owner yet, or opened with none given, is refused by no one.
    """
    if recorded is None or given is None or recorded.name == given.name:
        return
    # An origin is a quest reference; a quest handed over as a value (for_quest) has none.
    hint = f" --quest {shlex.quote(recorded.origin)}" if recorded.origin else f" {recorded.name!r}"
    raise WrongQuest(
        f"ledger {location} belongs to quest {recorded.describe()}, not to quest "
        f"{given.describe()}; nothing was changed. Point --ledger at another ledger, or pass "
        f"the quest that made it:{hint}",
        location=location,
        recorded=(recorded.name, recorded.origin),
        given=(given.name, given.origin),
    )
