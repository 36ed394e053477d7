"""Withdrawals: a lock in the results file that a person moves back to TODO (a reopen, or a
re-judge that fails) is withdrawn by a TODO record, exactly once, across crashes and stores,
so a reader of the file never trusts a lock that no longer stands."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from reins.store.export import export, record_of
from reins.store.model import State
from reins.store.protocol import Store
from reins.testing.conformance._kit import (
    PERSON,
    act,
    assert_sound,
    human,
    jsonl,
    keys_in,
    lock,
    opened,
    reopen,
    turn,
)
from reins.testing.harness import StoreHarness
from reins.values import readable_json

__all__ = [
    "test_a_lock_reopened_while_its_batch_is_written_is_withdrawn_after_it",
    "test_a_lock_resolved_after_its_export_and_reopened_before_the_next_is_withdrawn",
    "test_a_rejudge_that_fails_withdraws_the_lock_with_its_verdict",
    "test_a_reopened_lock_is_withdrawn_once_and_exported_again_when_it_locks",
    "test_a_withdrawal_goes_to_the_file_that_holds_the_lock",
    "test_a_withdrawal_left_open_by_a_crash_is_written_once",
    "test_nothing_is_withdrawn_that_never_reached_the_file",
    "test_two_stores_claiming_at_once_claim_each_withdrawal_once",
]


def _states(out: Path, key: str) -> list[tuple[str, int]]:
    return [(r["state"], r["round"]) for r in jsonl(out) if r["key"] == key]


def test_a_lock_resolved_after_its_export_and_reopened_before_the_next_is_withdrawn(
    store_harness: StoreHarness, tmp_path: Path
) -> None:
    """A REVIEW lock in the file, rejected (its mark cleared: exported again as DONE), then
    reopened before the next export: the file's last word on it is a withdrawal, not REVIEW.
    Resolved and exported before a reopen, the new lock supersedes it and nothing is owed."""
    out = tmp_path / "r.jsonl"
    with opened(store_harness) as store:
        lock(store, "a", "REVIEW")
        lock(store, "b", "REVIEW")
        assert export(store, out).count == 2
        act(store, human("a", State.DONE, "reject"))
        act(store, reopen("a"))
        act(store, human("b", State.PASS, "accept"))
        assert export(store, out).count == 2  # a's withdrawal, b's new lock
        last = {r["key"]: r for r in jsonl(out)}
        assert (last["a"]["state"], last["a"]["action"], last["a"]["round"]) == (
            "TODO",
            "reopen",
            2,
        )
        assert (last["b"]["state"], last["b"]["action"]) == ("PASS", "accept")
        assert export(store, out).count == 0 and store.meta("export.withdraw.b") is None
        assert_sound(store)


def test_a_reopened_lock_is_withdrawn_once_and_exported_again_when_it_locks(
    store_harness: StoreHarness, tmp_path: Path
) -> None:
    out = tmp_path / "r.jsonl"
    with opened(store_harness) as store:
        lock(store, "a", "PASS")
        lock(store, "b", "PASS")
        assert export(store, out).count == 2
        act(store, reopen("a", note="the gate was wrong"))
        assert_sound(store)
        assert export(store, out).count == 1  # the withdrawal
        record = jsonl(out)[-1]
        assert (record["key"], record["state"], record["round"], record["tries"]) == (
            "a",
            "TODO",
            2,
            0,
        )
        assert (record["action"], record["note"], record["driver"]) == (
            "reopen",
            "the gate was wrong",
            PERSON,
        )
        assert record["locked_at"] is None and record["outcome"] is None
        assert record["payload"] == {"word": "a"}
        assert export(store, out).count == 0  # once
        assert not store.get("a").exported and store.exported_count() == 1
        assert_sound(store)
        turn(store, "a", "FAIL")  # worked again: a turn of round 2 changes nothing written
        assert export(store, out).count == 0
        turn(store, "a", "PASS")
        assert export(store, out).count == 1
        assert _states(out, "a") == [("PASS", 1), ("TODO", 2), ("PASS", 2)]
        assert _states(out, "b") == [("PASS", 1)]
        assert store.exported_count() == 2
        assert_sound(store)


def test_a_rejudge_that_fails_withdraws_the_lock_with_its_verdict(
    store_harness: StoreHarness, tmp_path: Path
) -> None:
    out = tmp_path / "r.jsonl"
    with opened(store_harness) as store:
        lock(store, "a", "PASS")
        assert export(store, out).count == 1
        failed = human("a", State.TODO, "rejudge", note="new gate", new_round=True, outcome="FAIL")
        act(store, failed)
        assert export(store, out).count == 1
        record = jsonl(out)[-1]
        assert (record["state"], record["round"], record["action"], record["outcome"]) == (
            "TODO",
            2,
            "rejudge",
            "FAIL",
        )
        assert record["note"] == "new gate"
        assert_sound(store)


def test_nothing_is_withdrawn_that_never_reached_the_file(
    store_harness: StoreHarness, tmp_path: Path
) -> None:
    out = tmp_path / "r.jsonl"
    with opened(store_harness) as store:
        lock(store, "a", "PASS")
        act(store, reopen("a"))  # before any export
        lock(store, "b", "PASS")
        assert export(store, out).count == 1 and keys_in(out) == ["b"]
        act(store, reopen("b"))
        turn(store, "b", "PASS")  # locked again before the export: the new lock supersedes
        assert export(store, out).count == 1
        assert _states(out, "b") == [("PASS", 1), ("PASS", 2)]
        assert export(store, out).count == 0
        assert_sound(store)


def test_a_withdrawal_goes_to_the_file_that_holds_the_lock(
    store_harness: StoreHarness, tmp_path: Path
) -> None:
    out, other = tmp_path / "r.jsonl", tmp_path / "other.jsonl"
    with opened(store_harness) as store:
        lock(store, "a", "PASS")
        assert export(store, out).count == 1
        act(store, reopen("a"))
        assert export(store, other).count == 0 and jsonl(other) == []
        assert export(store, out).count == 1 and _states(out, "a") == [("PASS", 1), ("TODO", 2)]
        assert_sound(store)


def test_a_withdrawal_left_open_by_a_crash_is_written_once(
    store_harness: StoreHarness, tmp_path: Path
) -> None:
    out = tmp_path / "r.jsonl"
    with opened(store_harness) as store:
        lock(store, "a", "PASS")
        lock(store, "b", "PASS")
        assert export(store, out).count == 2
        act(store, reopen("a"))
        act(store, reopen("b"))
        # A writer claims both withdrawals, writes half a line and dies.
        batch = store.claim_export(str(out.resolve()), out.stat().st_size, 10)
        assert batch is not None
        assert [(e.item.key, e.item.state) for e in batch.entries] == [
            ("a", State.TODO),
            ("b", State.TODO),
        ]
        assert store.claim_export(str(out.resolve()), 0, 10) is None  # claimed already
        with out.open("a") as f:
            f.write('{"key":"a","sta')
        turn(store, "b", "PASS")  # b locks again meanwhile: a lock now, not a withdrawal
        assert store.get("b").exported is False
        assert_sound(store)
        assert export(store, out).count == 1  # b's new lock; a's withdrawal is finished on the way
        assert [(r["key"], r["state"], r["round"]) for r in jsonl(out)] == [
            ("a", "PASS", 1),
            ("b", "PASS", 1),
            ("a", "TODO", 2),
            ("b", "PASS", 2),
        ]
        assert export(store, out).count == 0 and store.open_export_paths() == []
        assert not store.get("a").exported and store.exported_count() == 1
        assert_sound(store)


def test_a_lock_reopened_while_its_batch_is_written_is_withdrawn_after_it(
    store_harness: StoreHarness, tmp_path: Path
) -> None:
    """The writer wrote the lock it read; the person's reopen landed meanwhile."""
    out = tmp_path / "r.jsonl"
    with opened(store_harness) as store:
        lock(store, "a", "PASS")
        batch = store.claim_export(str(out.resolve()), 0, 10)
        assert batch is not None and batch.entries[0].item.state is State.PASS
        act(store, reopen("a"))
        lines = "".join(readable_json(record_of(e)) + "\n" for e in batch.entries)
        out.write_text(lines)  # the writer goes on with what it claimed, then finishes
        store.finish_export(batch.id)
        assert_sound(store)
        assert export(store, out).count == 1
        assert _states(out, "a") == [("PASS", 1), ("TODO", 2)]
        assert_sound(store)


