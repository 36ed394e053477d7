"""The ratchet and the claim: what every engine checks before it writes a turn.

SQLite reads the item inside its write transaction, calls :func:`settle` (:func:`admit`, then
:func:`apply`), and writes what it returns. PostgreSQL checks and writes the turn in one
server-side statement that follows the same rules (``reins_turn``, schema v5) and hands back
the item as it found it: the engine builds the result with :func:`apply`, and on a refusal
asks :func:`refused` why, so the error and its words are the same on both. Keeping the checks
here means there is one record path, whatever the engine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from reins.errors import IllegalTransition, LeaseConflict, LedgerError, NotTodo, TurnMoved
from reins.store.codec import now_iso
from reins.store.model import Attempt, AttemptKind, Claim, Draft, Item, State

# Refusals after which the turn may already be stored: by this very draft, whose commit landed
# while its connection died. An engine that sees one looks for the draft's nonce first. A lease
# conflict is one too: once that turn landed, another owner may have leased the item.
RETRYABLE = (TurnMoved, NotTodo, LeaseConflict, IllegalTransition)

# A person's actions that settle a REVIEW item (turn.md's human table names them).
RESOLVING = frozenset({"accept", "reject"})
# The one action of a person's that applies to a TODO item too: it retires the item for good.
DROP = "drop"


@dataclass(frozen=True, slots=True)
class Turn:
    """What a turn writes: the item after it and the attempt to append; or, when ``stored``,
    the item as it is and the draft's own attempt, recorded already (write nothing)."""

    item: Item
    attempt: Attempt
    stored: bool = False


def settle(
    item: Item, draft: Draft, claim: Claim, now: float, recorded: Callable[[], Attempt | None]
) -> Turn:
    """:func:`admit` the turn and :func:`apply` it; or, when the item is past it, find the
    draft's own attempt, whose commit landed while its answer was lost (``recorded`` reads the
    attempt at the claim's next turn, in the transaction that holds the item).

    Raises:
        what :func:`admit` raises, when the turn is not the draft's own.
    """
    try:
        admit(item, draft, claim, now)
    except RETRYABLE:
        stored = recorded()
        if stored is not None and same_turn(stored, draft, claim):
            return Turn(item, stored, stored=True)
        raise
    after, attempt = apply(item, draft, claim, now_iso())
    return Turn(after, attempt)


def refused(
    item: Item, draft: Draft, claim: Claim, now: float, recorded: Callable[[], Attempt | None]
) -> Attempt:
    """Why an engine that checks a turn itself (PostgreSQL's ``reins_turn``) refused it, on
    ``item`` as the engine found it: the error :func:`admit` raises, the very words of every
    engine; or, when the turn is the draft's own, recorded already, its attempt (as
    :func:`settle` finds it).

    Raises:
        what :func:`admit` raises. LedgerError: :func:`admit` finds nothing to refuse (the
            engine's check and this one disagree); nothing was recorded.
    """
    try:
        admit(item, draft, claim, now)
    except RETRYABLE:
        stored = recorded()
        if stored is not None and same_turn(stored, draft, claim):
            return stored
        raise
    raise LedgerError(
        f"item {item.key!r}: the ledger refused the turn but reins finds no reason to (the "
        "ledger's server-side checks and this reins disagree); nothing was recorded"
    )


