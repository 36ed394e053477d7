"""The CLI as a user meets it: output, --json, exit codes, and errors without tracebacks."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.kit import TINY_REF, Cli


def test_scan_adds_then_dedupes(cli: Cli) -> None:
    first = cli("scan")
    assert first.exit_code == 0 and "added 3 item(s), 0 already present" in first.stdout
    again = cli("scan", "a", "d", "--json")
    assert json.loads(again.stdout) == {
        "added": 1,
        "present": 1,
        "total": 4,
        "ledger": "tiny.reins.db",
        "source": None,  # the items came from the arguments, not a repository source
    }


def test_next_prints_the_full_prompt_and_leases_the_item(cli: Cli) -> None:
    cli("scan")
    out = cli("next")
    assert out.exit_code == 0
    assert "# item a · answer 1 of 3 · turn 1 · leased to tester" in out.stdout
    assert "Answer in one word.\n\nSay 'good' for a." in out.stdout
    other = json.loads(cli("next", "--driver", "other", "--json").stdout)
    assert other["key"] == "b"


def test_a_fail_feeds_its_verdict_and_coaching_into_the_next_prompt(cli: Cli) -> None:
    cli("scan")
    fail = cli("submit", "--key", "a", input="bad")
    assert fail.exit_code == 4
    prompt = json.loads(cli("next", "--json").stdout)
    assert prompt["system"] == "Answer in one word."  # the shared prefix, the same for every item
    assert "\n\nNever answer 'bad'.\n\n" in prompt["user"]  # the coaching is the item's own
    assert prompt["user"].endswith(fail.stdout)  # feedback parity: the same bytes
    assert prompt["tries"] == 1 and prompt["turn"] == 2


def test_submit_exit_codes_tell_locked_retry_and_not_todo_apart(cli: Cli) -> None:
    cli("scan")
    assert cli("submit", "-k", "a", input="good").exit_code == 0
    locked = cli("submit", "-k", "a", input="good")
    assert locked.exit_code == 5 and "is PASS, not TODO" in locked.stderr
    assert cli("submit", "-k", "b", input="bad").exit_code == 4
    assert cli("submit", "-k", "b", input="bad").exit_code == 4
    done = cli("submit", "-k", "b", input="bad")
    assert (
        done.exit_code == 11
        and "b -> FAIL on answer 3 of 3 (state DONE — out of tries, not passed)" in done.stdout
    )
    missing = cli("submit", "-k", "zzz", input="good")
    assert missing.exit_code == 2 and "no item with key 'zzz'" in missing.stderr
    usage = cli("submit", input="good")
    assert usage.exit_code == 2


@pytest.mark.parametrize(
    ("answer", "state"), [("meh", "REVIEW"), ("skip", "SKIPPED"), ("block", "BLOCKED")]
)
def test_submit_exits_11_when_the_item_locks_without_a_pass(
    cli: Cli, answer: str, state: str
) -> None:
    cli("scan")
    out = cli("submit", "-k", "a", input=answer)
    assert out.exit_code == 11 and f"on answer 1 of 3 (state {state})" in out.stdout
    again = cli("submit", "-k", "a", input="good")
    assert again.exit_code == 5 and f"is {state}, not TODO" in again.stderr


@pytest.mark.parametrize("empty", ["", "  \n\t\n"])
def test_an_empty_submission_is_a_usage_error_and_records_nothing(cli: Cli, empty: str) -> None:
    cli("scan")
    out = cli("submit", "-k", "a", input=empty)
    assert out.exit_code == 2 and "the submission is empty: nothing was recorded" in out.stderr
    assert out.stdout == ""
    log = json.loads(cli("log", "a", "--json").stdout)
    assert log["attempts"] == []
    assert json.loads(cli("next", "--json").stdout)["turn"] == 1


def test_submit_json_writes_errors_as_json_on_stdout(cli: Cli) -> None:
    cli("scan")
    missing = cli("submit", "-k", "zzz", "--json", input="good")
    assert missing.exit_code == 2
    error = json.loads(missing.stdout)
    assert error["exit_code"] == 2 and "no item with key 'zzz'" in error["error"]
    assert set(error) == {"error", "exit_code"}
    cli("submit", "-k", "a", input="good")
    locked = cli("submit", "-k", "a", "--json", input="good")
    assert locked.exit_code == 5
    assert json.loads(locked.stdout) == {
        "error": "item 'a' is PASS, not TODO: terminal items are locked for good",
        "exit_code": 5,
    }
    without = cli("submit", "-k", "zzz", input="good")
    assert without.stdout == "" and "no item with key 'zzz'" in without.stderr


def test_submit_refuses_an_item_another_driver_holds(cli: Cli) -> None:
    cli("scan")
    cli("next", "--driver", "ann")
    taken = cli("submit", "-k", "a", "--driver", "bob", input="good")
    assert taken.exit_code == 6 and "leased to 'ann'" in taken.stderr


def test_submit_json_and_auto_export(cli: Cli, tmp_path: Path) -> None:
    cli("scan")
    out = cli("submit", "-k", "a", "--json", input="meh")
    data = json.loads(out.stdout)
    assert data["outcome"] == "REVIEW" and data["state"] == "REVIEW" and data["exported"] == 1
    assert data["facts"][0]["rule"] == "not-meh"
    assert json.loads((tmp_path / "tiny-results.jsonl").read_text())["key"] == "a"
    cli("submit", "-k", "b", "--no-export", input="good")
    assert len((tmp_path / "tiny-results.jsonl").read_text().splitlines()) == 1
    assert "exported 1 new record(s)" in cli("export").stdout


def _untouched(path: Path, key: str, driver: str) -> None:
    """Nothing was recorded for ``key``: no attempt, no try, and ``driver`` still holds it."""
    from reins import SQLiteStore

    with SQLiteStore.open(path) as led:
        item, log = led.snapshot(key)
    assert log == [] and (item.tries, item.turns) == (0, 0)
    assert item.lease_owner == driver


def test_a_persons_oversize_submit_is_a_usage_error_that_records_nothing(
    cli: Cli, tmp_path: Path
) -> None:
    cli("scan")
    (tmp_path / "reins.toml").write_text(f'[reins]\nquest = "{TINY_REF}"\nmax_submission = 10\n')
    token = json.loads(cli("next", "--json", quest=None).stdout)["token"]
    (tmp_path / "answer.txt").write_text("good" * 10)
    out = cli("submit", "-k", "a", "--in", "answer.txt", "--token", token, quest=None)
    assert out.exit_code == 2 and out.stdout == ""
    assert "larger than the limit of 10 bytes" in out.stderr
    assert "nothing was recorded" in out.stderr and "max_submission" in out.stderr
    _untouched(tmp_path / "tiny.reins.db", "a", "tester")
    as_json = cli("submit", "-k", "a", "--in", "answer.txt", "--json", quest=None)
    assert as_json.exit_code == 2 and json.loads(as_json.stdout)["exit_code"] == 2
    _untouched(tmp_path / "tiny.reins.db", "a", "tester")
    # The lease and its token still hold: the corrected answer goes in on them.
    ok = cli("submit", "-k", "a", "--token", token, input="good", quest=None)
    assert ok.exit_code == 0, ok.output


def test_a_persons_submit_that_is_not_utf8_is_a_usage_error_that_records_nothing(
    cli: Cli, tmp_path: Path
) -> None:
    cli("scan")
    cli("next")
    (tmp_path / "answer.txt").write_bytes(b"go\xffod")
    out = cli("submit", "-k", "a", "--in", "answer.txt")
    assert out.exit_code == 2 and out.stdout == ""
    assert "not UTF-8" in out.stderr and "byte 2" in out.stderr
    assert "nothing was recorded" in out.stderr
    _untouched(tmp_path / "tiny.reins.db", "a", "tester")


def test_next_nags_after_three_calls_without_a_submit(cli: Cli) -> None:
    cli("scan")
    assert "reminder" not in cli("next").stdout
    assert "reminder" not in cli("next").stdout
    third = cli("next")
    assert third.stdout.startswith("reminder: you asked for an item 3 times without submitting")
    cli("submit", "-k", "a", input="bad")
    assert "reminder" not in cli("next").stdout


def test_next_says_when_nothing_is_left(cli: Cli) -> None:
    cli("scan", "a")
    cli("submit", "-k", "a", input="good")
    out = cli("next")
    # a message for people, not a prompt: stdout stays empty (the exit code says it)
    assert out.exit_code == 3 and "nothing left" in out.stderr and out.stdout == ""
    assert json.loads(cli("next", "--json").stdout)["key"] is None


def test_status_counts_states_tries_and_rules(cli: Cli) -> None:
    cli("scan")
    cli("submit", "-k", "a", input="bad")
    cli("submit", "-k", "b", input="good")
    data = json.loads(cli("status", "--json").stdout)
    assert data["counts"]["PASS"] == 1 and data["remaining"] == 2 and data["total"] == 3
    assert data["tries"] == {"0": 2, "1": 1}
    assert data["rules"] == {"not-bad": {"fired": 1, "root_cause": 1}}
    text = cli("status").stdout
    assert "remaining 2" in text and "not-bad" in text


def test_status_todo_renders_a_checklist(cli: Cli) -> None:
    cli("scan")
    cli("submit", "-k", "a", input="good")
    cli("next", "--driver", "bob")
    lines = cli("status", "--todo").stdout.splitlines()
    assert lines == [
        "[x] a  (PASS)",
        "[>] b  (answer 1 of 3 next, bob is on it)",
        "[ ] c  (answer 1 of 3 next)",
    ]


def test_rules_log_and_turn(cli: Cli) -> None:
    cli("scan")
    assert cli("rules").stdout.splitlines()[0].split() == [
        "FAIL",
        "not-bad",
        "the",
        "answer",
        "is",
        "not",
        "'bad'",
    ]
    cli("submit", "-k", "a", input="bad")
    log = json.loads(cli("log", "a", "--json").stdout)
    assert (
        log["attempts"][0]["root_cause"] == "not-bad" and log["attempts"][0]["driver"] == "tester"
    )
    assert "turn 1" in cli("log", "a").stdout
    assert "## Record table" in cli("turn", quest=None).stdout


def test_a_missing_quest_is_a_usage_error(cli: Cli) -> None:
    out = cli("status", quest=None)
    assert out.exit_code == 2 and "no quest given" in out.stderr
    bad = cli("status", quest="nosuchquest")
    assert (
        bad.exit_code == 2
        and "no quest named 'nosuchquest'" in bad.stderr
        and "emails" in bad.stderr
    )


def test_a_corrupt_ledger_is_a_message_not_a_traceback(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "tiny.reins.db").write_text("garbage")
    out = cli("status")
    assert (
        out.exit_code == 1 and "not a reins ledger" in out.stderr and "Traceback" not in out.stderr
    )
    assert (tmp_path / "tiny.reins.db").read_text() == "garbage"
    out = cli("scan")
    assert out.exit_code == 1 and (tmp_path / "tiny.reins.db").read_text() == "garbage"


def test_a_missing_ledger_says_to_scan(cli: Cli) -> None:
    out = cli("next")
    assert out.exit_code == 2 and "reins scan" in out.stderr


def test_reins_toml_supplies_defaults(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "reins.toml").write_text(
        f'[reins]\nquest = "{TINY_REF}"\nledger = "custom.db"\nmax_tries = 1\n'
    )
    cli("scan", quest=None)
    assert (tmp_path / "custom.db").exists()
    out = cli("submit", "-k", "a", input="bad", quest=None)
    assert (
        out.exit_code == 11
        and "FAIL on answer 1 of 1 (state DONE — out of tries, not passed)" in out.stdout
    )
    (tmp_path / "reins.toml").write_text('[reins]\nqeust = "x"\n')
    bad = cli("status", quest=None)
    assert bad.exit_code == 2 and "unknown key(s) qeust" in bad.stderr


def test_init_writes_a_working_starter(cli: Cli, tmp_path: Path) -> None:
    out = cli("init", "--name", "starter", quest=None)
    assert out.exit_code == 0
    assert cli("init", "--name", "starter", quest=None).exit_code == 2
    assert cli("scan", quest=None).exit_code == 0
    prompt = json.loads(cli("next", "--json", quest=None).stdout)
    assert prompt["key"] == "alpha"
    assert cli("submit", "-k", "alpha", input='{"answer": "alpha"}', quest=None).exit_code == 4
    ok = cli("submit", "-k", "alpha", input='{"answer": "ALPHA"}', quest=None)
    assert ok.exit_code == 0 and "PASS" in ok.stdout


def test_version_and_help(cli: Cli) -> None:
    assert cli("--version", quest=None).stdout.startswith("reins, version ")
    helped = cli("-h", quest=None).stdout
    for command in ("scan", "next", "submit", "status", "export", "rules", "log", "turn", "init"):
        assert command in helped


def test_a_quest_author_gets_a_console_script_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reins.cli import for_quest

    main = for_quest(TINY_REF)
    monkeypatch.setenv("REINS_DRIVER", "me")
    monkeypatch.setattr(sys, "argv", ["tiny", "scan"])
    with pytest.raises(SystemExit) as exit_info:
        main()
    assert exit_info.value.code == 0
    assert (tmp_path / "tiny.reins.db").exists()
