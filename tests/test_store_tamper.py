"""A forged lock whose forger also put right what the ledger keeps beside the items, on both
engines: the counters the triggers keep (bypassed, then fixed by hand) and the counts of the
log. ``check()`` still names the item, and no export writes it. (The forgeries every engine
takes alike are in the conformance suite, reins.testing.conformance.tamper.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reins.store.export import export
from reins.testing.conformance._kit import keys_in, lock, opened, turn
from reins.testing.conformance.tamper import LOCKED, attempt, move
from reins.testing.harness import StoreHarness

# Per engine: its own words for dropping the trigger that keeps the count per state, for
# moving one item from TODO to PASS in that count, and for counting one more judged attempt.
BYPASS = {
    "sqlite": "DROP TRIGGER items_recounted",
    "postgres": "DROP TRIGGER items_recounted ON items",
}
RECOUNT = {
    "sqlite": (
        "UPDATE state_counts SET n = n - 1 WHERE state = 'TODO'",
        "UPDATE state_counts SET n = n + 1 WHERE state = 'PASS'",
    ),
    "postgres": (
        "INSERT INTO state_count_shards AS c (shard, state, n) VALUES (0, 'TODO', -1), "
        "(0, 'PASS', 1) ON CONFLICT (shard, state) DO UPDATE SET n = c.n + excluded.n",
    ),
}
COUNT_ATTEMPT = {
    "sqlite": "UPDATE usage_totals SET attempts = attempts + 1, judged = judged + 1",
    "postgres": "UPDATE usage_shards SET attempts = attempts + 1, judged = judged + 1 "
    "WHERE shard = 0",
}
MOVED = f"item c {LOCKED}: it has no attempt in its log"
FORGED_ROW = (
    f"item b {LOCKED}: its last attempt (turn 2) is a judged FAIL that left it PASS, where "
    "turn.md's record table has it leave TODO or DONE",
    "item b: turn 2 is a judged FAIL that left it PASS, where turn.md's record table has it "
    "leave TODO or DONE",
)


def forged(store_harness: StoreHarness, statements: list[str], tmp_path: Path) -> list[str]:
    """What ``check()`` says after ``statements``, on a ledger where a is PASS by a turn, b has
    a judged FAIL and c is fresh; and that the export wrote a alone."""
    location = store_harness.create()
    with opened(store_harness, location) as store:
        lock(store, "a", "PASS")
        turn(store, "b", "FAIL")
        for statement in statements:
            store_harness.execute(location, statement)
        out = tmp_path / "results.jsonl"
        done = export(store, out)
        assert keys_in(out) == ["a"] and len(done.refused) == 1
        return store.check()


@pytest.mark.parametrize("fixed", [False, True], ids=["counters-left", "counters-fixed"])
def test_a_lock_moved_past_the_counting_trigger_is_named(
    store_harness: StoreHarness, tmp_path: Path, fixed: bool
) -> None:
    engine = store_harness.name
    statements = [BYPASS[engine], move("c"), *(RECOUNT[engine] if fixed else ())]
    problems = forged(store_harness, statements, tmp_path)
    if fixed:
        assert problems == [MOVED]
    else:
        assert problems[0] == MOVED and len(problems) == 3
        assert all(
            re.fullmatch(r"the kept count of \w+ items is \d+, but the ledger holds \d+", p)
            for p in problems[1:]
        ), problems


@pytest.mark.parametrize("fixed", [False, True], ids=["counts-left", "counts-fixed"])
def test_a_forged_attempt_row_is_named_whether_the_log_s_counts_agree_or_not(
    store_harness: StoreHarness, tmp_path: Path, fixed: bool
) -> None:
    row = attempt("b", "judged", "FAIL", "PASS", "tries + 1")
    statements = [row, move("b", turns="turns + 1")]
    if fixed:
        statements.append(COUNT_ATTEMPT[store_harness.name])
    problems = forged(store_harness, statements, tmp_path)
    assert problems[:2] == list(FORGED_ROW)
    if fixed:
        assert problems == list(FORGED_ROW)
    else:
        assert {p.split(" is ")[0] for p in problems[2:]} == {
            "the kept count of judged attempts",
            "the kept count of attempts",
        }
