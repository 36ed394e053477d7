"""A quest's own figures for ``reins report``: what they read, and what they are.

A quest may name a function (``Quest.figures``, or ``[report] figures = "module:function"`` in
quest.toml) that ``report`` calls with a :class:`LedgerView`: a read-only view of the ledger
that gives each item with its payload and its latest judged answer (its facts and outcome),
and nothing it could write through. The function returns :class:`Figure` values: a name, a
value and how the value is shown. ``report`` prints them after its own lines, ``--json`` puts
them under ``quest_figures`` and ``--html`` shows them in a table.

Nothing here is imported by the commands of a turn (``next``, ``submit``, ``status``): only
``report`` reads the view.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

from reins.errors import ConfigError
from reins.values import JSON, Fact

if TYPE_CHECKING:
    from reins.store.model import Attempt
    from reins.store.protocol import Store

__all__ = ["SHOWN", "Answer", "Figure", "FigureFunction", "ItemView", "LedgerView", "compute"]

SHOWN = ("fraction", "percent", "count", "number")
"""How a figure's value is shown: ``fraction`` 0.7671, ``percent`` 76.71 %, ``count`` 1,234
(a whole number), ``number`` 3.1416; ``digits`` decimals for all but ``count``."""
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


@dataclass(frozen=True, slots=True)
class Figure:
    """One figure a quest adds to ``report``.

    Args:
        name: its key under ``--json``'s ``quest_figures`` (letters, digits and ``_``, a
            letter first); unique among the quest's figures.
        value: the number itself (``--json`` writes it unrounded).
        shown: how the text and the page show it: one of :data:`SHOWN`.
        label: what it is, in words (the text line prints it beside the value).
        note: what it was counted over ("415 of 541 prompts"), printed after the label.
        digits: decimals shown (0-12; ``count`` shows none).
    """

    name: str
    value: int | float
    shown: str = "number"
    label: str = ""
    note: str = ""
    digits: int = 4

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.fullmatch(self.name):
            raise ConfigError(
                f"a figure's name is letters, digits and _ (a letter first), not {self.name!r}"
            )
        value = self.value
        if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
            raise ConfigError(f"figure {self.name}: the value must be a number, not {value!r}")
        if self.shown not in SHOWN:
            raise ConfigError(
                f"figure {self.name}: shown must be one of {', '.join(SHOWN)}, not {self.shown!r}"
            )
        if not isinstance(self.digits, int) or not 0 <= self.digits <= 12:
            raise ConfigError(f"figure {self.name}: digits must be a whole number from 0 to 12")
        if not isinstance(self.label, str) or not isinstance(self.note, str):
            raise ConfigError(f"figure {self.name}: label and note must be strings")

    @property
    def text(self) -> str:
        """The value as shown: ``0.7671``, ``76.71%``, ``1,234`` or ``3.1416``."""
        if self.shown == "count":
            return f"{round(self.value):,}"
        if self.shown == "percent":
            return f"{100 * self.value:.{self.digits}f}%"
        return f"{self.value:.{self.digits}f}"


@dataclass(frozen=True, slots=True)
class Answer:
    """An item's latest judged answer: the turn that judged it, the gate's outcome, its facts,
    the submission (None when the ledger kept none) and which answer of its round it was
    (``number``: 1 for the first, as ``report``'s "passes on answer k" counts; for a re-judge,
    the number of the answer it judged again; 0 when not known)."""

    turn: int
    outcome: str
    facts: tuple[Fact, ...]
    submission: str | None
    number: int = 0


@dataclass(frozen=True, slots=True)
class ItemView:
    """One item as a quest's figures read it: its key, state and payload, and its latest
    judged answer (None: not judged yet). A re-judge, the current gate's verdict on the same
    answer, takes the place of the verdict it replaced; generation and judge errors and a
    person's accept, reject or reopen are not verdicts."""

    key: str
    state: str
    payload: JSON
    answer: Answer | None


class LedgerView:
    """The ledger, read-only: what a quest's figure function is given."""

    __slots__ = ("_store",)

    def __init__(self, store: Store) -> None:
        self._store = store

    def items(self) -> Iterator[ItemView]:
        """Every item in the order it was added, each with its latest judged answer.

        Read a page at a time: the last attempt of each item in one indexed read per item,
        and the whole log only of an item whose last attempt is not a judged one."""
        from reins.store.walk import chunks, iter_items

        for page in chunks(iter_items(self._store), 1_000):
            last = self._store.last_attempts([item.key for item in page])
            for item in page:
                attempt = last.get(item.key)
                if attempt is not None and not _a_verdict(attempt):
                    log = self._store.snapshot(item.key)[1]
                    attempt = next((a for a in reversed(log) if _a_verdict(a)), None)
                answer = None
                if attempt is not None:
                    number = _number(self._store, attempt)
                    answer = Answer(
                        attempt.turn,
                        attempt.outcome or "",
                        attempt.facts,
                        attempt.submission,
                        number,
                    )
                yield ItemView(item.key, item.state.value, item.payload, answer)


def _number(store: Store, attempt: Attempt) -> int:
    """Which answer of its round ``attempt`` judged: for a re-judge, the judged turn before it
    (a re-judge keeps or resets the failures used, so its own count says nothing)."""
    from reins.gate.wording import judged_answer
    from reins.store.model import AttemptKind

    if attempt.kind is not AttemptKind.JUDGED:
        log = store.snapshot(attempt.key)[1]
        before = [a for a in log if a.kind is AttemptKind.JUDGED and a.turn < attempt.turn]
        if not before:
            return 0
        attempt = before[-1]
    return judged_answer(attempt.outcome, attempt.tries_after) or 0


def _a_verdict(attempt: Attempt) -> bool:
    """A judged turn, or a re-judge (the current gate's verdict on the same answer, which a
    person applied): the gate's word on an answer. Accept, reject and reopen are not."""
    from reins.store.model import AttemptKind

    if attempt.kind is AttemptKind.HUMAN:
        return attempt.action == "rejudge" and attempt.outcome is not None
    return attempt.kind is AttemptKind.JUDGED


FigureFunction: TypeAlias = Callable[[LedgerView], Sequence[Figure]]
"""What ``Quest.figures`` names: the ledger's view in, the quest's figures out."""


def compute(function: FigureFunction, store: Store, quest: str) -> tuple[Figure, ...]:
    """The figures ``function`` gives over ``store``, checked.

    Raises:
        ConfigError: the function raised, or gave something other than figures with
            distinct names. It names the quest and the function.
    """
    ref = f"quest {quest}: figures {getattr(function, '__qualname__', function)!s}"
    try:
        found = tuple(function(LedgerView(store)))
    except ConfigError as exc:
        raise ConfigError(f"{ref}: {exc}") from exc
    except Exception as exc:
        raise ConfigError(f"{ref} raised {type(exc).__name__}: {exc}") from exc
    wrong = [f for f in found if not isinstance(f, Figure)]
    if wrong:
        raise ConfigError(f"{ref} gave {type(wrong[0]).__name__}, not reins.figures.Figure")
    names = [f.name for f in found]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigError(f"{ref} gave two figures named {', '.join(twice)}")
    return found
