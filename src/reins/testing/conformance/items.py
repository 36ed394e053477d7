"""Items: ``add`` (streaming, idempotent per key), ``get``, ``snapshot`` and
``last_attempts``; what goes in comes out, payloads of every JSON type and attempts with every
field, byte for byte."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reins.errors import LedgerError, NotFound
from reins.gate import Fact, Outcome, Verdict
from reins.store.model import AttemptKind, Claim, Draft, Notes, State, Transition, Usage
from reins.store.query import PageQuery
from reins.store.walk import iter_items
from reins.testing.conformance._kit import (
    ERROR,
    LONE,
    QUEST,
    T0,
    TTL,
    assert_sound,
    full_draft,
    make_draft,
    opened,
    turn,
)
from reins.testing.harness import StoreHarness
from reins.turn.record import Origin, draft
from reins.values import JSON

__all__ = [
    "test_add_dedupes_by_key_and_leaves_existing_items_untouched",
    "test_add_streams_a_large_input",
    "test_an_attempt_round_trips_every_field",
    "test_an_empty_key_is_refused",
    "test_any_json_payload_round_trips",
    "test_hostile_text_from_a_rule_is_recorded",
    "test_last_attempts_are_each_items_last_turn",
    "test_payloads_of_every_json_type_round_trip",
    "test_unknown_keys_are_not_found",
]


def test_add_dedupes_by_key_and_leaves_existing_items_untouched(
    store_harness: StoreHarness,
) -> None:
    with opened(store_harness) as store:
        turn(store, "b", "PASS")
        before = store.snapshot("b")
        added, present = store.add([("a", {"word": "changed"}), ("d", None), ("d", 1), ("b", 2)])
        assert (added, present) == (1, 3)
        assert store.get("a").payload == {"word": "a"}
        assert store.get("d").payload is None
        assert store.snapshot("b") == before
        assert [i.key for i in iter_items(store)] == ["a", "b", "c", "d"]
        assert store.add([]) == (0, 0)
        assert_sound(store)


def test_add_streams_a_large_input(store_harness: StoreHarness) -> None:
    pulled = 0

    def seeds() -> Iterator[tuple[str, JSON]]:
        nonlocal pulled
        for i in range(12_000):
            pulled += 1
            yield f"k{i}", {"n": i} if i % 2 else None

    with opened(store_harness, keys=()) as store:
        assert store.add(seeds()) == (12_000, 0)
        assert pulled == 12_000
        stats = store.stats(now=T0)
        assert stats.counts[State.TODO] == 12_000 and stats.total == 12_000
        assert store.get("k11999").payload == {"n": 11_999}
        assert [
            i.key
            for i in store.page(PageQuery(after=store.page(PageQuery(limit=11_998)).next)).items
        ] == [
            "k11998",
            "k11999",
        ]
        assert store.add((f"k{i}", None) for i in range(11_990, 12_010)) == (10, 10)
        assert store.check() == []


def test_an_empty_key_is_refused(store_harness: StoreHarness) -> None:
    with opened(store_harness) as store, pytest.raises(LedgerError):
        store.add([("", None)])


def test_unknown_keys_are_not_found(store_harness: StoreHarness) -> None:
    with opened(store_harness) as store:
        with pytest.raises(NotFound, match="zzz"):
            store.get("zzz")
        with pytest.raises(NotFound, match="zzz"):
            store.snapshot("zzz")
        d = replace(make_draft(store.get("a"), "FAIL"), key="zzz")
        with pytest.raises(NotFound, match="zzz"):
            store.record(d, Claim("ann", 0), now=T0)
        assert not store.heartbeat("zzz", "ann", ttl=TTL, now=T0)
        assert not store.release("zzz", "ann")


def test_last_attempts_are_each_items_last_turn(store_harness: StoreHarness) -> None:
    with opened(store_harness, keys=[f"k{i:03d}" for i in range(700)]) as store:
        turn(store, "k000", "FAIL", driver="ann")
        turn(store, "k000", "PASS", driver="bo")
        turn(store, "k002", ERROR, driver="cy")
        turn(store, "k650", "REVIEW", driver="di")
        assert store.last_attempts([]) == {}
        # An item without a turn, or a key that names no item, is absent.
        found = store.last_attempts(["k000", "k001", "k002", "zzz", "k000"])
        assert sorted(found) == ["k000", "k002"]
        assert found["k000"] == store.snapshot("k000")[1][-1]
        assert (found["k000"].turn, found["k000"].driver, found["k000"].outcome) == (
            2,
            "bo",
            "PASS",
        )
        assert (found["k002"].kind, found["k002"].driver) == (AttemptKind.GENERATION_ERROR, "cy")
        # Any number of keys (a dashboard page holds up to 500; more are read in chunks).
        every = store.last_attempts([f"k{i:03d}" for i in range(700)])
        assert sorted(every) == ["k000", "k002", "k650"] and every["k650"].driver == "di"


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
        batch = store.claim_export("/nowhere/r.jsonl", 0, 1000)
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


def test_an_attempt_round_trips_every_field(store_harness: StoreHarness) -> None:
    with opened(store_harness) as store:
        d = full_draft("a")
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
