"""What a dashboard reads: pages by round, by text in the key, newest first; and the log's
activity over time, whole for a short log and sampled evenly for a long one."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from reins.store.model import AttemptKind, State
from reins.store.protocol import Store
from reins.store.query import PageQuery
from reins.testing.conformance._kit import assert_sound, opened, turn
from reins.testing.conformance.human import act, lock, reopen
from reins.testing.harness import StoreHarness


def _keys(store: Store, limit: int, **filters: Any) -> list[list[str]]:
    """The keys of every page under ``filters``, following the cursors to the last page."""
    pages: list[list[str]] = []
    wanted = PageQuery(limit=limit, **filters)
    while True:
        page = store.page(wanted)
        pages.append([item.key for item in page.items])
        if page.next is None:
            return pages
        assert len(page.items) == limit and len(pages) < 1000
        wanted = replace(wanted, after=page.next)


def test_pages_run_newest_first_when_descending(store_harness: StoreHarness) -> None:
    keys = [f"k{i:02d}" for i in range(11)]
    with opened(store_harness, keys=keys) as store:
        turn(store, "k03", "PASS")
        newest = list(reversed(keys))
        assert _keys(store, 4, descending=True) == [newest[:4], newest[4:8], newest[8:]]
        assert _keys(store, 11, descending=True) == [newest]
        assert _keys(store, 2, descending=True, state=State.PASS) == [["k03"]]
        todo = [k for k in newest if k != "k03"]
        assert [k for p in _keys(store, 3, descending=True, state=State.TODO) for k in p] == todo
    with opened(store_harness, keys=()) as empty:
        assert _keys(empty, 3, descending=True) == [[]]


def test_pages_filter_by_text_in_the_key(store_harness: StoreHarness) -> None:
    keys = ["alpha", "Alphabet", "beta", "gamma-alpha", "50%_off", "5x_off", "é-alpha", "del"]
    with opened(store_harness, keys=keys) as store:
        found = [k for p in _keys(store, 2, contains="alpha") for k in p]
        assert found == ["alpha", "gamma-alpha", "é-alpha"]  # case-sensitive
        # No wildcard: % and _ are plain characters.
        assert [k for p in _keys(store, 5, contains="%_") for k in p] == ["50%_off"]
        assert [k for p in _keys(store, 5, contains="_off") for k in p] == ["50%_off", "5x_off"]
        assert _keys(store, 5, contains="zeta") == [[]]
        turn(store, "gamma-alpha", "PASS")
        assert _keys(store, 5, contains="alpha", state=State.PASS) == [["gamma-alpha"]]
        assert _keys(store, 5, contains="alpha", descending=True) == [
            ["é-alpha", "gamma-alpha", "alpha"]
        ]


def test_pages_filter_by_round(store_harness: StoreHarness) -> None:
    with opened(store_harness, keys=[f"k{i}" for i in range(7)]) as store:
        for key in ("k1", "k4", "k5"):
            lock(store, key, "PASS")
            act(store, reopen(key))
        lock(store, "k4", "PASS")
        act(store, reopen("k4"))  # round 3
        assert [k for p in _keys(store, 1, round=2) for k in p] == ["k1", "k5"]
        assert _keys(store, 5, round=3) == [["k4"]]
        assert _keys(store, 5, round=1) == [["k0", "k2", "k3", "k6"]]
        assert _keys(store, 5, round=4) == [[]]
        assert _keys(store, 5, round=2, descending=True) == [["k5", "k1"]]
        assert_sound(store)


def test_activity_reads_a_short_log_whole(store_harness: StoreHarness) -> None:
    with opened(store_harness) as empty:
        nothing = empty.activity()
        assert nothing.marks == () and nothing.total == 0 and not nothing.sampled
    with opened(store_harness, keys="abcd") as store:
        turn(store, "a", "FAIL")
        turn(store, "a", "PASS")
        turn(store, "b", "ERROR")
        turn(store, "c", "REVIEW")
        act(store, reopen("c"))
        found = store.activity()
        assert not found.sampled and found.total == 5
        assert [(m.kind, m.state_after, m.tries_after) for m in found.marks] == [
            (AttemptKind.JUDGED, State.TODO, 1),
            (AttemptKind.JUDGED, State.PASS, 1),  # a PASS uses no try
            (AttemptKind.GENERATION_ERROR, State.TODO, 0),
            (AttemptKind.JUDGED, State.REVIEW, 0),
            (AttemptKind.HUMAN, State.TODO, 0),
        ]
        assert [m.locked for m in found.marks] == [False, True, False, True, False]
        times = [m.recorded_at for m in found.marks]
        assert times == sorted(times) and all(t.endswith("Z") for t in times)


def test_activity_samples_a_long_log_evenly(store_harness: StoreHarness) -> None:
    keys = [f"k{i:03d}" for i in range(150)]
    with opened(store_harness, keys=keys) as store:
        for key in keys:
            turn(store, key, "FAIL")
        for key in keys[:50]:
            turn(store, key, "PASS")
        found = store.activity(samples=4, window=10)
        assert found.total == 200 and found.sampled
        assert len(found.marks) == 40
        # The first run starts the log, the last one ends it.
        assert not found.marks[0].locked and found.marks[-1].locked
        assert sum(m.locked for m in found.marks) == 10
        assert found.marks == store.activity(samples=4, window=10).marks
        whole = store.activity(samples=20, window=10)
        assert not whole.sampled and len(whole.marks) == 200
