"""What goes in comes out: payloads, attempts with every field, whole ledgers copied."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reins.errors import LedgerError
from reins.gate import Fact, Outcome, Verdict
from reins.store.export import export
from reins.store.model import AttemptKind, Claim, Draft, Notes, State, Transition, Usage
from reins.store.query import PageQuery
from reins.store.walk import copy, entries, log_digest
from reins.testing.conformance._kit import (
    QUEST,
    T0,
    TTL,
    assert_sound,
    keys_in,
    opened,
    turn,
    world,
)
from reins.testing.harness import StoreHarness
from reins.turn.record import Origin, draft

LONE = "\ud800"  # a lone surrogate: not UTF-8, yet a generator or an input may produce one
PAYLOADS: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    2**53 + 1,
    -(2**63),
    2**64,
    1.5,
    -0.25,
    1e-7,
    1e300,
    "",
    "plain",
    "é ü ß 中文 🎉 \u2028\u2029 \t\n\r \\ \" '",
    f"lone {LONE} surrogate \udfff",
    "nul \x00 inside",
    [],
    [1, "two", None, True, 2.5, [], {}],
    {},
    {"nested": {"list": [1, {"deep": None}], "empty": {}}, "": "empty key", "é": [False]},
    {"word": "a", "n": 3},
]


def same(a: Any, b: Any) -> bool:
    """Equal with the same JSON types all the way down (``True == 1`` in Python, not here)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return bool(a == b)


def test_payloads_of_every_json_type_round_trip(store_harness: StoreHarness) -> None:
    keys = [f"p{i}" for i in range(len(PAYLOADS))]
    with opened(store_harness, keys=()) as store:
        assert store.add(zip(keys, PAYLOADS, strict=True)) == (len(PAYLOADS), 0)
        for key, payload in zip(keys, PAYLOADS, strict=True):
            assert same(store.get(key).payload, payload), key
            assert same(store.snapshot(key)[0].payload, payload), key
        assert all(
            same(item.payload, payload)
            for item, payload in zip(store.page(PageQuery(limit=100)).items, PAYLOADS, strict=True)
        )
        lease = store.lease("ann", ttl=TTL, now=T0)
        assert lease is not None and same(lease.item.payload, PAYLOADS[0])
        for key, payload in zip(keys, PAYLOADS, strict=True):
            after, _ = turn(store, key, "PASS", driver="ann")
            assert same(after.payload, payload), key
        batch = store.claim_batch("/nowhere/r.jsonl", 0, 1000)
        assert batch is not None
        assert all(same(e.item.payload, p) for e, p in zip(batch.entries, PAYLOADS, strict=True))
        assert_sound(store)


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(payloads=st.lists(_JSON, min_size=1, max_size=5))
def test_any_json_payload_round_trips(store_harness: StoreHarness, payloads: list[Any]) -> None:
    with opened(store_harness, keys=()) as store:
        store.add((f"k{i}", p) for i, p in enumerate(payloads))
        for i, payload in enumerate(payloads):
            assert same(store.get(f"k{i}").payload, payload)


def _full_draft(key: str) -> Draft:
    facts = (
        Fact(rule="not-bad", where="answer", expected="good", actual=f"bad {LONE} \x00 \udfff"),
        Fact(rule="not-bad", where="line 2", expected='"quoted"\n', actual="é 🎉 \u2028"),
        Fact(rule="other", where="", expected="", actual=""),
    )
    return Draft(
        key=key,
        kind=AttemptKind.JUDGED,
        transition=Transition(State.TODO, 1),
        outcome="FAIL",
        root_cause="not-bad",
        facts=facts,
        feedback="a -> FAIL (state TODO, tries 1/3)\nroot cause: not-bad\n  é 🎉\n",
        submission="bad answer\nwith lines é 🎉 \t and \\ backslashes",
        policy="facts+previous",
        prompt_digest="0123456789abcdef",
        usage=Usage(
            backend="fake",
            input_tokens=12,
            output_tokens=34,
            cost=0.00125,
            latency=1.25,
            cache_read_tokens=8,
            cache_write_tokens=3,
            batch=True,
            list_cost=0.0025,
        ),
        started_at="2026-01-02T03:04:05.678Z",
        notes=Notes(
            via="loop",
            seed=2_147_483_647,
            escalated_by=f"not-bad {LONE}",
            model="model \udfff \x00 é",
            line=7,
            nonce="abc123",
            batch="batch_é",
        ),
    )


