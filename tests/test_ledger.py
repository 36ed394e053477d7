"""The SQLite ledger: creation, refusal of foreign files, items, leases, the ratchet."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest
from reins.ledger import Attempt, AttemptKind, Item, Transition
from reins.ledger.schema import APPLICATION_ID, SCHEMA_VERSION

from reins import CorruptLedger, IllegalTransition, LeaseConflict, Ledger, NotFound, NotTodo, State


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def judged(outcome: str = "FAIL") -> Attempt:
    return Attempt(
        key="",
        turn=0,
        kind=AttemptKind.JUDGED,
        driver="",
        state_after=State.TODO,
        tries_after=0,
        outcome=outcome,
    )


def test_a_missing_ledger_is_not_created_unless_asked(tmp_path: Path) -> None:
    with pytest.raises(NotFound, match="reins scan"):
        Ledger.open(tmp_path / "none.db")
    assert not (tmp_path / "none.db").exists()


def test_a_new_ledger_carries_its_marks(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    Ledger.open(path, create=True).close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    conn.close()
    assert not list(tmp_path.glob(".*.tmp"))


def test_a_file_that_is_not_sqlite_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("these are my notes, not a database\n" * 10)
    before = digest(path)
    with pytest.raises(CorruptLedger, match="not a reins ledger"):
        Ledger.open(path, create=True)
    assert digest(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.db"]


def test_another_sqlite_database_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    before = digest(path)
    with pytest.raises(CorruptLedger, match="not a reins ledger"):
        Ledger.open(path)
    assert digest(path) == before


def test_a_ledger_from_a_newer_schema_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "future.db"
    Ledger.open(path, create=True).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.commit()
    conn.close()
    before = digest(path)
    with pytest.raises(CorruptLedger, match="Upgrade reins-quest"):
        Ledger.open(path)
    assert digest(path) == before


def test_a_damaged_ledger_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "damaged.db"
    with Ledger.open(path, create=True) as led:
        led.add((f"k{i}", {"n": i}) for i in range(2000))
    data = bytearray(path.read_bytes())
    data[4096:] = b"\xff" * (len(data) - 4096)  # scribble over every page after the first
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptLedger, match="damaged"), Ledger.open(path) as led:
        list(led.items())
        led.stats()


def test_add_dedupes_by_key_and_leaves_existing_items_untouched(ledger: Ledger) -> None:
    added, present = ledger.add([("a", {"word": "changed"}), ("d", None), ("d", 1)])
    assert (added, present) == (1, 2)
    assert ledger.get("a").payload == {"word": "a"}
    assert ledger.get("d").payload is None
    assert [i.key for i in ledger.items()] == ["a", "b", "c", "d"]


def test_add_consumes_its_input_lazily(tmp_path: Path) -> None:
    pulled = 0

    def seeds():  # type: ignore[no-untyped-def]
        nonlocal pulled
        for i in range(12_000):
            pulled += 1
            yield f"k{i}", None

    with Ledger.open(tmp_path / "l.db", create=True) as led:
        assert led.add(seeds()) == (12_000, 0)
        assert led.stats().counts[State.TODO] == 12_000
    assert pulled == 12_000


def test_an_empty_key_is_refused(ledger: Ledger) -> None:
    with pytest.raises(Exception, match="non-empty"):
        ledger.add([("", None)])


def test_one_driver_holds_one_item_and_gets_it_again(ledger: Ledger) -> None:
    first = ledger.lease_next("ann", ttl=60, now=1000.0)
    again = ledger.lease_next("ann", ttl=60, now=1001.0)
    assert first is not None and again is not None
    assert first.item.key == again.item.key == "a"
    assert again.renewed and again.nexts_since_submit == 2


def test_two_drivers_never_hold_the_same_item(ledger: Ledger) -> None:
    ann = ledger.lease_next("ann", ttl=60, now=1000.0)
    bob = ledger.lease_next("bob", ttl=60, now=1000.0)
    cid = ledger.lease_next("cid", ttl=60, now=1000.0)
    dan = ledger.lease_next("dan", ttl=60, now=1000.0)
    assert ann and bob and cid
    assert len({ann.item.key, bob.item.key, cid.item.key}) == 3
    assert dan is None


def test_an_expired_lease_returns_the_item_to_the_pool(ledger: Ledger) -> None:
    for who in ("ann", "bob", "cid"):
        ledger.lease_next(who, ttl=60, now=1000.0)
    late = ledger.lease_next("dan", ttl=60, now=1061.0)
    assert late is not None and late.item.key == "a"


def test_a_leased_item_refuses_another_drivers_record(ledger: Ledger) -> None:
    ledger.lease_next("ann", ttl=60)
    with pytest.raises(LeaseConflict, match="ann"):
        ledger.record("a", lambda i: (Transition(State.PASS, 0), judged("PASS")), driver="bob")


def test_the_ratchet_refuses_any_transition_out_of_a_terminal_state(ledger: Ledger) -> None:
    ledger.record("a", lambda i: (Transition(State.PASS, 0), judged("PASS")), driver="ann")
    for state in State:
        with pytest.raises(IllegalTransition):
            ledger.record("a", lambda i, s=state: (Transition(s, 0), judged()), driver="ann")
    assert ledger.get("a").state is State.PASS
    assert len(ledger.log("a")) == 1


def test_recording_on_a_locked_item_is_not_todo(ledger: Ledger) -> None:
    ledger.record("b", lambda i: (Transition(State.DONE, 1), judged()), driver="ann")
    with pytest.raises(NotTodo, match="DONE"):
        ledger.record("b", lambda i: (Transition(State.TODO, 1), judged()), driver="ann")


def test_the_database_itself_refuses_to_move_a_terminal_item(ledger: Ledger) -> None:
    ledger.record("a", lambda i: (Transition(State.PASS, 0), judged("PASS")), driver="ann")
    conn = sqlite3.connect(ledger.path)
    with pytest.raises(sqlite3.IntegrityError, match="ratchet"):
        conn.execute("UPDATE items SET state = 'TODO' WHERE key = 'a'")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("DELETE FROM attempts")
    with pytest.raises(sqlite3.IntegrityError, match="never deleted"):
        conn.execute("DELETE FROM items")
    conn.close()


def test_tries_never_go_down(ledger: Ledger) -> None:
    with pytest.raises(IllegalTransition, match="tries"):
        ledger.record("a", lambda i: (Transition(State.TODO, -1), judged()), driver="ann")


def test_record_stamps_turn_driver_and_state_and_keeps_counts(ledger: Ledger) -> None:
    item, attempt = ledger.record(
        "a", lambda i: (Transition(State.TODO, 1), judged()), driver="ann"
    )
    assert (item.state, item.tries, item.turns) == (State.TODO, 1, 1)
    assert (attempt.turn, attempt.driver, attempt.state_after, attempt.tries_after) == (
        1,
        "ann",
        State.TODO,
        1,
    )
    stats = ledger.stats()
    assert stats.counts[State.TODO] == 3 and stats.tries == {0: 2, 1: 1}
    ledger.record("a", lambda i: (Transition(State.PASS, 0), judged("PASS")), driver="ann")
    stats = ledger.stats()
    assert stats.counts[State.PASS] == 1 and stats.remaining == 2 and stats.total == 3


def test_a_stale_expected_turn_refuses_the_record(ledger: Ledger) -> None:
    ledger.record("a", lambda i: (Transition(State.TODO, 1), judged()), driver="ann")
    with pytest.raises(LeaseConflict, match="gained a turn"):
        ledger.record(
            "a",
            lambda i: (Transition(State.PASS, 0), judged("PASS")),
            driver="ann",
            expected_turns=0,
        )


def test_unknown_keys_are_not_found(ledger: Ledger) -> None:
    with pytest.raises(NotFound, match="zzz"):
        ledger.get("zzz")
    with pytest.raises(NotFound):
        ledger.log("zzz")


def test_items_round_trip_their_payload(ledger: Ledger) -> None:
    payload = {"text": "héllo\n\u2028", "n": [1, 2.5, None, True]}
    ledger.add([("x", payload)])
    assert ledger.get("x") == Item(
        **{**{s: getattr(ledger.get("x"), s) for s in Item.__slots__}, "payload": payload}
    )
    assert ledger.get("x").payload == payload


def test_an_older_ledger_is_migrated_on_open(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")  # a reins ledger at version 0
    conn.commit()
    conn.close()
    with Ledger.open(path) as led:
        assert led.add([("a", None)]) == (1, 0)
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    conn.close()


def test_items_can_be_walked_while_the_ledger_is_written(ledger: Ledger) -> None:
    seen = []
    for item in ledger.items():
        seen.append(item.key)
        ledger.record(item.key, lambda i: (Transition(State.TODO, 1), judged()), driver="w")
        assert ledger.log(item.key)[-1].turn == 1
    assert seen == ["a", "b", "c"]
    assert [i.key for i in ledger.items(State.TODO, limit=2)] == ["a", "b"]
