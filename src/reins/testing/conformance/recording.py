"""Recording: ``record(draft, claim)``. The ratchet, one transaction per turn, claims that
moved on, records written once even when retried, and a judge error that uses no try."""

from __future__ import annotations

from dataclasses import replace

import pytest

from reins.errors import IllegalTransition, LeaseConflict, NotFound, NotTodo, TurnMoved
from reins.store.model import AttemptKind, Claim, Draft, Notes, State, Transition, Usage
from reins.testing.conformance._kit import (
    RESULTS,
    T0,
    TTL,
    assert_sound,
    leased,
    make_draft,
    opened,
    turn,
    with_nonce,
    world,
)
from reins.testing.harness import StoreHarness

__all__ = [
    "test_a_judge_error_uses_no_try_and_locks_nothing",
    "test_a_refused_record_writes_nothing",
    "test_a_retried_record_is_written_once",
    "test_a_stale_claim_is_refused_as_turn_moved",
    "test_a_terminal_item_never_changes",
    "test_hand_written_sql_cannot_break_the_ratchet",
    "test_one_turn_is_one_transaction",
    "test_record_stamps_turn_driver_and_state_and_keeps_counts",
    "test_tries_never_go_down",
]


# Hand-written SQL that would break the ratchet or the append-only log; every engine refuses it.
# a is locked PASS after one turn, b is TODO after one FAIL (tries 1), c has no turn.
FORBIDDEN_SQL = {
    "terminal-state": "UPDATE items SET state = 'TODO' WHERE key = 'a'",
    "terminal-tries": "UPDATE items SET tries = tries + 1 WHERE key = 'a'",
    "terminal-turns": "UPDATE items SET turns = turns + 1 WHERE key = 'a'",
    "tries-down": "UPDATE items SET tries = 0 WHERE key = 'b'",
    "turns-down": "UPDATE items SET turns = 0 WHERE key = 'b'",
    "attempt-update": "UPDATE attempts SET outcome = 'FAIL' WHERE turn = 1",
    "attempt-delete": "DELETE FROM attempts WHERE turn = 1",
    "item-delete": "DELETE FROM items WHERE key = 'c'",
}


def test_a_terminal_item_never_changes(store_harness: StoreHarness) -> None:
    with opened(store_harness) as store:
        turn(store, "a", "PASS")
        before = world(store)
        for result in RESULTS:
            with pytest.raises(NotTodo, match="PASS"):
                turn(store, "a", result)
            with pytest.raises(NotTodo):
                turn(store, "a", result, turns=0)  # a stale claim changes nothing
        item = store.get("a")
        for state in State:
            by_hand = Draft(
                key="a",
                kind=AttemptKind.JUDGED,
                transition=Transition(state, 0),
                outcome="PASS",
            )
            with pytest.raises(IllegalTransition):
                store.record(by_hand, Claim("conformance", item.turns), now=T0)
        assert not store.heartbeat("a", "conformance", ttl=TTL, now=T0)
        assert world(store) == before
        assert_sound(store)


@pytest.mark.parametrize("statement", FORBIDDEN_SQL.values(), ids=FORBIDDEN_SQL.keys())
def test_hand_written_sql_cannot_break_the_ratchet(
    store_harness: StoreHarness, statement: str
) -> None:
    location = store_harness.create()
    with opened(store_harness, location) as store:
        turn(store, "a", "PASS")
        turn(store, "b", "FAIL")
        before = world(store)
        with pytest.raises(Exception):  # noqa: B017 - each engine raises its own driver's error
            store_harness.execute(location, statement)
        assert world(store) == before
        assert_sound(store)


def test_tries_never_go_down(store_harness: StoreHarness) -> None:
    with opened(store_harness) as store:
        turn(store, "a", "FAIL")
        before = world(store)
        down = Draft(key="a", kind=AttemptKind.JUDGED, transition=Transition(State.TODO, -1))
        with pytest.raises(IllegalTransition, match="tries"):
            store.record(down, Claim("conformance", 1), now=T0)
        assert world(store) == before