def test_an_attempt_round_trips_every_field(store_harness: StoreHarness) -> None:
    with opened(store_harness) as store:
        d = _full_draft("a")
        after, attempt = store.record(d, Claim("loop", 0, owner="slot-1"), now=T0)
        _, [stored] = store.snapshot("a")
        assert stored == attempt
        assert (stored.key, stored.turn, stored.driver) == ("a", 1, "loop")
        for name in (
            "kind",
            "outcome",
            "root_cause",
            "facts",
            "feedback",
            "submission",
            "error",
            "policy",
            "prompt_digest",
            "usage",
            "started_at",
            "notes",
        ):
            assert getattr(stored, name) == getattr(d, name), name
        assert (stored.state_after, stored.tries_after) == (State.TODO, 1)
        assert stored.recorded_at == after.updated_at
        error = Draft(
            key="b",
            kind=AttemptKind.GENERATION_ERROR,
            transition=Transition(State.TODO, 0),
            error="backend said: é 🎉 (redacted)",
            usage=Usage(backend="fake", latency=30.0),
            notes=Notes(via="loop", seed=1),
        )
        _, failed = store.record(error, Claim("loop", 0), now=T0)
        _, [kept] = store.snapshot("b")
        assert kept == failed and kept.error == error.error and not kept.judged
        assert (kept.outcome, kept.root_cause, kept.facts, kept.feedback) == (None, None, (), "")
        assert store.get("b").root_cause is None and store.get("a").root_cause == "not-bad"
        stats = store.stats(now=T0)
        assert (stats.input_tokens, stats.output_tokens) == (12, 34)
        assert abs(stats.cost - 0.00125) < 1e-12
        assert (stats.cache_read_tokens, stats.cache_write_tokens) == (8, 3)
        assert abs(stats.batch_cost - 0.00125) < 1e-12 and abs(stats.list_cost - 0.0025) < 1e-12
        assert stats.rules == {"not-bad": (2, 1), "other": (1, 0)}
        assert_sound(store)


def test_hostile_text_from_a_rule_is_recorded(store_harness: StoreHarness) -> None:
    """A fact quoting a lone surrogate or a NUL, recorded through the record table."""
    fact = Fact(rule="not-bad", where=f"field {LONE}", expected="\x00", actual=f"bad {LONE}\x00")
    with opened(store_harness) as store:
        item = store.get("a")
        origin = Origin(notes=Notes(via="loop", model=f"m {LONE}"))
        d = draft(QUEST, item, Verdict(Outcome.FAIL, (fact,), "not-bad"), origin, submission="x")
        _, attempt = store.record(d, Claim("loop", 0), now=T0)
        _, [stored] = store.snapshot("a")
        assert stored == attempt and stored.facts == (fact,) and stored.notes == d.notes
        assert stored.feedback == d.feedback
        assert_sound(store)


def _history(store_harness: StoreHarness, location: str) -> None:
    """A ledger with some of everything: locks of every kind, errors, leases, exports."""
    with opened(store_harness, location, keys=[f"k{i}" for i in range(9)]) as store:
        store.add([("odd", {"text": f"lone {LONE}", "n": [1.5, None, True]})])
        store.record(_full_draft("k0"), Claim("loop", 0), now=T0)
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
        assert export(source, tmp_path / "source.jsonl") == 5
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
            assert export(target, tmp_path / "target.jsonl") == 5
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
