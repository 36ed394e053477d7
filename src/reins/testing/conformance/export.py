"""Export: every terminal item reaches the results file exactly once, across crashes, stores
and threads. The file side is :func:`reins.store.export.export`; the store keeps the batches."""

from __future__ import annotations

import os
import threading
from collections import Counter
from pathlib import Path

import pytest

import reins.store.export as export_module
from reins.store.export import export
from reins.store.model import State
from reins.testing.conformance._kit import QUEST, T0, assert_sound, jsonl, keys_in, opened, turn
from reins.testing.harness import StoreHarness
from reins.turn.submit import submit

__all__ = [
    "test_a_batch_left_open_by_a_crash_is_rewritten_once",
    "test_a_batch_left_open_by_another_process_is_finished_once",
    "test_a_crashed_batch_for_another_file_is_finished_by_any_export",
    "test_a_locking_submit_exports_automatically",
    "test_a_shortened_file_is_not_padded",
    "test_concurrent_exports_write_each_item_once",
    "test_export_writes_terminal_items_once",
]


def test_export_writes_terminal_items_once(store_harness: StoreHarness, tmp_path: Path) -> None:
    out = tmp_path / "out" / "r.jsonl"
    with opened(store_harness) as store:
        submit(store, QUEST, "a", "good", driver="t")
        submit(store, QUEST, "b", "bad", driver="t")  # FAIL with tries left: not terminal
        assert store.exported_count() == 0
        assert export(store, out).count == 1
        assert export(store, out).count == 0
        [record] = jsonl(out)
        assert record["key"] == "a" and record["state"] == "PASS"
        assert record["submission"] == "good" and record["outcome"] == "PASS"
        assert record["payload"] == {"word": "a"}
        assert (record["tries"], record["turns"], record["driver"]) == (0, 1, "t")
        assert record["locked_at"] == store.get("a").locked_at
        assert oct(out.stat().st_mode & 0o777) == "0o600"
        assert store.exported_count() == 1
        assert store.get("a").exported and not store.get("b").exported
        assert store.open_export_paths() == []
        assert_sound(store)


def test_a_locking_submit_exports_automatically(
    store_harness: StoreHarness, tmp_path: Path
) -> None:
    out = tmp_path / "r.jsonl"
    with opened(store_harness) as store:
        _, n = submit(store, QUEST, "a", "meh", driver="t", results=out)
        assert n.count == 1 and jsonl(out)[0]["state"] == "REVIEW"
        assert jsonl(out)[0]["root_cause"] == "not-meh"
        _, n = submit(store, QUEST, "b", "bad", driver="t", results=out)
        assert n.count == 0 and len(jsonl(out)) == 1


def test_a_batch_left_open_by_a_crash_is_rewritten_once(
    store_harness: StoreHarness, tmp_path: Path
) -> None:
    out = tmp_path / "r.jsonl"
    with opened(store_harness) as store:
        turn(store, "a", "PASS")
        assert export(store, out).count == 1
        turn(store, "b", "PASS")
        # A process claims a batch, writes half a line, and dies before finishing it.
        batch = store.claim_export(str(out.resolve()), out.stat().st_size, 10)
        assert batch is not None and [e.item.key for e in batch.entries] == ["b"]
        assert batch.offset == out.stat().st_size and batch.path == str(out.resolve())
        assert batch.entries[0].attempt is not None
        assert batch.entries[0].attempt.outcome == "PASS"
        assert store.claim_export(str(out.resolve()), 0, 10) is None  # b is claimed already
        assert [b.id for b in store.open_exports(str(out.resolve()))] == [batch.id]
        assert store.open_export_paths() == [str(out.resolve())]
        assert store.exported_count() == 1
        with out.open("a") as f:
            f.write('{"key":"b","sta')
        assert export(store, out).count == 0  # nothing new; the open batch is finished on the way
        assert keys_in(out) == ["a", "b"]
        assert store.exported_count() == 2
        assert store.open_exports(str(out.resolve())) == []
        assert store.open_export_paths() == []
        assert_sound(store)


def test_a_batch_left_open_by_another_process_is_finished_once(
    store_harness: StoreHarness, tmp_path: Path
) -> None:
    out = tmp_path / "r.jsonl"
    location = store_harness.create()
    with opened(store_harness, location, keys="abcde") as store:
        for key in "abd":
            turn(store, key, "PASS")
        dead = store_harness.open(location)  # the process that dies mid-export
        batch = dead.claim_export(str(out.resolve()), 0, 2)
        assert batch is not None and [e.item.key for e in batch.entries] == ["a", "b"]
        out.write_bytes(b'{"key":"a"}\n{"ke')
        dead.close()
        turn(store, "e", "REVIEW")
        assert export(store, out).count == 2  # d and e; a and b were the dead process's batch
        assert sorted(keys_in(out)) == ["a", "b", "d", "e"]
        assert store.exported_count() == 4
        with opened(store_harness, location, keys=()) as later:
            assert later.exported_count() == 4 and export(later, out).count == 0
        assert_sound(store)


def test_a_crashed_batch_for_another_file_is_finished_by_any_export(
    store_harness: StoreHarness, tmp_path: Path
) -> None:
    other = tmp_path / "other.jsonl"
    with opened(store_harness) as store:
        turn(store, "a", "PASS")
        assert store.claim_export(str(other.resolve()), 0, 10) is not None
        assert export(store, tmp_path / "main.jsonl").count == 1  # main held none of it
        assert keys_in(other) == ["a"]
        assert keys_in(tmp_path / "main.jsonl") == ["a"]
        assert store.exported_count() == 1 and store.open_export_paths() == []


def test_a_shortened_file_is_not_padded(store_harness: StoreHarness, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    with opened(store_harness) as store:
        turn(store, "a", "PASS")
        assert store.claim_export(str(out.resolve()), 500, 10) is not None  # beyond the file
        export(store, out)
        assert b"\x00" not in out.read_bytes()
        assert keys_in(out) == ["a"]
        assert os.path.getsize(out) > 0


def test_concurrent_exports_write_each_item_once(
    store_harness: StoreHarness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(export_module, "BATCH_SIZE", 3)  # many batches, so they interleave
    out = tmp_path / "r.jsonl"
    location = store_harness.create()
    keys = [f"k{i:02d}" for i in range(40)]
    errors: list[BaseException] = []
    start = threading.Barrier(2)

    def work(mine: list[str]) -> None:
        try:
            store = store_harness.open(location)
            try:
                start.wait()
                for n, key in enumerate(mine):
                    turn(store, key, "PASS" if n % 3 else "FAIL")
                    if n % 4 == 3:
                        export(store, out)
                export(store, out)
            finally:
                store.close()
        except BaseException as exc:  # re-raised in the test's thread
            errors.append(exc)
            start.abort()

    with opened(store_harness, location, keys=keys) as store:
        threads = [threading.Thread(target=work, args=(keys[i::2],)) for i in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        export(store, out)
        terminal = sorted(i.key for i in (store.get(k) for k in keys) if i.state is not State.TODO)
        written = Counter(keys_in(out))
        assert sorted(written) == terminal and set(written.values()) == {1}
        assert store.exported_count() == len(terminal) == 26
        assert store.stats(now=T0).remaining == 14
        assert_sound(store)
