"""The ``--json`` of the commands that list and move items: ``items``, ``review``, ``status
--todo``, ``log``, ``rules``, and a person's ``resolve``, ``reopen`` and ``rejudge``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reins.cli.shapes import Plain, Refused
from reins.values import Fact

if TYPE_CHECKING:
    from reins.gate import CatalogEntry
    from reins.store.model import Attempt, Item
    from reins.turn.lane import Rejudged as Found
    from reins.turn.raised import Raised
    from reins.turn.record import Recorded
    from reins.turn.review import Source


@dataclass(frozen=True, slots=True)
class ItemRow(Plain):
    """One item as the lists show it: ``failures_used`` is ``tries`` under its name,
    ``answers_allowed`` the quest's ``max_tries`` (None without a quest)."""

    key: str
    state: str
    tries: int
    turns: int
    round: int
    root_cause: str | None
    leased_to: str | None
    locked_at: str | None
    failures_used: int
    answers_allowed: int | None

    @classmethod
    def of(cls, item: Item, allowed: int | None = None) -> ItemRow:
        return cls(*_row(item, allowed))


_Row = tuple[str, str, int, int, int, str | None, str | None, str | None, int, int | None]


def _row(item: Item, allowed: int | None) -> _Row:
    return (
        item.key,
        item.state.value,
        item.tries,
        item.turns,
        item.round,
        item.root_cause,
        item.lease_owner,
        item.locked_at,
        item.tries,
        allowed,
    )


@dataclass(frozen=True, slots=True)
class ReviewRow(ItemRow):
    """A REVIEW item with the facts of its last attempt, what was submitted, and the item's
    text (``text_rendered``: as the quest renders it; else its payload as JSON)."""

    facts: tuple[Fact, ...]
    submission: str | None
    text: str
    text_rendered: bool

    @classmethod
    def of_last(
        cls, item: Item, last: Attempt | None, shown: Source, allowed: int | None = None
    ) -> ReviewRow:
        facts = () if last is None else last.facts
        submission = None if last is None else last.submission
        return cls(*_row(item, allowed), facts, submission, shown.text, shown.rendered)


@dataclass(frozen=True, slots=True)
class Acted(ItemRow):
    """An item after a person's action, and the action recorded."""

    action: str | None
    by: str
    note: str | None
    turn: int

    @classmethod
    def of_recorded(cls, r: Recorded, allowed: int | None = None) -> Acted:
        a = r.attempt
        return cls(*_row(r.item, allowed), a.action, a.driver, a.note, a.turn)


@dataclass(frozen=True, slots=True)
class ItemsPage(Plain):
    """A page of items and the cursor of the next one (None on the last)."""

    items: tuple[ItemRow, ...]
    next: int | None


@dataclass(frozen=True, slots=True)
class BoardRow(Plain):
    """A line of ``status --todo``: ``leased_to`` only while the lease is live;
    ``failures_used`` is ``tries`` under its name, ``answers_allowed`` the quest's
    ``max_tries`` (None without a quest), ``next_answer`` the number of the answer a TODO item
    takes next (the text's "answer 2 of 3 next"; None for a locked item)."""

    key: str
    state: str
    tries: int
    leased_to: str | None
    failures_used: int
    answers_allowed: int | None
    next_answer: int | None

    @classmethod
    def of(cls, item: Item, live: bool, allowed: int | None = None) -> BoardRow:
        owner = item.lease_owner if live else None
        upcoming = None if item.state.terminal else item.tries + 1
        return cls(item.key, item.state.value, item.tries, owner, item.tries, allowed, upcoming)


