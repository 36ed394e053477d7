"""Counters: ``stats`` (kept counters, never a scan: remaining, the gates that last judged
each item), ``meta`` / ``set_meta`` / ``swap_meta``. Every test also checks ``stats``
against a scan of the log (``assert_sound``) and ``check()``."""

from __future__ import annotations

from reins.store.model import AttemptKind, Claim, Draft, State, Transition
from reins.testing.conformance._kit import (
    ERROR,
    T0,
    act,
    assert_sound,
    human,
    judged,
    opened,
    reopen,
    turn,
)
from reins.testing.harness import StoreHarness

__all__ = [
    "test_items_are_counted_by_the_gate_that_last_judged_them",
    "test_meta_is_kept_and_seen_by_every_store",
    "test_meta_is_swapped_only_from_the_value_it_holds",
    "test_remaining_never_grows",
]


def test_remaining_never_grows(store_harness: StoreHarness) -> None:
    script = [
        ("a", "FAIL"), ("b", "ERROR"), ("a", "FAIL"), ("c", "REVIEW"), ("b", "PASS"),
        ("d", "SKIPPED"), ("a", "FAIL"), ("e", "BLOCKED"), ("f", "ERROR"), ("f", "FAIL"),
    ]  # fmt: skip
    with opened(store_harness, keys="abcdef") as store:
        remaining = store.stats(now=T0).remaining
        assert remaining == 6
        for key, result in script:
            turn(store, key, result)
            stats = store.stats(now=T0)
            assert stats.remaining <= remaining and stats.total == 6
            remaining = stats.remaining
            assert_sound(store)
        assert store.get("a").state is State.DONE  # the third FAIL reached max_tries
        assert remaining == 1


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


def test_meta_is_kept_and_seen_by_every_store(store_harness: StoreHarness) -> None:
    location = store_harness.create()
    one, two = store_harness.open(location), store_harness.open(location)
    try:
        assert one.meta("quest") is None
        one.set_meta("quest", "tiny")
        assert two.meta("quest") == "tiny"
        two.set_meta("quest", "emails: é \u2028")
        assert one.meta("quest") == "emails: é \u2028"
        assert one.check() == []
    finally:
        one.close()
        two.close()


def test_meta_is_swapped_only_from_the_value_it_holds(store_harness: StoreHarness) -> None:
    """A compare-and-set: of two stores swapping from what both read, one wins."""
    location = store_harness.create()
    one, two = store_harness.open(location), store_harness.open(location)
    try:
        assert one.swap_meta("hold", None, None)  # absent, as said
        assert one.swap_meta("hold", None, "ann")
        assert not two.swap_meta("hold", None, "bob")  # not absent any more
        assert not two.swap_meta("hold", "nobody", "bob")
        assert two.meta("hold") == "ann" and not two.swap_meta("hold", None, None)
        assert two.swap_meta("hold", "ann", "bob") and not one.swap_meta("hold", "ann", "cy")
        assert one.meta("hold") == "bob"
        assert not one.swap_meta("hold", "ann", None) and one.swap_meta("hold", "bob", None)
        assert two.meta("hold") is None and one.check() == []
    finally:
        one.close()
        two.close()