def test_one_turn_is_one_transaction(store_harness: StoreHarness) -> None:
    script = [("a", "FAIL"), ("a", "ERROR"), ("b", "PASS"), ("a", "FAIL"), ("c", "REVIEW")]
    script += [("a", "FAIL"), ("d", "SKIPPED"), ("e", "BLOCKED")]
    with opened(store_harness, keys="abcde") as store:
        for n, (key, result) in enumerate(script, 1):
            before = store.stats(now=T0)
            item = store.get(key)
            usage = Usage(backend="fake", input_tokens=n, output_tokens=2 * n, cost=0.5 * n)
            d = replace(make_draft(item, result), usage=usage)
            after, attempt = store.record(d, Claim("conformance", item.turns), now=T0)
            again, log = store.snapshot(key)
            assert again == after == store.get(key)
            assert log[-1] == attempt and len(log) == after.turns == item.turns + 1
            assert (attempt.turn, attempt.state_after, attempt.tries_after) == (
                after.turns,
                after.state,
                after.tries,
            )
            assert (after.state, after.tries) == (
                d.transition.state,
                item.tries + d.transition.tries_delta,
            )
            stats = store.stats(now=T0)
            assert stats.attempts == before.attempts + 1
            assert stats.input_tokens == before.input_tokens + n
            assert stats.output_tokens == before.output_tokens + 2 * n
            assert abs(stats.cost - before.cost - 0.5 * n) < 1e-9
            if after.state is not item.state:
                assert stats.counts[item.state] == before.counts[item.state] - 1
                assert stats.counts[after.state] == before.counts[after.state] + 1
            assert_sound(store)
        assert store.get("a").state is State.DONE


def test_a_refused_record_writes_nothing(store_harness: StoreHarness) -> None:
    with opened(store_harness, keys="abcd") as store:
        turn(store, "a", "PASS")
        turn(store, "c", "FAIL")
        lease = store.lease("ann", ttl=TTL, now=T0)
        assert lease is not None and lease.item.key == "b"
        before = world(store)
        item_c = store.get("c")
        refusals: list[tuple[type[Exception], str, Claim, Draft]] = [
            (NotTodo, "a", Claim("ann", 1), make_draft(store.get("a"), "FAIL")),
            (LeaseConflict, "b", Claim("bob", 0), make_draft(store.get("b"), "PASS")),
            (TurnMoved, "c", Claim("ann", 0), make_draft(item_c, "FAIL")),
            (TurnMoved, "c", Claim("ann", 2), make_draft(item_c, "PASS")),
            (
                IllegalTransition,
                "c",
                Claim("ann", 1),
                Draft(key="c", kind=AttemptKind.JUDGED, transition=Transition(State.TODO, -1)),
            ),
            (NotFound, "zzz", Claim("ann", 0), replace(make_draft(item_c, "FAIL"), key="zzz")),
        ]
        for error, key, claim, d in refusals:
            with pytest.raises(error) as caught:
                store.record(d, claim, now=T0 + 1)
            assert type(caught.value) is error, (key, caught.value)
            assert world(store) == before, (key, error)
        assert_sound(store)
        # A refused judged record does not count as ann's submission either.
        again = store.lease("ann", ttl=TTL, now=T0 + 2)
        assert again is not None and again.renewed and again.nexts_since_submit == 2


