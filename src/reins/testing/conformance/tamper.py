"""Tamper evidence: a ledger written by hand, past reins, as an agent with the file (or the
server) in reach could. ``check()`` names every lock no attempt produced, every gap in a log and
every attempt that does not follow from the turn before; ``refused_locks`` lists the locks no
export writes, and the export claims none of them, holds up nothing for them, and exports the
item again once a person reopens it and it locks by a turn (:mod:`reins.store.provenance`).

The SQL here is what both engines take alike; what only one engine's tables allow (fixing the
counters the forgery left behind) is in the engine's own tests.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import reins.store.export as export_module
from reins.store.export import export
from reins.store.model import State
from reins.testing.conformance._kit import act, jsonl, keys_in, lock, opened, reopen, turn
from reins.testing.harness import StoreHarness

__all__ = [
    "test_a_gap_in_a_log_is_named",
    "test_a_lock_written_by_hand_is_named_and_never_exported",
    "test_a_refused_lock_holds_up_no_other_item",
    "test_a_reopened_forged_lock_is_exported_once_it_locks_by_a_turn",
    "test_a_withdrawal_owed_by_an_item_locked_by_hand_stays_owed",
    "test_every_forged_lock_is_named",
]

STAMP = "2026-01-01T00:00:00.000Z"


def move(key: str, *, turns: str = "turns", where: str | None = None) -> str:
    """The forgery of issue 26: an item set PASS, with its lock time, by one UPDATE (of the
    item ``key``, or those ``where`` says)."""
    return (
        f"UPDATE items SET state = 'PASS', locked_at = '{STAMP}', turns = {turns} "
        f"WHERE {where or f'key = {key!r}'}"
    )


def attempt(
    key: str, kind: str, outcome: str | None, state: str, tries: str, *, turn: str = "turns + 1"
) -> str:
    """An attempt row appended by hand, at the item's next turn unless ``turn`` says."""
    said = "NULL" if outcome is None else f"'{outcome}'"
    return (
        "INSERT INTO attempts (item_id, turn, kind, driver, state_after, tries_after, outcome, "
        f"recorded_at, round) SELECT id, {turn}, '{kind}', 'forger', '{state}', {tries}, "
        f"{said}, '{STAMP}', round FROM items WHERE key = '{key}'"
    )


LOCKED = "is PASS, but no attempt locked it"
# Each forgery on a ledger where a is PASS by a turn and b has one judged FAIL (c is fresh):
# the statements, the forged item, and what check() says of it.
FORGERIES: dict[str, tuple[tuple[str, ...], str, tuple[str, ...]]] = {
    "fresh-item-set-pass": (
        (move("c"),),
        "c",
        (f"item c {LOCKED}: it has no attempt in its log",),
    ),
    "failed-item-set-pass": (
        (move("b"),),
        "b",
        (f"item b {LOCKED}: its last attempt (turn 1) is a judged FAIL that left it TODO",),
    ),
    "attempt-row-whose-fail-left-pass": (
        (attempt("b", "judged", "FAIL", "PASS", "tries + 1"), move("b", turns="turns + 1")),
        "b",
        (
            f"item b {LOCKED}: its last attempt (turn 2) is a judged FAIL that left it PASS, "
            "where turn.md's record table has it leave TODO or DONE",
            "item b: turn 2 is a judged FAIL that left it PASS, where turn.md's record table "
            "has it leave TODO or DONE",
        ),
    ),
    "attempt-row-whose-pass-used-a-try": (
        (
            attempt("b", "judged", "PASS", "PASS", "tries + 1"),
            "UPDATE items SET tries = tries + 1 WHERE key = 'b'",
            move("b", turns="turns + 1"),
        ),
        "b",
        (
            f"item b {LOCKED}: its last attempt (turn 2) is a judged PASS that left 2 failures "
            "used after the turn before left 1, where a PASS uses none",
            "item b: turn 2 is a judged PASS that left 2 failures used after the turn before "
            "left 1, where a PASS uses none",
        ),
    ),
    "attempt-row-of-a-generation-error-that-locks": (
        (
            attempt("b", "generation_error", None, "PASS", "tries"),
            move("b", turns="turns + 1"),
        ),
        "b",
        (
            f"item b {LOCKED}: its last attempt (turn 2) is a generation error, which never locks",
            "item b: turn 2 is a generation error that left it PASS: an error never locks",
        ),
    ),
}


@pytest.mark.parametrize("forgery", FORGERIES.values(), ids=FORGERIES.keys())
def test_a_lock_written_by_hand_is_named_and_never_exported(
    store_harness: StoreHarness,
    tmp_path: Path,
    forgery: tuple[tuple[str, ...], str, tuple[str, ...]],
) -> None:
    statements, key, said = forgery
    out = tmp_path / "results.jsonl"
    location = store_harness.create()
    with opened(store_harness, location) as store:
        lock(store, "a", "PASS")
        turn(store, "b", "FAIL")
        for statement in statements:
            store_harness.execute(location, statement)
        assert store.get(key).state is State.PASS
        problems = store.check()
        # The item, named in plain words, whatever else is found: the counters the triggers
        # keep agree (a moved item is counted as PASS), those of the log miss a forged row.
        assert problems[: len(said)] == list(said), problems
        assert all(p.startswith("the kept count") for p in problems[len(said) :]), problems
        [fault] = store.refused_locks()
        assert (fault.key, fault.state, fault.words()) == (key, "PASS", said[0])
        for _ in range(2):  # refused by every export, not only the first
            done = export(store, out)
            assert keys_in(out) == ["a"]
            assert [(f.key, f.words()) for f in done.refused] == [(key, said[0])]
            assert done.refusal() is not None and said[0] in (done.refusal() or "")
        assert not store.get(key).exported and store.exported_count() == 1


