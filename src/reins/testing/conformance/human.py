"""Schema v3: a person's actions on locked items, the judge's own errors, lease tokens and the
count of items per gate digest.

A person's action is a draft of kind HUMAN, recorded like any turn: it is the only kind that
moves a locked item, one attempt at a time (resolve a REVIEW item, reopen an item into a new
round, re-judge it), and an item a person moves is exported again. A judge error (the gate
itself failed) uses no try and locks nothing. Every lease hands out a fresh token; a record
with a stale one is refused while the lease is live.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from reins.errors import IllegalTransition, LeaseConflict, NotTodo
from reins.store.export import export
from reins.store.model import (
    Attempt,
    AttemptKind,
    Claim,
    Draft,
    Item,
    Lease,
    Notes,
    State,
    Transition,
)
from reins.store.protocol import Store
from reins.store.walk import copy
from reins.testing.conformance._kit import (
    ERROR,
    RESULTS,
    T0,
    TTL,
    assert_sound,
    everything,
    jsonl,
    make_draft,
    opened,
    turn,
    world,
)
from reins.testing.harness import StoreHarness

PERSON = "pat"


def human(
    key: str,
    state: State,
    action: str,
    *,
    note: str | None = None,
    new_round: bool = False,
    outcome: str | None = None,
    gate_digest: str | None = None,
    nonce: str | None = None,
) -> Draft:
    """A person's action on ``key`` that leaves it in ``state``."""
    return Draft(
        key=key,
        kind=AttemptKind.HUMAN,
        transition=Transition(state, 0, new_round=new_round),
        outcome=outcome,
        gate_digest=gate_digest,
        action=action,
        note=note,
        notes=Notes(via="human", nonce=nonce),
    )


def reopen(key: str, *, note: str | None = None, nonce: str | None = None) -> Draft:
    return human(key, State.TODO, "reopen", note=note, new_round=True, nonce=nonce)


def act(store: Store, d: Draft, *, now: float = T0) -> tuple[Item, Attempt]:
    """Record a person's action, claiming the turn count read now."""
    return store.record(d, Claim(PERSON, store.get(d.key).turns), now=now)


def lock(store: Store, key: str, state: str) -> Item:
    """Lock ``key`` by machine turns: PASS or REVIEW at once, DONE by three FAILs."""
    for result in ["FAIL"] * 3 if state == "DONE" else [state]:
        item, _ = turn(store, key, result)
    assert item.state is State(state)
    return item


def judged(store: Store, key: str, result: str, gate: str | None) -> tuple[Item, Attempt]:
    """A machine's judged turn of ``result`` on ``key`` by the gate whose digest is ``gate``."""
    item = store.get(key)
    d = replace(make_draft(item, result), gate_digest=gate)
    return store.record(d, Claim("loop", item.turns), now=T0)


def _lease(store: Store, owner: str, now: float = T0) -> Lease:
    lease = store.lease(owner, ttl=TTL, now=now)
    assert lease is not None, owner
    return lease


# -- resolving REVIEW ---------------------------------------------------------------------


@pytest.mark.parametrize(("action", "state"), [("accept", State.PASS), ("reject", State.DONE)])
def test_a_person_resolves_a_review_item_and_it_is_exported_again(
    store_harness: StoreHarness, tmp_path: Path, action: str, state: State
) -> None:
    out = tmp_path / "r.jsonl"
    with opened(store_harness) as store:
        turn(store, "a", "FAIL")
        turn(store, "a", "REVIEW")
        assert export(store, out) == 1
        before, log = store.snapshot("a")
        assert before.exported and (before.state, before.tries) == (State.REVIEW, 1)
        after, attempt = act(store, human("a", state, action, note="looks right"), now=T0 + 5)
        assert (attempt.kind, attempt.action, attempt.note, attempt.driver) == (
            AttemptKind.HUMAN,
            action,
            "looks right",
            PERSON,
        )
        assert (attempt.turn, attempt.state_after, attempt.tries_after, attempt.round) == (
            3,
            state,
            1,
            1,
        )
        assert not attempt.judged and attempt.outcome is None
        assert (after.state, after.tries, after.turns, after.round) == (state, 1, 3, 1)
        assert after.locked_at == attempt.recorded_at and after.lease_owner is None
        assert after.root_cause == "not-meh"  # no verdict of its own: the last one's stays
        assert not after.exported and store.exported_count() == 0  # its mark is cleared
        again, full = store.snapshot("a")
        assert again == after and full == [*log, attempt]
        stats = store.stats(now=T0)
        assert stats.kinds == {"judged": 2, "human": 1}
        assert (stats.counts[State.REVIEW], stats.counts[state], stats.tries[1]) == (0, 1, 1)
        assert_sound(store)
        assert export(store, out) == 1  # exported again, with the person's answer
        lines = [r for r in jsonl(out) if r["key"] == "a"]
        assert [r["state"] for r in lines] == ["REVIEW", state.value]
        assert (lines[1]["driver"], lines[1]["turns"], lines[1]["tries"]) == (PERSON, 3, 1)
        assert lines[1]["locked_at"] == after.locked_at
        assert export(store, out) == 0 and store.exported_count() == 1
        assert store.get("a").exported
        for result in RESULTS:  # still locked for every machine
            with pytest.raises(NotTodo):
                turn(store, "a", result)
        assert_sound(store)


