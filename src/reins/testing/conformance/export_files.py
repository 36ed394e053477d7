"""Every file gets every lock once: a new file (``export --out`` another), a results file
deleted or cut, and files exported to in turn each hold each lock exactly once, and the
withdrawal of each one a person reopened (:mod:`reins.store.reconcile`)."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from reins.store.export import export
from reins.testing.conformance._kit import act, assert_sound, jsonl, keys_in, lock, opened, reopen
from reins.testing.harness import StoreHarness

__all__ = [
    "test_a_cut_file_gets_back_what_it_lost",
    "test_a_deleted_file_is_written_again_once",
    "test_a_new_file_gets_every_lock_once",
    "test_files_exported_to_in_turn_each_hold_each_record_once",
]


def _last(out: Path) -> dict[str, tuple[str, int]]:
    return {r["key"]: (r["state"], r["round"]) for r in jsonl(out)}


def test_a_new_file_gets_every_lock_once(store_harness: StoreHarness, tmp_path: Path) -> None:
    home, new = tmp_path / "results.jsonl", tmp_path / "new.jsonl"
    with opened(store_harness) as store:
        lock(store, "a", "PASS")
        lock(store, "b", "REVIEW")
        assert export(store, home).count == 2
        assert export(store, new).count == 2
        assert export(store, new).count == 0 and export(store, home).count == 0
        assert keys_in(new) == keys_in(home) == ["a", "b"]
        assert jsonl(new) == jsonl(home)  # the same records
        assert_sound(store)


def test_a_deleted_file_is_written_again_once(store_harness: StoreHarness, tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    with opened(store_harness) as store:
        lock(store, "a", "PASS")
        assert export(store, out).count == 1
        out.unlink()
        lock(store, "b", "PASS")  # locked meanwhile, not exported yet
        assert export(store, out).count == 2
        assert export(store, out).count == 0
        assert sorted(keys_in(out)) == ["a", "b"]
        assert_sound(store)


def test_a_cut_file_gets_back_what_it_lost(store_harness: StoreHarness, tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    with opened(store_harness) as store:
        for key in ("a", "b", "c"):
            lock(store, key, "PASS")
        assert export(store, out).count == 3
        lines = out.read_bytes().splitlines(keepends=True)
        out.write_bytes(lines[0] + lines[1][:9])  # b's record cut short (a crash), c's gone
        assert os.path.getsize(out) < sum(map(len, lines))
        assert export(store, out).count == 2
        assert keys_in(out) == ["a", "b", "c"]  # the cut line is cut off, not left in between
        assert export(store, out).count == 0
        out.write_bytes(out.read_bytes() + b'{"key": "mine"}')  # a line of someone else's
        assert export(store, out).count == 0
        assert keys_in(out) == ["a", "b", "c", "mine"] and out.read_bytes().endswith(b"}\n")


def test_files_exported_to_in_turn_each_hold_each_record_once(
    store_harness: StoreHarness, tmp_path: Path
) -> None:
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    with opened(store_harness) as store:
        lock(store, "a", "PASS")
        assert export(store, one).count == 1
        lock(store, "b", "PASS")
        assert export(store, two).count == 2  # a and b
        lock(store, "c", "PASS")
        assert export(store, one).count == 2  # b and c
        act(store, reopen("a"))  # the turn exports nothing: the withdrawal is owed
        assert export(store, two).count == 2  # c, and a's withdrawal
        assert export(store, one).count == 1  # a's withdrawal
        lock(store, "a", "PASS")
        for out in (two, one, two, one):
            export(store, out)
        for out in (one, two):
            records = Counter((r["key"], r["state"], r["round"]) for r in jsonl(out))
            assert set(records.values()) == {1}, out  # no record twice
            assert _last(out) == {"a": ("PASS", 2), "b": ("PASS", 1), "c": ("PASS", 1)}
        assert_sound(store)
