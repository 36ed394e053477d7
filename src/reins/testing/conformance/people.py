"""The reviewer's desk: ``reserve`` (a person's claim on a REVIEW item, which others see and
which keeps their decisions off it), ``release`` of a claim, ``decisions`` (a person's actions,
newest first, a page at a time) and ``reviewers`` (what each person did)."""

from __future__ import annotations

import pytest

from reins.errors import IllegalTransition, LeaseConflict, NotFound
from reins.store.model import Attempt, AttemptKind, Claim, State
from reins.store.protocol import Store
from reins.testing.conformance._kit import (
    T0,
    TTL,
    assert_sound,
    everything,
    human,
    lock,
    opened,
    reopen,
    turn,
    world,
)
from reins.testing.harness import StoreHarness

__all__ = [
    "test_a_claim_is_renewed_released_and_runs_out",
    "test_a_person_claims_a_review_item_and_others_cannot_decide_it",
    "test_an_undo_takes_a_decision_back_to_review_in_its_round",
    "test_decisions_are_read_newest_first_a_page_at_a_time",
    "test_each_reviewer_is_counted",
    "test_only_an_item_waiting_in_review_is_claimed",
]


def _decide(store: Store, key: str, action: str, by: str, *, now: float = T0) -> None:
    item = store.get(key)
    if action == "reopen":
        d = reopen(key, note=f"{action} by {by}")
    else:
        state = State.PASS if action == "accept" else State.DONE
        d = human(key, state, action, note=f"{action} by {by}")
    store.record(d, Claim(by, item.turns), now=now)


def test_a_person_claims_a_review_item_and_others_cannot_decide_it(
    store_harness: StoreHarness,
) -> None:
    with opened(store_harness, keys=["a", "b", "c"]) as store:
        lock(store, "a", "REVIEW")
        claimed = store.reserve("a", "rita", ttl=TTL, now=T0)
        assert (claimed.key, claimed.state, claimed.lease_owner) == ("a", State.REVIEW, "rita")
        assert claimed.lease_expires == T0 + TTL
        assert store.get("a").lease_owner == "rita"  # every reader sees who holds it
        assert store.stats(now=T0).leased == 0  # a claim is no lease of work
        assert store.stats(now=T0).claimed == 1  # but a claim, counted as one
        with pytest.raises(LeaseConflict, match="claimed by 'rita'"):
            store.reserve("a", "sam", ttl=TTL, now=T0 + 1)
        before = world(store)
        with pytest.raises(LeaseConflict, match="claimed by 'rita'"):
            _decide(store, "a", "accept", "sam", now=T0 + 1)
        assert world(store) == before  # nothing was written
        # No machine's lease takes it: the loop leases the TODO items only.
        taken = [store.lease(o, ttl=TTL, now=T0) for o in ("l1", "l2", "l3")]
        assert [None if t is None else t.item.key for t in taken] == ["b", "c", None]
        assert_sound(store)
        _decide(store, "a", "accept", "rita", now=T0 + 2)  # the holder decides; the claim ends
        after = store.get("a")
        assert (after.state, after.lease_owner, after.lease_expires) == (State.PASS, None, None)
        assert_sound(store)


def test_an_undo_takes_a_decision_back_to_review_in_its_round(
    store_harness: StoreHarness,
) -> None:
    """A person's ``undo`` of their accept or reject: the item is REVIEW again, in the same
    round with the same tries, waiting for a decision; the log keeps the one undone, and the
    lock the undo leaves is one an attempt produced (``check`` finds nothing)."""
    with opened(store_harness, keys=["a", "b"]) as store:
        for key, action in (("a", "accept"), ("b", "reject")):
            before = lock(store, key, "REVIEW")
            _decide(store, key, action, "rita", now=T0)
            undo = human(key, State.REVIEW, "undo", note=f"undo of the {action}")
            item, attempt = store.record(undo, Claim("rita", store.get(key).turns), now=T0 + 1)
            assert (item.state, item.round, item.tries) == (State.REVIEW, 1, before.tries)
            assert (attempt.action, attempt.driver, attempt.round) == ("undo", "rita", 1)
            assert [a.action for a in store.snapshot(key)[1]] == [None, action, "undo"]
        assert store.stats(now=T0 + 1).counts[State.REVIEW] == 2
        assert_sound(store)
        # Waiting again, it is claimed and decided as any REVIEW item.
        store.reserve("a", "sam", ttl=TTL, now=T0 + 2)
        assert (store.stats(now=T0 + 2).claimed, store.stats(now=T0 + 2).leased) == (1, 0)
        _decide(store, "a", "reject", "sam", now=T0 + 3)
        assert store.get("a").state is State.DONE
        assert_sound(store)


