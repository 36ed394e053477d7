"""The ratchet and the claim: what every engine checks before it writes a turn.

Both engines read the item inside the write transaction (SQLite's write lock, PostgreSQL's
``FOR UPDATE``), call :func:`admit`, and write what :func:`apply` returns. Keeping the checks
here means there is one record path, whatever the engine.
"""

from __future__ import annotations

from reins.errors import IllegalTransition, LeaseConflict, NotTodo, TurnMoved
from reins.store.model import Attempt, Claim, Draft, Item

# Refusals after which the turn may already be stored: by this very draft, whose commit landed
# while its connection died. An engine that sees one looks for the draft's nonce first. A lease
# conflict is one too: once that turn landed, another owner may have leased the item.
RETRYABLE = (TurnMoved, NotTodo, LeaseConflict)


def admit(item: Item, draft: Draft, claim: Claim, now: float) -> None:
    """Refuse a turn the ratchet or the claim does not allow.

    Raises:
        NotTodo: the item is terminal. LeaseConflict: another owner holds a live lease.
        TurnMoved: the item gained a turn since the claim's read. IllegalTransition: tries
        would go down.
    """
    if item.state.terminal:
        raise NotTodo(
            f"item {item.key!r} is {item.state}, not TODO: terminal items are locked for good"
        )
    if item.lease_owner not in (None, claim.holder) and (item.lease_expires or 0) > now:
        raise LeaseConflict(
            f"item {item.key!r} is leased to {item.lease_owner!r} for another "
            f"{(item.lease_expires or 0) - now:.0f}s; take another item with `reins next`"
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

    A lease survives a turn that leaves the item TODO (the holder goes on); a lock ends it.
    """
    state = draft.transition.state
    tries = item.tries + draft.transition.tries_delta
    keep_lease = not state.terminal and item.lease_owner == claim.holder
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
        exported=item.exported,
        root_cause=draft.root_cause if attempt.judged else item.root_cause,
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