def admit(item: Item, draft: Draft, claim: Claim, now: float) -> None:
    """Refuse a turn the ratchet or the claim does not allow.

    Raises:
        NotTodo: a machine's turn on a terminal item. IllegalTransition: a person's action that
            does not fit the item (resolving what is not REVIEW, reopening what is TODO: only a
            drop acts on a TODO item), or
            tries going down outside a new round. LeaseConflict: another owner holds a live
            lease, or the claim's lease token is not the item's. TurnMoved: the item gained a
            turn since the claim's read.
    """
    human = draft.kind is AttemptKind.HUMAN
    if item.state.terminal and not human:
        raise NotTodo(
            f"item {item.key!r} is {item.state}, not TODO: terminal items are locked for good"
        )
    if human and not item.state.terminal and draft.action != DROP:
        raise IllegalTransition(
            f"item {item.key!r} is TODO: a person's action applies to a locked item"
        )
    if human and draft.action in RESOLVING and item.state is not State.REVIEW:
        raise IllegalTransition(
            f"item {item.key!r} is {item.state}, not REVIEW: only a REVIEW item is resolved"
        )
    live = item.lease_owner is not None and (item.lease_expires or 0) > now
    if live and item.lease_owner != claim.holder and human and not item.state.terminal:
        raise LeaseConflict(
            f"item {item.key!r} is leased to {item.lease_owner!r} for another "
            f"{(item.lease_expires or 0) - now:.0f}s: its turn is under way. Drop it once the "
            "turn is recorded, or stop that run first"
        )
    if live and item.lease_owner != claim.holder and human:
        # On a locked item a lease is a person's claim (reins.store.people).
        raise LeaseConflict(
            f"item {item.key!r} is claimed by {item.lease_owner!r} for another "
            f"{((item.lease_expires or 0) - now) / 60:.0f} min: ask them to release it, or "
            "wait for the claim to run out"
        )
    if live and item.lease_owner != claim.holder:
        raise LeaseConflict(
            f"item {item.key!r} is leased to {item.lease_owner!r} for another "
            f"{(item.lease_expires or 0) - now:.0f}s; take another item with `reins next`"
        )
    if claim.token is not None and live and item.lease_token != claim.token:
        raise LeaseConflict(
            f"item {item.key!r}: lease token {claim.token!r} is stale — another `reins next` "
            f"under driver {claim.holder!r} took the item since. Give each agent its own "
            "REINS_DRIVER, and submit with the token the latest `reins next` printed"
        )
    if item.turns != claim.turns:
        raise TurnMoved(
            f"item {item.key!r} gained a turn since it was read (turn {item.turns}, "
            f"expected {claim.turns}); nothing was recorded"
        )
    if draft.transition.tries_delta < 0:
        raise IllegalTransition(f"item {item.key!r}: tries never go down")


def apply(item: Item, draft: Draft, claim: Claim, stamp: str) -> tuple[Item, Attempt]:
    """The item after the turn and the attempt to append, stamped at ``stamp``.

    A lease survives a turn that leaves the item TODO (the holder goes on); a lock ends it, and
    so does a person's action. A new round starts with no tries used. An item a person moves
    is exported again (its export mark is cleared), and so is an item that locks while its
    withdrawal is being written (the only TODO items with a mark: see
    :mod:`reins.store.withdrawal`).
    """
    state = draft.transition.state
    new_round = draft.transition.new_round
    tries = 0 if new_round else item.tries + draft.transition.tries_delta
    round_ = item.round + 1 if new_round else item.round
    human = draft.kind is AttemptKind.HUMAN
    keep_lease = not state.terminal and not human and item.lease_owner == claim.holder
    judged = draft.kind is AttemptKind.JUDGED or (human and draft.outcome is not None)
    attempt = Attempt(
        key=item.key,
        turn=item.turns + 1,
        kind=draft.kind,
        driver=claim.driver,
        state_after=state,
        tries_after=tries,
        recorded_at=stamp,
        outcome=draft.outcome,
        root_cause=draft.root_cause,
        facts=draft.facts,
        feedback=draft.feedback,
        submission=draft.submission,
        error=draft.error,
        policy=draft.policy,
        prompt_digest=draft.prompt_digest,
        usage=draft.usage,
        started_at=draft.started_at,
        notes=draft.notes,
        gate_digest=draft.gate_digest,
        action=draft.action,
        note=draft.note,
        round=round_,
    )
    after = Item(
        key=item.key,
        state=state,
        tries=tries,
        payload=item.payload,
        turns=item.turns + 1,
        created_at=item.created_at,
        updated_at=stamp,
        locked_at=stamp if state.terminal else None,
        lease_owner=item.lease_owner if keep_lease else None,
        lease_expires=item.lease_expires if keep_lease else None,
        exported=item.exported and not human and not state.terminal,
        root_cause=draft.root_cause if judged else item.root_cause,
        round=round_,
        lease_token=item.lease_token if keep_lease else None,
        gate_digest=draft.gate_digest if judged else item.gate_digest,
    )
    return after, attempt


def same_turn(stored: Attempt, draft: Draft, claim: Claim) -> bool:
    """Whether ``stored`` is this very draft, recorded by a try whose commit went unanswered."""
    return (
        draft.notes.nonce is not None
        and stored.notes.nonce == draft.notes.nonce
        and stored.turn == claim.turns + 1
        and stored.driver == claim.driver
    )