def test_a_claim_is_renewed_released_and_runs_out(store_harness: StoreHarness) -> None:
    with opened(store_harness) as store:
        lock(store, "a", "REVIEW")
        store.reserve("a", "rita", ttl=TTL, now=T0)
        assert store.reserve("a", "rita", ttl=TTL, now=T0 + 10).lease_expires == T0 + 10 + TTL
        assert not store.release("a", "sam")  # only its holder gives it back
        assert store.release("a", "rita")
        assert store.get("a").lease_owner is None
        assert store.reserve("a", "sam", ttl=TTL, now=T0 + 20).lease_owner == "sam"
        # A claim that ran out keeps nobody away: another person claims, or decides.
        later = T0 + 20 + TTL + 1
        assert store.reserve("a", "rita", ttl=TTL, now=later).lease_owner == "rita"
        _decide(store, "a", "reject", "sam", now=later + TTL + 1)
        assert store.get("a").state is State.DONE
        assert_sound(store)


def test_only_an_item_waiting_in_review_is_claimed(store_harness: StoreHarness) -> None:
    with opened(store_harness) as store:
        lock(store, "b", "PASS")
        before = world(store)
        with pytest.raises(IllegalTransition, match="'a' is TODO, not REVIEW"):
            store.reserve("a", "rita", ttl=TTL, now=T0)
        with pytest.raises(IllegalTransition, match="'b' is PASS, not REVIEW"):
            store.reserve("b", "rita", ttl=TTL, now=T0)
        with pytest.raises(NotFound):
            store.reserve("zz", "rita", ttl=TTL, now=T0)
        assert world(store) == before
        assert_sound(store)


def test_decisions_are_read_newest_first_a_page_at_a_time(store_harness: StoreHarness) -> None:
    with opened(store_harness, keys=["a", "b", "c", "d"]) as store:
        assert store.decisions().attempts == ()
        for key in ("a", "b", "c"):
            lock(store, key, "REVIEW")
        turn(store, "d", "FAIL")  # a machine's turn: no decision
        _decide(store, "a", "accept", "rita")
        _decide(store, "b", "reject", "sam")
        _decide(store, "a", "reopen", "rita")
        _decide(store, "c", "accept", "sam")
        want = [("c", "accept", "sam"), ("a", "reopen", "rita"), ("b", "reject", "sam")]
        want.append(("a", "accept", "rita"))
        seen: list[Attempt] = []
        page = store.decisions(limit=3)
        assert len(page.attempts) == 3 and page.next is not None
        seen += page.attempts
        page = store.decisions(before=page.next, limit=3)
        assert page.next is None
        seen += page.attempts
        assert [(a.key, a.action, a.driver) for a in seen] == want
        assert all(a.kind is AttemptKind.HUMAN for a in seen)
        assert seen[0].note == "accept by sam" and seen[0].state_after is State.PASS
        assert store.decisions(limit=10).attempts == tuple(seen)
        assert_sound(store)


def test_each_reviewer_is_counted(store_harness: StoreHarness) -> None:
    with opened(store_harness, keys=["a", "b", "c", "d"]) as store:
        assert store.reviewers() == []
        for key in ("a", "b", "c", "d"):
            lock(store, key, "REVIEW")
        _decide(store, "a", "accept", "rita")
        _decide(store, "b", "reject", "rita")
        _decide(store, "c", "accept", "sam")
        _decide(store, "d", "accept", "rita")
        rita, sam = store.reviewers()  # the busiest first
        assert (rita.name, rita.actions, rita.total, rita.since) == (
            "rita",
            {"accept": 2, "reject": 1},
            3,
            3,  # "" counts every one
        )
        assert (sam.name, sam.actions, sam.since) == ("sam", {"accept": 1}, 1)
        assert rita.last == store.snapshot("d")[1][-1].recorded_at
        # Those recorded at or after a time, as a scan of the log counts them.
        actions = [a for _, log in everything(store) for a in log if a.kind is AttemptKind.HUMAN]
        for since in [*sorted({a.recorded_at for a in actions}), "9999"]:
            counted = {r.name: r.since for r in store.reviewers(since=since)}
            for name in ("rita", "sam"):
                mine = [a for a in actions if a.driver == name and a.recorded_at >= since]
                assert counted[name] == len(mine), (since, name)