@dataclass(frozen=True, slots=True)
class AttemptView(Plain):
    """One attempt in ``log``."""

    turn: int
    kind: str
    driver: str
    outcome: str | None
    root_cause: str | None
    facts: tuple[Fact, ...]
    error: str | None
    state_after: str
    tries_after: int
    submission: str | None
    feedback: str
    policy: str
    backend: str | None
    prompt_digest: str | None
    input_tokens: int | None
    output_tokens: int | None
    cost: float | None
    latency: float | None
    started_at: str | None
    recorded_at: str
    round: int
    action: str | None
    note: str | None
    gate_digest: str | None
    cache_read_tokens: int | None
    cache_write_tokens: int | None
    batch: bool
    list_cost: float | None
    answer: int | None
    branch: str | None
    commit: str | None
    sandbox: str | None
    refused: int | None
    refused_to: str | None

    @classmethod
    def of(cls, a: Attempt) -> AttemptView:
        """``answer``: the number of the answer a judged turn judged (None for any other). A
        coding agent's turn says where its work is (``branch``, ``commit``), how it was
        confined (``sandbox``) and the connections its proxy ``refused`` (``refused_to``:
        where to, as the agent named them)."""
        from reins.gate.wording import judged_answer

        u = a.usage
        return cls(
            a.turn,
            a.kind.value,
            a.driver,
            a.outcome,
            a.root_cause,
            a.facts,
            a.error,
            a.state_after.value,
            a.tries_after,
            a.submission,
            a.feedback,
            a.policy,
            u.backend,
            a.prompt_digest,
            u.input_tokens,
            u.output_tokens,
            u.cost,
            u.latency,
            a.started_at,
            a.recorded_at,
            a.round,
            a.action,
            a.note,
            a.gate_digest,
            u.cache_read_tokens,
            u.cache_write_tokens,
            u.batch,
            u.list_cost,
            judged_answer(a.outcome, a.tries_after) if a.judged else None,
            a.notes.branch,
            a.notes.commit,
            a.notes.sandbox,
            a.notes.refused,
            a.notes.refused_to,
        )


@dataclass(frozen=True, slots=True)
class ItemLog(Plain):
    """``log KEY``: the item, who proposed it (None: the quest seeded it), every attempt;
    ``failures_used`` is ``tries`` under its name, ``answers_allowed`` the quest's
    ``max_tries`` (None without a quest)."""

    key: str
    state: str
    tries: int
    round: int
    payload: object
    proposed_by: str | None
    attempts: tuple[AttemptView, ...]
    failures_used: int
    answers_allowed: int | None

    @classmethod
    def of(
        cls, item: Item, log: list[Attempt], proposed_by: str | None, allowed: int | None = None
    ) -> ItemLog:
        views = tuple(AttemptView.of(a) for a in log)
        return cls(
            *(item.key, item.state.value, item.tries, item.round, item.payload, proposed_by),
            *(views, item.tries, allowed),
        )


@dataclass(frozen=True, slots=True)
class RuleView(Plain):
    """One fact a quest can raise: an entry of the gate's catalog (``check`` and ``parameters``
    for gate.md's rules), or one raised beside it by the quest's prepare or by reins itself
    (``raised_by``), with the coaching the next prompt carries after a FAIL of it."""

    id: str
    level: str
    description: str
    supersedes: tuple[str, ...]
    needs: tuple[str, ...]
    check: str | None
    parameters: str | None
    raised_by: str
    coaching: str | None

    @classmethod
    def of(cls, e: CatalogEntry, coaching: str | None = None) -> RuleView:
        return cls(
            e.id,
            e.level.value,
            e.description,
            tuple(e.supersedes),
            tuple(e.needs),
            e.check or None,
            e.parameters or None,
            "gate",
            coaching or None,
        )

    @classmethod
    def beside(cls, r: Raised) -> RuleView:
        return cls(r.id, r.level.value, r.description, (), (), None, None, r.by, r.coaching or None)


@dataclass(frozen=True, slots=True)
class Change:
    """A verdict the current gate changes (or could not judge); ``new_state`` once applied."""

    key: str
    state: str
    was: str | None
    was_root_cause: str | None
    now: str
    root_cause: str | None
    error: str | None
    new_state: str | None = None

    @classmethod
    def of(cls, found: Found) -> Change:
        from reins.turn.failures import JudgeFailure

        item, now = found.item, found.now
        was = (item.key, item.state.value, found.locking.outcome, found.locking.root_cause)
        if isinstance(now, JudgeFailure):
            return cls(*was, "judge error", None, now.error)
        return cls(*was, now.outcome.value, now.root_cause, None)

    @property
    def applied(self) -> bool:
        return self.new_state is not None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "key": self.key,
            "state": self.state,
            "was": self.was,
            "was_root_cause": self.was_root_cause,
            "now": self.now,
            "root_cause": self.root_cause,
            "error": self.error,
            "applied": self.applied,
        }
        if self.applied:
            data["new_state"] = self.new_state
        return data


@dataclass(frozen=True, slots=True)
class Rejudged(Plain):
    """``rejudge``: what changed, how many changes were recorded, records exported, and the
    locks the export refused (no attempt produced them)."""

    changes: tuple[Change, ...]
    applied: int
    exported: int
    refused: tuple[Refused, ...]
