"""Schema v3 beside the human lane: the judge's own errors, lease tokens, gate digests, copies.

A judge error (the gate itself failed) uses no try and locks nothing. Every lease hands out a
fresh token; a record with a stale one is refused while the lease is live. Items are counted by
the digest of the gate that last judged them, and a copy keeps rounds, actions and gates.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from reins.errors import LeaseConflict
from reins.store.model import (
    AttemptKind,
    Claim,
    Draft,
    Notes,
    State,
    Transition,
)
from reins.store.walk import copy
from reins.testing.conformance._kit import (
    ERROR,
    T0,
    TTL,
    assert_sound,
    everything,
    make_draft,
    opened,
    turn,
    world,
)
from reins.testing.conformance.human import _lease, act, human, judged, lock, reopen
from reins.testing.harness import StoreHarness


def test_a_judge_error_uses_no_try_and_locks_nothing(store_harness: StoreHarness) -> None:
    with opened(store_harness) as store:
        turn(store, "a", "FAIL")
        lease = _lease(store, "ann")
        assert (lease.item.key, lease.nexts_since_submit) == ("a", 1)
        for n in range(3):
            d = Draft(
                key="a",
                kind=AttemptKind.JUDGE_ERROR,
                transition=Transition(State.TODO, 0),
                error=f"rule not-bad raised KeyError: 'x' ({n})",
                submission="an answer",
                gate_digest="g1",
                notes=Notes(via="loop"),
            )
            claim = Claim("loop", 1 + n, owner="ann", token=lease.token)
            after, attempt = store.record(d, claim, now=T0 + 1)
            assert (after.state, after.tries, after.turns, after.round) == (
                State.TODO,
                1,
                2 + n,
                1,
            )
            assert (attempt.kind, attempt.error, attempt.gate_digest) == (
                AttemptKind.JUDGE_ERROR,
                d.error,
                "g1",
            )
            assert not attempt.judged and attempt.tries_after == 1
            assert (after.lease_owner, after.lease_token) == ("ann", lease.token)  # goes on
            assert after.root_cause == "not-bad" and after.gate_digest is None  # no verdict
            assert_sound(store)
        stats = store.stats(now=T0)
        assert stats.kinds == {"judged": 1, "judge_error": 3}
        assert (stats.tries, stats.remaining, stats.gates) == ({0: 2, 1: 1}, 3, {})
        assert stats.rules == {"not-bad": (1, 1)}
        again = _lease(store, "ann", T0 + 2)  # a judge error is no submission
        assert (again.item.key, again.renewed, again.nexts_since_submit) == ("a", True, 2)
        item, _ = turn(store, "a", "PASS", driver="loop", owner="ann", now=T0 + 3)
        assert item.state is State.PASS and store.stats(now=T0).kinds["judged"] == 2
        assert_sound(store)


# -- lease tokens -----------------------------------------------------------------------------


def test_every_lease_hands_out_a_new_token_and_a_stale_one_is_refused(
    store_harness: StoreHarness,
) -> None:
    location = store_harness.create()
    with opened(store_harness, location) as one, opened(store_harness, location, keys=()) as two:
        first = _lease(one, "ann")
        assert first.token and first.item.lease_token == first.token
        assert two.get("a").lease_token == first.token
        # A second agent under the same driver name, in another process, renews the lease.
        second = _lease(two, "ann", T0 + 1)
        assert second.renewed and second.item.key == "a" and second.token != first.token
        assert one.get("a").lease_token == second.token == second.item.lease_token
        before = world(one, T0 + 2)
        for claim in (
            Claim("ann", 0, token=first.token),
            Claim("loop", 0, owner="ann", token=first.token),
            Claim("ann", 0, token="not-a-token"),
        ):
            with pytest.raises(LeaseConflict, match="stale") as caught:
                one.record(make_draft(one.get("a"), "FAIL"), claim, now=T0 + 2)
            assert type(caught.value) is LeaseConflict
            assert world(one, T0 + 2) == before
        assert one.heartbeat("a", "ann", ttl=TTL, now=T0 + 3)
        assert two.get("a").lease_token == second.token  # a heartbeat keeps the token
        item, _ = one.record(
            make_draft(one.get("a"), "FAIL"), Claim("ann", 0, token=second.token), now=T0 + 4
        )
        assert (item.lease_owner, item.lease_token) == ("ann", second.token)  # still ann's
        assert two.get("a").lease_token == second.token
        item, _ = one.record(
            make_draft(item, "PASS"), Claim("ann", 1, token=second.token), now=T0 + 5
        )
        assert (item.lease_owner, item.lease_token) == (None, None)  # a lock ends both
        assert two.get("a") == item
        bob, cid = _lease(one, "bob", T0 + 5), _lease(two, "cid", T0 + 5)
        assert len({first.token, second.token, bob.token, cid.token}) == 4
        assert one.release(bob.item.key, "bob")
        assert one.get(bob.item.key).lease_token is None
        assert two.release_all("cid") == 1
        assert one.get(cid.item.key).lease_token is None
        assert_sound(one)


# -- gate digests ---------------------------------------------------------------------------


def test_items_are_counted_by_the_gate_that_last_judged_them(store_harness: StoreHarness) -> None:
    with opened(store_harness, keys="abcd") as store:
        judged(store, "a", "FAIL", "g1")
        assert store.stats(now=T0).gates == {"g1": 1}
        judged(store, "b", "PASS", "g2")
        assert store.stats(now=T0).gates == {"g1": 1, "g2": 1}
        judged(store, "a", "FAIL", "g1")  # the same gate again: one item, counted once
        turn(store, "a", ERROR)  # a generation error judges nothing
        d = Draft(
            key="a",
            kind=AttemptKind.JUDGE_ERROR,
            transition=Transition(State.TODO, 0),
            error="the gate failed",
            gate_digest="g3",
        )
        store.record(d, Claim("loop", store.get("a").turns), now=T0)  # nor does a judge error
        assert store.get("a").gate_digest == "g1"
        assert store.stats(now=T0).gates == {"g1": 1, "g2": 1}
        assert_sound(store)
        judged(store, "a", "REVIEW", "g2")  # a new gate judges it: the count moves
        assert store.stats(now=T0).gates == {"g2": 2}
        judged(store, "c", "FAIL", "g1")
        judged(store, "c", "FAIL", None)  # judged by a gate without a digest
        assert store.get("c").gate_digest is None
        assert store.stats(now=T0).gates == {"g2": 2}
        assert_sound(store)
        # A person re-judges b under gate g1: the count moves, the item is exported again.
        after, attempt = act(
            store, human("b", State.PASS, "rejudge", outcome="PASS", gate_digest="g1")
        )
        assert (after.gate_digest, attempt.gate_digest, attempt.outcome) == ("g1", "g1", "PASS")
        assert after.root_cause is None and after.state is State.PASS and after.round == 1
        assert store.stats(now=T0).gates == {"g1": 1, "g2": 1}
        # A person's action without a verdict keeps the gate; so does a reopen.
        act(store, human("a", State.DONE, "reject"))
        act(store, reopen("a"))
        assert store.get("a").gate_digest == "g2"
        assert store.stats(now=T0).gates == {"g1": 1, "g2": 1}
        judged(store, "a", "PASS", "g3")  # judged again in round 2
        assert store.stats(now=T0).gates == {"g1": 1, "g3": 1}
        judged(store, "d", "FAIL", "g3")
        assert store.stats(now=T0).gates == {"g1": 1, "g3": 2}
        assert store.stats(now=T0).kinds == {
            "judged": 8,
            "generation_error": 1,
            "judge_error": 1,
            "human": 3,
        }
        assert_sound(store)


# -- copies -----------------------------------------------------------------------------------


def test_a_copy_keeps_rounds_actions_and_gates(store_harness: StoreHarness) -> None:
    source_at = store_harness.create()
    with opened(store_harness, source_at, keys="abcde") as source:
        judged(source, "a", "REVIEW", "g1")
        act(source, human("a", State.PASS, "accept", note="fine by me"))
        judged(source, "b", "PASS", "g1")
        act(source, reopen("b", note="again"))
        judged(source, "b", "FAIL", "g2")
        lock(source, "c", "DONE")
        act(source, reopen("c"))
        judged(source, "d", "PASS", "g2")
        act(source, human("d", State.BLOCKED, "rejudge", outcome="BLOCKED", gate_digest="g3"))
        e = Draft(
            key="e", kind=AttemptKind.JUDGE_ERROR, transition=Transition(State.TODO, 0), error="x"
        )
        source.record(e, Claim("loop", 0), now=T0)
        assert _lease(source, "ann").item.key == "b"
        with opened(store_harness, keys=()) as target:
            copy(source, target)
            bare = [
                (replace(i, lease_owner=None, lease_expires=None, lease_token=None), log)
                for i, log in everything(source)
            ]
            assert everything(target) == bare
            assert [(i.round, i.gate_digest) for i, _ in bare] == [
                (1, "g1"),
                (2, "g2"),
                (2, None),
                (1, "g3"),
                (1, None),
            ]
            ts, ss = target.stats(now=T0), source.stats(now=T0)
            assert (ts.kinds, ts.reopened, ts.gates) == (ss.kinds, ss.reopened, ss.gates)
            assert (ts.reopened, ts.gates) == (2, {"g1": 1, "g2": 1, "g3": 1})
            assert_sound(target)
            # The copy goes on where the source stood: round 2 of b, and a person's actions.
            item, attempt = turn(target, "b", "PASS")
            assert (item.round, attempt.round, item.tries) == (2, 2, 1)
            item, _ = act(target, reopen("b"))
            assert item.round == 3 and target.stats(now=T0).reopened == 2
            assert_sound(target)
