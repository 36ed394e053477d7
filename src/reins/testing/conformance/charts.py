"""Charts: ``activity``, the log over time, whole for a short log and sampled evenly for a
long one; ``recent``, its newest turns."""

from __future__ import annotations

from reins.store.model import AttemptKind, State
from reins.testing.conformance._kit import ERROR, act, opened, reopen, turn
from reins.testing.harness import StoreHarness

__all__ = [
    "test_activity_reads_a_short_log_whole",
    "test_activity_samples_a_long_log_evenly",
    "test_recent_reads_the_newest_turns_newest_first",
]


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


def test_recent_reads_the_newest_turns_newest_first(store_harness: StoreHarness) -> None:
    with opened(store_harness) as empty:
        assert empty.recent() == []
    with opened(store_harness, keys="abcd") as store:
        turn(store, "a", "FAIL", driver="ann")
        turn(store, "a", "PASS", driver="ann")
        turn(store, "b", ERROR, driver="bo")
        turn(store, "c", "REVIEW", driver="cy")
        act(store, reopen("c", note="again"))
        found = store.recent(limit=3)
        assert [(a.key, a.turn, a.kind, a.driver) for a in found] == [
            ("c", 2, AttemptKind.HUMAN, "pat"),
            ("c", 1, AttemptKind.JUDGED, "cy"),
            ("b", 1, AttemptKind.GENERATION_ERROR, "bo"),
        ]
        # Each is the whole attempt, as the item's log holds it.
        assert found[0] == store.snapshot("c")[1][-1] and found[0].note == "again"
        assert found[2].error == store.snapshot("b")[1][0].error
        every = store.recent(limit=100)
        assert [(a.key, a.turn) for a in every] == [
            ("c", 2),
            ("c", 1),
            ("b", 1),
            ("a", 2),
            ("a", 1),
        ]
        assert every[3].outcome == "PASS" and every[4].tries_after == 1
        assert store.recent(limit=0) == []