def test_record_stamps_turn_driver_and_state_and_keeps_counts(store_harness: StoreHarness) -> None:
    with opened(store_harness) as store:
        item, attempt = turn(store, "a", "FAIL", driver="ann")
        assert (item.state, item.tries, item.turns) == (State.TODO, 1, 1)
        assert (attempt.turn, attempt.driver, attempt.state_after, attempt.tries_after) == (
            1,
            "ann",
            State.TODO,
            1,
        )
        assert attempt.judged and attempt.outcome == "FAIL" and attempt.root_cause == "not-bad"
        stats = store.stats(now=T0)
        assert stats.counts[State.TODO] == 3 and stats.tries == {0: 2, 1: 1}
        assert stats.rules == {"not-bad": (1, 1)}
        turn(store, "a", "PASS", driver="ann")
        stats = store.stats(now=T0)
        assert stats.counts[State.PASS] == 1 and stats.remaining == 2 and stats.total == 3
        assert stats.attempts == 2
        assert_sound(store)


def test_a_stale_claim_is_refused_as_turn_moved(store_harness: StoreHarness) -> None:
    with opened(store_harness) as store:
        turn(store, "a", "FAIL", driver="ann")
        with pytest.raises(TurnMoved, match="gained a turn"):
            turn(store, "a", "PASS", driver="ann", turns=0)
        assert store.get("a").state is State.TODO
        assert_sound(store)


def test_a_retried_record_is_written_once(store_harness: StoreHarness) -> None:
    with opened(store_harness) as store:
        d = make_draft(store.get("b"), "FAIL", nonce="n-1")
        claim = Claim("ann", 0)
        first_item, first = store.record(d, claim, now=T0)
        before = world(store)
        again_item, again = store.record(d, claim, now=T0 + 1)  # its answer was lost: retried
        assert again == first and again_item.turns == first_item.turns == 1
        assert world(store) == before
        for other, who in ((with_nonce(d, "n-2"), claim), (d, Claim("bob", 0))):
            with pytest.raises(TurnMoved):
                store.record(other, who, now=T0)
        with pytest.raises(TurnMoved):
            store.record(replace(d, notes=replace(d.notes, nonce=None)), claim, now=T0)
        # Found again even once a later turn landed on top of it.
        turn(store, "b", "ERROR", driver="ann")
        _, late = store.record(d, claim, now=T0 + 2)
        assert late == first
        # A turn that locked its item is found again too, not refused as NotTodo.
        lock = make_draft(store.get("a"), "PASS", nonce="n-3")
        _, locked = store.record(lock, Claim("ann", 0), now=T0)
        before = world(store)
        item, retried = store.record(lock, Claim("ann", 0), now=T0)
        assert retried == locked and item.state is State.PASS
        with pytest.raises(NotTodo):
            store.record(with_nonce(lock, "n-4"), Claim("ann", 0), now=T0)
        assert world(store) == before
        # Found again even once another owner leased the item: not refused as LeaseConflict.
        retry = make_draft(store.get("c"), "FAIL", nonce="n-5")
        _, landed = store.record(retry, Claim("ann", 0), now=T0)
        lease = store.lease("bob", ttl=TTL, now=T0)
        assert lease is not None and lease.item.key == "b"
        lease = store.lease("cid", ttl=TTL, now=T0)
        assert lease is not None and lease.item.key == "c"
        assert store.record(retry, Claim("ann", 0), now=T0 + 1)[1] == landed
        with pytest.raises(LeaseConflict):
            store.record(with_nonce(retry, "n-6"), Claim("ann", 1), now=T0 + 1)
        assert store.stats(now=T0).attempts == 4
        assert_sound(store)


def test_a_judge_error_uses_no_try_and_locks_nothing(store_harness: StoreHarness) -> None:
    with opened(store_harness) as store:
        turn(store, "a", "FAIL")
        lease = leased(store, "ann")
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
        again = leased(store, "ann", T0 + 2)  # a judge error is no submission
        assert (again.item.key, again.renewed, again.nexts_since_submit) == ("a", True, 2)
        item, _ = turn(store, "a", "PASS", driver="loop", owner="ann", now=T0 + 3)
        assert item.state is State.PASS and store.stats(now=T0).kinds["judged"] == 2
        assert_sound(store)