def test_a_person_acts_only_where_the_action_fits(store_harness: StoreHarness) -> None:
    with opened(store_harness, keys="abcd") as store:
        lock(store, "a", "PASS")
        lock(store, "b", "DONE")
        turn(store, "c", "FAIL")  # TODO, a try used
        before = world(store)  # d has no turn
        refused = [
            human("a", State.PASS, "accept"),  # only a REVIEW item is resolved
            human("a", State.DONE, "reject"),
            human("b", State.PASS, "accept"),
            human("b", State.DONE, "reject"),
            human("c", State.PASS, "accept"),  # nothing applies to a TODO item
            reopen("c"),
            reopen("d"),
            human("d", State.PASS, "rejudge", outcome="PASS", gate_digest="g1"),
        ]
        for d in refused:
            with pytest.raises(IllegalTransition) as caught:
                act(store, d, now=T0 + 1)
            assert type(caught.value) is IllegalTransition, (d.key, d.action, caught.value)
            assert world(store) == before, (d.key, d.action)
        for key in "ab":  # a machine's turn on a locked item is still NotTodo
            for result in RESULTS:
                with pytest.raises(NotTodo):
                    turn(store, key, result)
        assert world(store) == before
        assert_sound(store)


# -- reopening ----------------------------------------------------------------------------


@pytest.mark.parametrize("locked", ["PASS", "DONE", "REVIEW"])
def test_a_person_reopens_a_locked_item_into_a_new_round(
    store_harness: StoreHarness, tmp_path: Path, locked: str
) -> None:
    out = tmp_path / "r.jsonl"
    with opened(store_harness, keys="ab") as store:
        was = lock(store, "a", locked)
        assert export(store, out) == 1
        _, log = store.snapshot("a")
        after, attempt = act(store, reopen("a", note="the gate was wrong"), now=T0 + 1)
        assert (after.state, after.tries, after.round, after.turns) == (
            State.TODO,
            0,
            2,
            was.turns + 1,
        )
        assert after.locked_at is None and after.lease_owner is None and not after.exported
        assert (attempt.kind, attempt.action, attempt.note, attempt.driver) == (
            AttemptKind.HUMAN,
            "reopen",
            "the gate was wrong",
            PERSON,
        )
        assert (attempt.state_after, attempt.tries_after, attempt.round) == (State.TODO, 0, 2)
        assert after.root_cause == was.root_cause  # until the next verdict
        _, full = store.snapshot("a")
        assert full == [*log, attempt]  # the log keeps every earlier attempt
        stats = store.stats(now=T0)
        assert (stats.reopened, stats.remaining, stats.tries) == (1, 2, {0: 2})
        assert store.exported_count() == 0
        assert_sound(store)
        # Worked again like any TODO item: leased, judged, locked, exported again.
        lease = _lease(store, "ann", T0 + 2)
        assert (lease.item.key, lease.item.round, lease.item.tries) == ("a", 2, 0)
        item, attempt = turn(store, "a", "FAIL", driver="loop", owner="ann", now=T0 + 3)
        assert (item.tries, item.round, attempt.round, item.lease_owner) == (1, 2, 2, "ann")
        assert item.root_cause == "not-bad"
        assert_sound(store)
        item, attempt = turn(store, "a", "PASS", driver="loop", owner="ann", now=T0 + 4)
        assert (item.state, item.tries, item.round, attempt.round) == (State.PASS, 1, 2, 2)
        assert item.lease_owner is None and item.lease_token is None
        assert export(store, out) == 1
        assert [r["state"] for r in jsonl(out) if r["key"] == "a"] == [locked, "PASS"]
        with pytest.raises(NotTodo):
            turn(store, "a", "FAIL")
        # Reopened again: round 3; still one reopened item.
        item, attempt = act(store, reopen("a"), now=T0 + 5)
        assert (item.round, attempt.round, item.tries, item.state) == (3, 3, 0, State.TODO)
        assert store.stats(now=T0).reopened == 1
        assert len(store.snapshot("a")[1]) == item.turns == len(log) + 4
        assert_sound(store)


