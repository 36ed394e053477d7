"""The human lane: a person resolves, reopens and re-judges locked items, and drops any item
(the last word).

Each action is a turn of kind ``human``, decided by turn.md's human table and recorded through
the Store protocol like any other turn, so the log shows who did what, when and why. Machines
never move a locked item; a person does, explicitly.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from reins.errors import ReinsError, TurnMoved
from reins.gate import Verdict
from reins.quest import Quest
from reins.store.model import Attempt, AttemptKind, Claim, Draft, Item, Notes, State
from reins.store.protocol import Store
from reins.turn.failures import JudgeFailure
from reins.turn.human import HUMAN, Action
from reins.turn.judge import judge
from reins.turn.record import MOVED_RETRIES, Recorded, feedback_text, storable


@dataclass(frozen=True, slots=True)
class Rejudged:
    """A locked item, the attempt that locked it, and what the current gate says now."""

    item: Item
    locking: Attempt
    now: Verdict | JudgeFailure

    @property
    def changed(self) -> bool:
        """Whether the verdict differs from the locking one (outcome or root cause).

        A judge error is never a change to apply: a gate that fails cannot re-decide.
        """
        if isinstance(self.now, JudgeFailure):
            return False
        before = (self.locking.outcome, self.locking.root_cause)
        return before != (self.now.outcome.value, self.now.root_cause)


def resolve(store: Store, quest: Quest, key: str, *, accept: bool, note: str, by: str) -> Recorded:
    """Settle a REVIEW item: PASS when ``accept``, else DONE. Raises IllegalTransition for an
    item that is not REVIEW."""
    return act(store, quest, key, Action.ACCEPT if accept else Action.REJECT, note=note, by=by)


def reopen(store: Store, quest: Quest, key: str, *, reason: str, by: str) -> Recorded:
    """Return a locked item to TODO in a new round with a fresh try budget."""
    return act(store, quest, key, Action.REOPEN, note=reason, by=by)


def drop(store: Store, quest: Quest, key: str, *, note: str, by: str) -> Recorded:
    """Retire item ``key`` for good, to do or locked: it locks DONE with the person's ``note``
    and no try counted, and no machine works it again (a person may reopen it).

    Raises:
        NotFound: no such item. LeaseConflict: a run holds its live lease (its turn is under
            way), or another person claims it.
    """
    return act(store, quest, key, Action.DROP, note=note, by=by)


def rejudge(store: Store, quest: Quest, items: Iterable[Item]) -> Iterator[Rejudged]:
    """Judge each locked item's locking submission with the current gate (nothing recorded);
    a dropped item is retired for good, and not judged again."""
    for listed in items:
        if not listed.state.terminal:
            continue
        item, log = store.snapshot(listed.key)
        if log and log[-1].action == Action.DROP:
            continue
        locking = _locking(log)
        if locking is None or locking.submission is None:
            continue  # locked without a submission to judge (a short verdict of nothing)
        verdict, _ = judge(quest, item, locking.submission)
        yield Rejudged(item, locking, verdict)


def apply_rejudged(
    store: Store, quest: Quest, found: Rejudged, *, by: str, note: str = ""
) -> Recorded:
    """Record a re-judged verdict as a person's action: PASS/REVIEW/SKIPPED/BLOCKED lock as
    such, FAIL reopens the item for a new round."""
    if isinstance(found.now, JudgeFailure):
        raise ReinsError(f"item {found.item.key!r}: the gate failed on it ({found.now.error})")
    return act(
        store,
        quest,
        found.item.key,
        Action.REJUDGE,
        note=note,
        by=by,
        verdict=found.now,
        submission=found.locking.submission,
        expected_turns=found.item.turns,
    )


def locking_answer(item: Item) -> int:
    """The number of the answer that locked ``item``, which a re-judge judges again: a DONE
    item's last FAIL is counted in its tries, a pass or a review is the answer after them."""
    return item.tries if item.state is State.DONE else item.tries + 1


def act(
    store: Store,
    quest: Quest,
    key: str,
    action: Action,
    *,
    note: str,
    by: str,
    verdict: Verdict | None = None,
    submission: str | None = None,
    expected_turns: int | None = None,
) -> Recorded:
    """Record ``action`` on item ``key`` by the person ``by``, as turn.md's human table says.

    Raises:
        NotFound: no such item. IllegalTransition: the action does not apply to the item's
            state. TurnMoved: ``expected_turns`` was given and the item moved since.
    """
    nonce = os.urandom(8).hex()
    for _ in range(MOVED_RETRIES):
        item = store.get(key)
        if expected_turns is not None and item.turns != expected_turns:
            raise TurnMoved(f"item {key!r} moved since it was re-judged; run rejudge again")
        outcome = None if verdict is None else verdict.outcome.value
        row = HUMAN.lookup(action, item.state, outcome)
        feedback = ""
        if verdict is not None:
            tries = 0 if row.new_round else item.tries
            feedback = feedback_text(
                key, verdict, state=row.state, tries=tries, max_tries=quest.max_tries,
                answer=locking_answer(item),
            )  # fmt: skip
        draft = Draft(
            key=key,
            kind=AttemptKind.HUMAN,
            transition=row.transition,
            outcome=outcome,
            root_cause=None if verdict is None else verdict.root_cause,
            facts=() if verdict is None else verdict.facts,
            feedback=feedback,
            submission=submission,
            notes=Notes(via="human", nonce=nonce),
            gate_digest=None if verdict is None else quest.gate_digest,
            action=action.value,
            note=storable(note) if note else None,
        )
        try:
            after, attempt = store.record(draft, Claim(driver=by, turns=item.turns))
        except TurnMoved:
            if expected_turns is not None:
                raise
            continue  # another turn landed between the read and the write: decide again
        return Recorded(after, attempt, verdict)
    raise TurnMoved(f"item {key!r} kept moving; nothing was recorded")


def _locking(log: list[Attempt]) -> Attempt | None:
    """The attempt whose submission locked the item: the last judged (or re-judged) one."""
    for attempt in reversed(log):
        if attempt.submission is not None and attempt.kind in (
            AttemptKind.JUDGED,
            AttemptKind.HUMAN,
        ):
            return attempt
    return None
