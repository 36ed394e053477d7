"""Properties: remaining never grows, terminal absorbs, store→load round-trips, verdicts repeat."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reins import Item, NotTodo, Quest, SQLiteStore, State
from reins.store.walk import iter_items
from reins.turn import GenerationFailure, Origin, judge, record, submit
from tests.kit import TINY

ANSWERS = st.sampled_from(["good", "bad", "meh", "skip", "block", "explode", "bad meh", "\xff"])
KEYS = st.sampled_from(["a", "b", "c"])
STEPS = st.lists(st.tuples(KEYS, st.one_of(ANSWERS, st.just(None))), max_size=25)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=STEPS, max_tries=st.integers(1, 4))
def test_remaining_never_grows_and_terminal_items_absorb(
    steps: list[tuple[str, str | None]], max_tries: int
) -> None:
    import dataclasses

    quest: Quest = dataclasses.replace(TINY, max_tries=max_tries)
    with (
        tempfile.TemporaryDirectory() as tmp,
        SQLiteStore.open(Path(tmp) / "p.db", create=True) as led,
    ):
        led.add((s[0], s[1]) for s in quest.seed([]))
        remaining = led.stats().remaining
        locked: dict[str, Item] = {}
        for key, answer in steps:
            try:
                if answer is None:
                    failure = GenerationFailure("backend down")
                    record(led, quest, led.get(key), failure, Origin(), driver="p", pinned=False)
                else:
                    submit(led, quest, key, answer.encode("latin-1"), driver="p")
            except NotTodo:
                assert key in locked
            now = led.stats().remaining
            assert now <= remaining
            remaining = now
            item = led.get(key)
            if key in locked:
                assert (item.state, item.tries, item.turns) == (
                    locked[key].state,
                    locked[key].tries,
                    locked[key].turns,
                )
            elif item.state.terminal:
                locked[key] = item
            assert item.tries <= max_tries
        stats = led.stats()
        assert stats.total == 3
        assert sum(stats.counts.values()) == 3
        assert stats.remaining == sum(1 for i in iter_items(led) if i.state is State.TODO)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=60, deadline=None)
@given(items=st.dictionaries(st.text(min_size=1), JSON, min_size=1, max_size=12))
def test_store_then_load_returns_every_item_unchanged(items: dict[str, object]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "r.db"
        with SQLiteStore.open(path, create=True) as led:
            led.add(items.items())
        with SQLiteStore.open(path) as led:
            loaded = {i.key: i.payload for i in iter_items(led)}
            assert all(i.state is State.TODO and i.tries == 0 for i in iter_items(led))
    assert loaded == items


@settings(max_examples=60, deadline=None)
@given(raw=st.binary(max_size=64) | st.text(max_size=64))
def test_the_same_submission_always_gets_the_same_verdict(raw: bytes | str) -> None:
    item = Item(key="a", state=State.TODO, tries=0, payload={"word": "a"})
    assert judge(TINY, item, raw) == judge(TINY, item, raw)
