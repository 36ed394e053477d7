"""``reins ledger check`` and ``reins ledger copy``: invariants verified, runs moved verbatim."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from reins.store.sqlite import SQLiteStore
from reins.store.walk import log_digest
from tests.kit import Cli


def worked(cli: Cli) -> None:
    assert cli("scan").exit_code == 0
    assert cli("submit", "--key", "a", input="bad").exit_code == 4
    assert cli("submit", "--key", "a", input="good").exit_code == 0
    assert cli("submit", "--key", "b", input="meh").exit_code == 11  # locked REVIEW


def test_check_says_a_worked_ledger_is_sound(cli: Cli) -> None:
    worked(cli)
    out = cli("ledger", "check", "--json")
    assert out.exit_code == 0
    assert json.loads(out.stdout) == {
        "ledger": "tiny.reins.db",
        "quest": {"name": "tiny", "origin": "tests.kit:TINY"},
        "sound": True,
        "problems": [],
        "items": 3,
        "attempts": 3,
    }


def forge(path: Path, *statements: str) -> None:
    """Write the ledger by hand, as an agent with the file in reach could."""
    conn = sqlite3.connect(path)
    for statement in statements:
        conn.execute(statement)
    conn.commit()
    conn.close()


def test_check_names_an_item_moved_to_pass_by_hand(cli: Cli, tmp_path: Path) -> None:
    """The forgery of issue 26: one UPDATE, which the triggers allow (the item was TODO) and
    whose counters they keep, left an item PASS with no turn, and nothing said so."""
    worked(cli)
    forge(
        tmp_path / "tiny.reins.db",
        "UPDATE items SET state = 'PASS', locked_at = '2026-01-01T00:00:00.000Z' WHERE key = 'c'",
    )
    out = cli("ledger", "check")
    assert out.exit_code == 9
    assert out.stdout.splitlines() == [
        "item c is PASS, but no attempt locked it: it has no attempt in its log"
    ]
    report = json.loads(cli("ledger", "check", "--json").stdout)
    assert report["sound"] is False
    assert report["problems"] == [
        "item c is PASS, but no attempt locked it: it has no attempt in its log"
    ]


def test_check_names_a_lock_whose_last_attempt_left_the_item_todo(cli: Cli, tmp_path: Path) -> None:
    worked(cli)
    assert cli("submit", "--key", "c", input="bad").exit_code == 4
    assert cli("submit", "--key", "c", input="bad").exit_code == 4
    forge(
        tmp_path / "tiny.reins.db",
        "UPDATE items SET state = 'PASS', locked_at = '2026-01-01T00:00:00.000Z' WHERE key = 'c'",
    )
    out = cli("ledger", "check")
    assert out.exit_code == 9
    assert out.stdout.splitlines() == [
        "item c is PASS, but no attempt locked it: its last attempt (turn 2) is a judged FAIL "
        "that left it TODO"
    ]


def test_check_finds_a_state_that_its_log_does_not_explain(cli: Cli, tmp_path: Path) -> None:
    worked(cli)
    # Tampering by hand, past the triggers: drop them, then move a TODO item to PASS and a
    # kept counter with it.
    forge(
        tmp_path / "tiny.reins.db",
        "DROP TRIGGER items_ratchet",
        "DROP TRIGGER items_recounted",
        "UPDATE items SET state = 'PASS', locked_at = 'x' WHERE key = 'c'",
        "UPDATE state_counts SET n = 7 WHERE state = 'TODO'",
    )
    out = cli("ledger", "check")
    assert out.exit_code == 9
    assert out.stdout.splitlines() == [
        "item c is PASS, but no attempt locked it: it has no attempt in its log",
        "the kept count of PASS items is 1, but the ledger holds 2",
        "the kept count of TODO items is 7, but the ledger holds 0",
    ]


def test_copy_moves_a_run_verbatim_and_verifies_it(cli: Cli, tmp_path: Path) -> None:
    worked(cli)
    out = cli("ledger", "copy", "tiny.reins.db", "copy.db", "--json")
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert (report["items"], report["attempts"]) == (3, 3)
    with (
        SQLiteStore.open(tmp_path / "tiny.reins.db") as a,
        SQLiteStore.open(tmp_path / "copy.db") as b,
    ):
        assert log_digest(a) == log_digest(b) == (3, 3, report["digest"])
        assert b.stats().counts == a.stats().counts and b.stats().rules == a.stats().rules
        assert b.check() == []
    # The copy is a ledger like any other: work goes on there.
    assert cli("--ledger", "copy.db", "submit", "--key", "c", input="good").exit_code == 0


def test_copy_refuses_a_target_that_holds_items(cli: Cli) -> None:
    worked(cli)
    assert cli("ledger", "copy", "tiny.reins.db", "again.db").exit_code == 0
    out = cli("ledger", "copy", "tiny.reins.db", "again.db")
    assert out.exit_code == 1 and "not empty" in out.stderr and "Traceback" not in out.stderr


def test_copy_from_a_missing_ledger_says_so(cli: Cli) -> None:
    out = cli("ledger", "copy", "nothing.db", "copy.db")
    assert out.exit_code == 2 and "no ledger at nothing.db" in out.stderr
