"""Copying: ``load`` into an empty ledger only; ``store/walk.py``'s ``copy`` reproduces a
whole ledger, its log, rounds, people's actions and gates, and the copy goes on from there."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from reins.errors import LedgerError
from reins.store.export import export
from reins.store.model import AttemptKind, Claim, Draft, State, Transition
from reins.store.walk import copy, entries, log_digest
from reins.testing.conformance._kit import (
    LONE,
    T0,
    TTL,
    act,
    assert_sound,
    everything,
    full_draft,
    human,
    judged,
    keys_in,
    leased,
    lock,
    opened,
    reopen,
    turn,
    world,
)
from reins.testing.harness import StoreHarness

__all__ = [
    "test_a_copy_keeps_rounds_actions_and_gates",
    "test_copy_into_an_empty_store_reproduces_the_log",
    "test_load_refuses_a_ledger_that_is_not_empty",
]


def _history(store_harness: StoreHarness, location: str) -> None:
    """A ledger with some of everything: locks of every kind, errors, leases, exports."""
    with opened(store_harness, location, keys=[f"k{i}" for i in range(9)]) as store:
        store.add([("odd", {"text": f"lone {LONE}", "n": [1.5, None, True]})])
        store.record(full_draft("k0"), Claim("loop", 0), now=T0)
        for key, results in {
            "k1": ["PASS"],
            "k2": ["FAIL", "ERROR", "REVIEW"],
            "k3": ["FAIL", "FAIL", "FAIL"],
            "k4": ["ERROR", "ERROR"],
            "k5": ["SKIPPED"],
            "k6": ["FAIL", "BLOCKED"],
            "odd": ["FAIL"],
        }.items():
            for result in results:
                turn(store, key, result, driver="hist")
        assert store.lease("ann", ttl=TTL, now=T0) is not None


def test_copy_into_an_empty_store_reproduces_the_log(
    store_harness: StoreHarness, tmp_path: Path
) -> None:
    source_at = store_harness.create()
    _history(store_harness, source_at)
    with opened(store_harness, source_at, keys=()) as source:
        assert export(source, tmp_path / "source.jsonl").count == 5
        with opened(store_harness, keys=()) as target:
            want = log_digest(source)
            assert want[:2] == (10, 14)
            assert copy(source, target) == want == log_digest(target)
            assert [e[1] for e in entries(target)] == [e[1] for e in entries(source)]
            assert_sound(target)
            ts, ss = target.stats(now=T0), source.stats(now=T0)
            assert (ts.counts, ts.tries, ts.rules, ts.attempts) == (
                ss.counts,
                ss.tries,
                ss.rules,
                ss.attempts,
            )
            # Leases and export marks belong to one run: they are not carried over.
            assert ts.leased == 0 and target.exported_count() == 0
            assert all(item.lease_owner is None for item, _ in entries(target))
            assert export(target, tmp_path / "target.jsonl").count == 5
            assert sorted(keys_in(tmp_path / "target.jsonl")) == sorted(
                keys_in(tmp_path / "source.jsonl")
            )
            # The copy goes on where the source stood.
            item, attempt = turn(target, "k4", "PASS")
            assert (item.turns, attempt.turn, item.state) == (3, 3, State.PASS)
            with pytest.raises(LedgerError):
                turn(target, "k1", "FAIL")
            assert_sound(target)


def test_load_refuses_a_ledger_that_is_not_empty(store_harness: StoreHarness) -> None:
    source_at = store_harness.create()
    _history(store_harness, source_at)
    with opened(store_harness, source_at, keys=()) as source, opened(store_harness) as target:
        before = world(target)
        with pytest.raises(LedgerError):
            target.load(entries(source))
        with pytest.raises(LedgerError):
            copy(source, target)
        assert world(target) == before
    with (
        opened(store_harness, source_at, keys=()) as source,
        opened(store_harness, keys=()) as target,
    ):
        assert target.load(entries(source)) == 10
        assert log_digest(target) == log_digest(source)
        assert_sound(target)


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
        assert leased(source, "ann").item.key == "b"
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