def test_a_retried_action_of_a_person_is_written_once(store_harness: StoreHarness) -> None:
    with opened(store_harness) as store:
        lock(store, "a", "REVIEW")
        lock(store, "b", "PASS")
        for d in (human("a", State.PASS, "accept", nonce="p-1"), reopen("b", nonce="p-2")):
            claim = Claim(PERSON, store.get(d.key).turns)
            _, first = store.record(d, claim, now=T0)
            before = world(store)
            _, again = store.record(d, claim, now=T0 + 1)  # its answer was lost: sent again
            assert again == first and world(store) == before
            other = replace(d, notes=Notes(via="human", nonce="p-3"))
            with pytest.raises(IllegalTransition):
                store.record(other, claim, now=T0)
            assert world(store) == before
        assert store.stats(now=T0).kinds == {"judged": 2, "human": 2}
        assert_sound(store)


# Hand-written SQL that would move an item outside the human lane's rules. a is locked PASS;
# b is TODO with one try used; c was reopened (round 2) and failed once there; d is REVIEW
# accepted by a person (a human attempt at its turn 2).
BY_HAND = {
    "locked-moved-by-no-one": "UPDATE items SET state = 'TODO', locked_at = NULL, "
    "turns = turns + 1 WHERE key = 'a'",
    "new-round-by-no-one": "UPDATE items SET state = 'TODO', locked_at = NULL, tries = 0, "
    "round = round + 1, turns = turns + 1 WHERE key = 'a'",
    "locked-tries-changed": "UPDATE items SET tries = tries + 1 WHERE key = 'd'",
    "locked-moved-on-an-old-human-turn": "UPDATE items SET state = 'DONE' WHERE key = 'd'",
    "locked-reopened-on-a-later-turn": "UPDATE items SET state = 'TODO', locked_at = NULL, "
    "tries = 0, round = round + 1, turns = turns + 1 WHERE key = 'd'",
    "tries-down-in-a-round": "UPDATE items SET tries = 0 WHERE key = 'b'",
    "tries-down-in-round-2": "UPDATE items SET tries = 0 WHERE key = 'c'",
    "new-round-keeping-tries": "UPDATE items SET round = round + 1 WHERE key = 'b'",
    "round-jump-by-two": "UPDATE items SET round = round + 2, tries = 0 WHERE key = 'b'",
    "round-jump-by-two-reopened": "UPDATE items SET round = round + 2, tries = 0 WHERE key = 'c'",
    "round-down": "UPDATE items SET round = 1 WHERE key = 'c'",
    "round-down-with-tries": "UPDATE items SET round = 1, tries = 2 WHERE key = 'c'",
}


@pytest.mark.parametrize("statement", BY_HAND.values(), ids=BY_HAND.keys())
def test_hand_written_sql_cannot_bypass_the_human_lane(
    store_harness: StoreHarness, statement: str
) -> None:
    location = store_harness.create()
    with opened(store_harness, location, keys="abcd") as store:
        lock(store, "a", "PASS")
        turn(store, "b", "FAIL")
        lock(store, "c", "PASS")
        act(store, reopen("c"))
        turn(store, "c", "FAIL")
        lock(store, "d", "REVIEW")
        act(store, human("d", State.PASS, "accept"))
        before = world(store)
        assert (store.get("c").round, store.get("c").tries) == (2, 1)
        with pytest.raises(Exception):  # noqa: B017 - each engine raises its own driver's error
            store_harness.execute(location, statement)
        assert world(store) == before
        assert_sound(store)


# -- judge errors ---------------------------------------------------------------------------


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
