"""Recording a person's actions on locked items.

A person's action is a draft of kind HUMAN, recorded like any turn: it is the only kind that
moves a locked item, one attempt at a time (resolve a REVIEW item, reopen an item into a new
round, re-judge it), and an item a person moves is exported again.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from reins.errors import IllegalTransition, NotTodo
from reins.store.export import export
from reins.store.model import AttemptKind, Claim, Notes, State
from reins.testing.conformance._kit import (
    PERSON,
    RESULTS,
    T0,
    act,
    assert_sound,
    human,
    jsonl,
    leased,
    lock,
    opened,
    reopen,
    turn,
    world,
)
from reins.testing.harness import StoreHarness

__all__ = [
    "test_a_person_acts_only_where_the_action_fits",
    "test_a_person_reopens_a_locked_item_into_a_new_round",
    "test_a_person_resolves_a_review_item_and_it_is_exported_again",
    "test_a_retried_action_of_a_person_is_written_once",
    "test_hand_written_sql_cannot_bypass_the_human_lane",
]


@pytest.mark.parametrize(("action", "state"), [("accept", State.PASS), ("reject", State.DONE)])
def test_a_person_resolves_a_review_item_and_it_is_exported_again(
    store_harness: StoreHarness, tmp_path: Path, action: str, state: State
) -> None:
    out = tmp_path / "r.jsonl"
    with opened(store_harness) as store:
        turn(store, "a", "FAIL")
        turn(store, "a", "REVIEW")
        assert export(store, out).count == 1
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
        assert export(store, out).count == 1  # exported again, with the person's answer
        lines = [r for r in jsonl(out) if r["key"] == "a"]
        assert [r["state"] for r in lines] == ["REVIEW", state.value]
        assert (lines[1]["driver"], lines[1]["turns"], lines[1]["tries"]) == (PERSON, 3, 1)
        assert lines[1]["locked_at"] == after.locked_at
        assert export(store, out).count == 0 and store.exported_count() == 1
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


@pytest.mark.parametrize("locked", ["PASS", "DONE", "REVIEW"])
def test_a_person_reopens_a_locked_item_into_a_new_round(
    store_harness: StoreHarness, tmp_path: Path, locked: str
) -> None:
    out = tmp_path / "r.jsonl"
    with opened(store_harness, keys="ab") as store:
        was = lock(store, "a", locked)
        assert export(store, out).count == 1
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
        lease = leased(store, "ann", T0 + 2)
        assert (lease.item.key, lease.item.round, lease.item.tries) == ("a", 2, 0)
        item, attempt = turn(store, "a", "FAIL", driver="loop", owner="ann", now=T0 + 3)
        assert (item.tries, item.round, attempt.round, item.lease_owner) == (1, 2, 2, "ann")
        assert item.root_cause == "not-bad"
        assert_sound(store)
        item, attempt = turn(store, "a", "PASS", driver="loop", owner="ann", now=T0 + 4)
        assert (item.state, item.tries, item.round, attempt.round) == (State.PASS, 1, 2, 2)
        assert item.lease_owner is None and item.lease_token is None
        assert export(store, out).count == 1
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
