"""Record: the only irreversible step. The record table decides; the store writes it at once.

A driver describes its turn with an :class:`Origin` (how the turn was made) and its result: a
verdict, a generation error or a judge error. :func:`draft` turns that into the store's
:class:`Draft` by the record table, and :func:`record` hands it to the store with the driver's
claim. Every machine turn goes through these two functions; a person's go through
:mod:`reins.turn.lane`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from reins.errors import TurnMoved
from reins.gate import Verdict, render
from reins.gate.bounds import FEEDBACK_CAP, clip_block
from reins.gate.wording import state_short
from reins.quest import Quest
from reins.store import Attempt, AttemptKind, Claim, Draft, Item, Notes, Store, Transition, Usage
from reins.turn.failures import GenerationFailure, JudgeFailure, Result
from reins.turn.table import TABLE

# A driver that did not pin the turn it read (a person's submit) re-reads and re-decides this
# often when another driver records first, before it gives up.
MOVED_RETRIES = 5


@dataclass(frozen=True, slots=True)
class Origin:
    """How a turn was made, whatever its result: policy, prompt, cost, timing, driver notes."""

    policy: str = "facts"
    prompt_digest: str | None = None
    usage: Usage = field(default_factory=Usage)
    started_at: str | None = None
    notes: Notes = field(default_factory=Notes)
    gate_digest: str | None = None


@dataclass(frozen=True, slots=True)
class Recorded:
    """A recorded turn: the item after it, the attempt appended, and the verdict (if judged)."""

    item: Item
    attempt: Attempt
    verdict: Verdict | None

    @property
    def text(self) -> str:
        """What ``submit`` prints; for a FAIL, exactly what the next prompt feeds back."""
        a = self.attempt
        if a.feedback:
            return a.feedback
        if a.kind is AttemptKind.HUMAN:
            why = f": {a.note}" if a.note else ""
            state = state_short(self.item.state, rejected=a.action == "reject",
                                dropped=a.action == "drop")  # fmt: skip
            return (
                f"{self.item.key} -> {a.action} by {a.driver} (state {state}, "
                f"round {self.item.round}){why}\n"
            )
        if a.kind is AttemptKind.JUDGE_ERROR:
            return (
                f"{self.item.key} -> judge error: {a.error}\n"
                "  The gate itself failed on this submission: it counts as no answer (no "
                "failure used) and nothing locked.\n  Fix the gate (the quest's prepare, "
                "rule or ground), then submit again.\n"
            )
        return f"{self.item.key} -> generation error: {a.error}\n"


_KINDS = {GenerationFailure: AttemptKind.GENERATION_ERROR, JudgeFailure: AttemptKind.JUDGE_ERROR}


def storable(text: str) -> str:
    """``text`` as every store, export and terminal can take it.

    A generator's output is hostile: an escaped lone surrogate in its JSON decodes to a string
    no UTF-8 store or stdout accepts, and it reaches the feedback through the facts. Such
    characters are kept as ``\\udXXX`` escapes, so the turn is recorded, printed and fed back
    alike (facts themselves are stored as ASCII JSON, losslessly).
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def feedback_text(
    key: str,
    verdict: Verdict,
    *,
    state: str,
    tries: int,
    max_tries: int,
    answer: int | None = None,
) -> str:
    """The verdict's text as it is recorded, printed and fed back: :func:`render` made
    :func:`storable`, and still within the feedback cap (escaping lengthens a text)."""
    text = render(key, verdict, state=state, tries=tries, max_tries=max_tries, answer=answer)
    return clip_block(storable(text), FEEDBACK_CAP)


def draft(
    quest: Quest,
    item: Item,
    result: Result,
    origin: Origin,
    *,
    submission: str | None = None,
) -> Draft:
    """The draft of a turn on ``item`` as it stands, decided by the record table."""
    if isinstance(result, Verdict):
        kind, verdict, error = AttemptKind.JUDGED, result, None
    else:
        kind, verdict, error = _KINDS[type(result)], None, storable(result.error)
    outcome = None if verdict is None else verdict.outcome.value
    row = TABLE.lookup(kind, outcome, item.tries, quest.max_tries)
    tries = item.tries + row.tries_delta
    feedback = ""
    if verdict is not None:
        feedback = feedback_text(
            item.key, verdict, state=row.state, tries=tries, max_tries=quest.max_tries
        )
    return Draft(
        key=item.key,
        kind=kind,
        transition=Transition(row.state, row.tries_delta),
        outcome=outcome,
        root_cause=verdict.root_cause if verdict is not None else None,
        facts=verdict.facts if verdict is not None else (),
        feedback=feedback,
        submission=None if submission is None else storable(submission),
        error=error,
        policy=origin.policy,
        prompt_digest=origin.prompt_digest,
        usage=origin.usage,
        started_at=origin.started_at,
        notes=origin.notes,
        # A judge error is the gate's too: which gate failed is worth knowing.
        gate_digest=origin.gate_digest if kind is not AttemptKind.GENERATION_ERROR else None,
    )


def record(
    store: Store,
    quest: Quest,
    item: Item,
    result: Result,
    origin: Origin,
    *,
    driver: str,
    owner: str | None = None,
    token: str | None = None,
    submission: str | None = None,
    pinned: bool = True,
) -> Recorded:
    """Record one turn of ``item``, as read by the driver, in one store transaction.

    ``pinned``: the driver holds the turn it read (a lease, a replay line) and the record is
    refused with TurnMoved if another turn landed first. Unpinned (a person's ``submit``), the
    item is read again and the turn decided anew on top of what landed. ``token``: the lease
    token ``next`` handed out; a stale one is refused (LeaseConflict).

    Raises:
        NotTodo: the item is locked. LeaseConflict: another driver holds it. TurnMoved: see
        ``pinned``.
    """
    # The nonce lets an engine that lost its connection mid-commit find this turn, not redo it.
    # (Built field by field: dataclasses.replace costs a tenth of a recorded turn.)
    n, o = origin.notes, origin
    notes = Notes(
        via=n.via, seed=n.seed, temperature=n.temperature, escalated_by=n.escalated_by,
        model=n.model, line=n.line, nonce=os.urandom(8).hex(), batch=n.batch, branch=n.branch,
        commit=n.commit, base=n.base, sandbox=n.sandbox, patch_start=n.patch_start,
        patch_end=n.patch_end, refused=n.refused, refused_to=n.refused_to,
    )  # fmt: skip
    origin = Origin(
        policy=o.policy, prompt_digest=o.prompt_digest, usage=o.usage, started_at=o.started_at,
        notes=notes, gate_digest=o.gate_digest,
    )  # fmt: skip
    for _ in range(MOVED_RETRIES):
        turn = draft(quest, item, result, origin, submission=submission)
        claim = Claim(driver=driver, turns=item.turns, owner=owner, token=token)
        try:
            after, attempt = store.record(turn, claim)
        except TurnMoved:
            if pinned:
                raise
            item = store.get(item.key)
            continue
        return Recorded(after, attempt, result if isinstance(result, Verdict) else None)
    raise TurnMoved(
        f"item {item.key!r} kept gaining turns from other drivers; nothing was recorded"
    )