def test_every_forged_lock_is_named(store_harness: StoreHarness, tmp_path: Path) -> None:
    keys = [f"k{n:02d}" for n in range(30)]  # more than the first rows other checks show
    location = store_harness.create()
    with opened(store_harness, location, keys=keys) as store:
        store_harness.execute(location, move("", where="key LIKE 'k%'"))
        assert store.check() == [f"item {k} {LOCKED}: it has no attempt in its log" for k in keys]
        assert [f.key for f in store.refused_locks()] == keys
        assert export(store, tmp_path / "r.jsonl").count == 0


def test_a_refused_lock_holds_up_no_other_item(
    store_harness: StoreHarness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The claim passes over refused locks: batches smaller than their number still reach the
    sound locks added after them."""
    monkeypatch.setattr(export_module, "BATCH_SIZE", 2)
    out = tmp_path / "results.jsonl"
    forged, sound = [f"f{n}" for n in range(5)], [f"s{n}" for n in range(3)]
    location = store_harness.create()
    with opened(store_harness, location, keys=forged + sound) as store:
        for key in forged:
            store_harness.execute(location, move(key))
        for key in sound:
            lock(store, key, "PASS")
        done = export(store, out)
        assert (done.count, sorted(keys_in(out))) == (3, sound)
        assert [f.key for f in done.refused] == forged
        assert store.exported_count() == 3 and store.open_export_paths() == []


def test_a_reopened_forged_lock_is_exported_once_it_locks_by_a_turn(
    store_harness: StoreHarness, tmp_path: Path
) -> None:
    out = tmp_path / "results.jsonl"
    location = store_harness.create()
    with opened(store_harness, location) as store:
        store_harness.execute(location, move("c"))
        assert export(store, out).refused and keys_in(out) == []
        act(store, reopen("c"))  # a person sends the forged lock back: it owes the file nothing
        assert store.refused_locks() == []
        done = export(store, out)
        assert (done.count, done.refused, keys_in(out)) == (0, (), [])
        lock(store, "c", "PASS")
        assert export(store, out).count == 1
        [record] = jsonl(out)
        assert (record["key"], record["state"], record["round"]) == ("c", "PASS", 2)
        # The log keeps the mark of the forgery: the person's reopen acted on a lock it lacks.
        assert store.check() == [
            "item c: turn 1 is a person's reopen that acts on an item the turn before left "
            "TODO, where it applies to a lock (as when a person reopens a lock no attempt "
            "produced)"
        ]


def test_a_withdrawal_owed_by_an_item_locked_by_hand_stays_owed(
    store_harness: StoreHarness, tmp_path: Path
) -> None:
    """A reopened lock in the file, then the item locked by hand before any export: the
    forged lock is refused, and the file's record is still withdrawn once a person reopens
    the item again (dropping the entry, as for an item locked by a turn, would leave the file
    saying PASS)."""
    out = tmp_path / "results.jsonl"
    location = store_harness.create()
    with opened(store_harness, location) as store:
        lock(store, "a", "PASS")
        assert export(store, out).count == 1
        act(store, reopen("a"))  # owes the file a withdrawal; no export runs
        store_harness.execute(location, move("a"))
        done = export(store, out)
        assert (done.count, [f.key for f in done.refused]) == (0, ["a"])
        assert store.meta("export.withdraw.a") == str(out.resolve())
        act(store, reopen("a"))
        assert export(store, out).count == 1
        assert [(r["key"], r["state"]) for r in jsonl(out)] == [("a", "PASS"), ("a", "TODO")]
        assert store.meta("export.withdraw.a") is None


def test_a_gap_in_a_log_is_named(store_harness: StoreHarness) -> None:
    location = store_harness.create()
    with opened(store_harness, location) as store:
        turn(store, "a", "FAIL")
        turn(store, "b", "FAIL")
        # Turn 3 appended past a missing turn 2: once with the item's count moved on, once not.
        for key, counts in (("a", "turns + 2"), ("b", "turns")):
            skipping = attempt(key, "judged", "FAIL", "TODO", "tries + 1", turn="turns + 2")
            store_harness.execute(location, skipping)
            store_harness.execute(
                location, f"UPDATE items SET turns = {counts} WHERE key = '{key}'"
            )
        problems = store.check()
        assert "item a: its log skips turn 2 (it holds 2 attempt(s) numbered up to 3)" in problems
        assert (
            "item b: its log skips turn 2 (it holds 2 attempt(s) numbered up to 3, and the item "
            "counts 1)" in problems
        )
