"""The ``--json`` of the commands that move work: ``scan``, ``next``, ``release``, ``submit``,
``export``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reins.cli.shapes import Plain, Refused
from reins.values import Fact

if TYPE_CHECKING:
    from reins.quest import Quest
    from reins.store.export import Exported as Export
    from reins.store.model import Item, Lease
    from reins.turn.record import Recorded
    from reins.values import Prompt


@dataclass(frozen=True, slots=True)
class FoundBy(Plain):
    """A scan's repository source: its kind (``pytest``, ``command``, ``files``), the base
    commit it read and how many items it found there."""

    kind: str
    base: str
    found: int


@dataclass(frozen=True, slots=True)
class Scanned(Plain):
    """``scan``: items added, already present, the ledger's total, and the repository source
    that found them (None: the items came from the arguments)."""

    added: int
    present: int
    total: int
    ledger: str
    source: FoundBy | None = None


@dataclass(frozen=True, slots=True)
class NothingLeft:
    """``next`` with nothing to lease: what is left, and how much of it others hold."""

    remaining: int
    leased: int

    def to_json(self) -> dict[str, Any]:
        return {"key": None, "remaining": self.remaining, "leased": self.leased}


@dataclass(frozen=True, slots=True)
class NothingToPeek:
    """``next --peek`` with no free item."""

    def to_json(self) -> dict[str, Any]:
        return {"key": None}


@dataclass(frozen=True, slots=True)
class Leased(Plain):
    """``next``: the item leased, its lease, and the prompt to answer; ``answer`` is the
    number of the answer asked for (failures used + 1), of ``answers_allowed``."""

    key: str
    turn: int
    tries: int
    max_tries: int
    driver: str
    lease_expires: float | None
    token: str
    reminder: str | None
    system: str
    user: str
    prompt_digest: str
    answer: int
    answers_allowed: int
    failures_used: int

    @classmethod
    def of(
        cls,
        quest: Quest,
        held: Lease,
        item: Item,
        prompt: Prompt,
        driver: str,
        reminder: str | None,
    ) -> Leased:
        return cls(
            item.key,
            item.turns + 1,
            item.tries,
            quest.max_tries,
            driver,
            held.item.lease_expires,
            held.token,
            reminder,
            prompt.system,
            prompt.user,
            prompt.digest(),
            item.tries + 1,
            quest.max_tries,
            item.tries,
        )


@dataclass(frozen=True, slots=True)
class Peeked(Plain):
    """``next --peek``: the prompt ``next`` would print now, nothing leased; ``answer``,
    ``answers_allowed`` and ``failures_used`` as ``next --json`` gives them."""

    key: str
    turn: int
    leased: bool
    system: str
    user: str
    prompt_digest: str
    answer: int
    answers_allowed: int
    failures_used: int

    @classmethod
    def of(cls, quest: Quest, item: Item, prompt: Prompt) -> Peeked:
        return cls(
            item.key,
            item.turns + 1,
            False,
            prompt.system,
            prompt.user,
            prompt.digest(),
            item.tries + 1,
            quest.max_tries,
            item.tries,
        )


@dataclass(frozen=True, slots=True)
class Released(Plain):
    """``release``: the keys whose lease was given back."""

    released: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Submitted(Plain):
    """``submit``: the recorded turn, its verdict (none for a judge error) and its feedback;
    ``answer`` is the number of the answer judged (None for a judge error, which is no
    answer), of ``answers_allowed``; ``failures_used`` is ``tries`` under its name."""

    key: str
    kind: str
    outcome: str | None
    state: str
    tries: int
    max_tries: int
    turn: int
    root_cause: str | None
    facts: tuple[Fact, ...]
    error: str | None
    feedback: str
    exported: int
    answer: int | None
    answers_allowed: int
    failures_used: int
    refused: tuple[Refused, ...]

    @classmethod
    def of(cls, quest: Quest, recorded: Recorded, exported: Export) -> Submitted:
        from reins.gate.wording import judged_answer

        item, verdict, attempt = recorded.item, recorded.verdict, recorded.attempt
        answer = judged_answer(attempt.outcome, attempt.tries_after) if attempt.judged else None
        return cls(
            item.key,
            attempt.kind.value,
            None if verdict is None else verdict.outcome.value,
            item.state.value,
            item.tries,
            quest.max_tries,
            attempt.turn,
            None if verdict is None else verdict.root_cause,
            () if verdict is None else tuple(verdict.facts),
            attempt.error,
            recorded.text,
            exported.count,
            answer,
            quest.max_tries,
            item.tries,
            Refused.all_of(exported),
        )


@dataclass(frozen=True, slots=True)
class Exported(Plain):
    """``export``: records written, to which file, and the locks refused (no attempt produced
    them)."""

    exported: int
    out: str
    refused: tuple[Refused, ...]

    @classmethod
    def of(cls, done: Export, out: str) -> Exported:
        return cls(done.count, out, Refused.all_of(done))