def test_two_stores_claiming_at_once_claim_each_withdrawal_once(
    store_harness: StoreHarness, tmp_path: Path
) -> None:
    """Claims from two processes (two hosts on one server: no shared file lock) race."""
    out = str((tmp_path / "r.jsonl").resolve())
    location = store_harness.create()
    keys = [f"k{i:02d}" for i in range(30)]
    with opened(store_harness, location, keys=keys) as store:
        for key in keys:
            lock(store, key, "PASS")
        assert export(store, out).count == 30
        for key in keys:
            act(store, reopen(key))
        claimed: list[list[str]] = [[], []]
        errors: list[BaseException] = []
        start = threading.Barrier(2)

        def work(n: int) -> None:
            try:
                other = store_harness.open(location)
                try:
                    start.wait()
                    _claim_all(other, out, claimed[n])
                finally:
                    other.close()
            except BaseException as exc:  # re-raised in the test's thread
                errors.append(exc)
                start.abort()

        threads = [threading.Thread(target=work, args=(n,)) for n in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        assert sorted(claimed[0] + claimed[1]) == keys
        assert export(store, out).count == 0
        assert all(not store.get(k).exported for k in keys)
        assert_sound(store)


def _claim_all(store: Store, path: str, into: list[str]) -> None:
    while (batch := store.claim_export(path, os.path.getsize(path), 3)) is not None:
        into += [e.item.key for e in batch.entries]
        store.finish_export(batch.id)
