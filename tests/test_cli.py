"""The CLI as a user meets it: output, --json, exit codes, and errors without tracebacks."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from reins.cli import make_group

QUEST = "tests.conftest:TINY"


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(Path(__file__).parent.parent))
    monkeypatch.setenv("REINS_DRIVER", "tester")
    monkeypatch.delenv("REINS_QUEST", raising=False)
    monkeypatch.delenv("REINS_LEDGER", raising=False)

    def invoke(*args: str, input: str | bytes | None = None, quest: str | None = QUEST) -> Result:
        argv = (["--quest", quest] if quest else []) + list(args)
        return CliRunner().invoke(make_group(), argv, input=input, catch_exceptions=False)

    return invoke


def test_scan_adds_then_dedupes(run) -> None:  # type: ignore[no-untyped-def]
    first = run("scan")
    assert first.exit_code == 0 and "added 3 item(s), 0 already present" in first.stdout
    again = run("scan", "a", "d", "--json")
    assert json.loads(again.stdout) == {
        "added": 1,
        "present": 1,
        "total": 4,
        "ledger": "tiny.reins.db",
    }


def test_next_prints_the_full_prompt_and_leases_the_item(run) -> None:  # type: ignore[no-untyped-def]
    run("scan")
    out = run("next")
    assert out.exit_code == 0
    assert "# item a · turn 1 · tries 0/3 · leased to tester" in out.stdout
    assert "Answer in one word.\n\nSay 'good' for a." in out.stdout
    other = json.loads(run("next", "--driver", "other", "--json").stdout)
    assert other["key"] == "b"


def test_a_fail_feeds_its_verdict_and_coaching_into_the_next_prompt(run) -> None:  # type: ignore[no-untyped-def]
    run("scan")
    fail = run("submit", "--key", "a", input="bad")
    assert fail.exit_code == 4
    prompt = json.loads(run("next", "--json").stdout)
    assert prompt["system"] == "Answer in one word."  # the shared prefix, the same for every item
    assert "\n\nNever answer 'bad'.\n\n" in prompt["user"]  # the coaching is the item's own
    assert prompt["user"].endswith(fail.stdout)  # feedback parity: the same bytes
    assert prompt["tries"] == 1 and prompt["turn"] == 2


def test_submit_exit_codes_tell_locked_retry_and_not_todo_apart(run) -> None:  # type: ignore[no-untyped-def]
    run("scan")
    assert run("submit", "-k", "a", input="good").exit_code == 0
    locked = run("submit", "-k", "a", input="good")
    assert locked.exit_code == 5 and "is PASS, not TODO" in locked.stderr
    assert run("submit", "-k", "b", input="bad").exit_code == 4
    assert run("submit", "-k", "b", input="bad").exit_code == 4
    done = run("submit", "-k", "b", input="bad")
    assert done.exit_code == 11 and "b -> FAIL (state DONE, tries 3/3)" in done.stdout
    missing = run("submit", "-k", "zzz", input="good")
    assert missing.exit_code == 2 and "no item with key 'zzz'" in missing.stderr
    usage = run("submit", input="good")
    assert usage.exit_code == 2


@pytest.mark.parametrize(
    ("answer", "state"), [("meh", "REVIEW"), ("skip", "SKIPPED"), ("block", "BLOCKED")]
)
def test_submit_exits_11_when_the_item_locks_without_a_pass(run, answer: str, state: str) -> None:  # type: ignore[no-untyped-def]
    run("scan")
    out = run("submit", "-k", "a", input=answer)
    assert out.exit_code == 11 and f"(state {state}, tries 0/3)" in out.stdout
    again = run("submit", "-k", "a", input="good")
    assert again.exit_code == 5 and f"is {state}, not TODO" in again.stderr


@pytest.mark.parametrize("empty", ["", "  \n\t\n"])
def test_an_empty_submission_is_a_usage_error_and_records_nothing(run, empty: str) -> None:  # type: ignore[no-untyped-def]
    run("scan")
    out = run("submit", "-k", "a", input=empty)
    assert out.exit_code == 2 and "the submission is empty: nothing was recorded" in out.stderr
    assert out.stdout == ""
    log = json.loads(run("log", "a", "--json").stdout)
    assert log["attempts"] == []
    assert json.loads(run("next", "--json").stdout)["turn"] == 1


def test_submit_json_writes_errors_as_json_on_stdout(run) -> None:  # type: ignore[no-untyped-def]
    run("scan")
    missing = run("submit", "-k", "zzz", "--json", input="good")
    assert missing.exit_code == 2
    error = json.loads(missing.stdout)
    assert error["exit_code"] == 2 and "no item with key 'zzz'" in error["error"]
    assert set(error) == {"error", "exit_code"}
    run("submit", "-k", "a", input="good")
    locked = run("submit", "-k", "a", "--json", input="good")
    assert locked.exit_code == 5
    assert json.loads(locked.stdout) == {
        "error": "item 'a' is PASS, not TODO: terminal items are locked for good",
        "exit_code": 5,
    }
    without = run("submit", "-k", "zzz", input="good")
    assert without.stdout == "" and "no item with key 'zzz'" in without.stderr


def test_submit_refuses_an_item_another_driver_holds(run) -> None:  # type: ignore[no-untyped-def]
    run("scan")
    run("next", "--driver", "ann")
    taken = run("submit", "-k", "a", "--driver", "bob", input="good")
    assert taken.exit_code == 6 and "leased to 'ann'" in taken.stderr


def test_submit_json_and_auto_export(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run("scan")
    out = run("submit", "-k", "a", "--json", input="meh")
    data = json.loads(out.stdout)
    assert data["outcome"] == "REVIEW" and data["state"] == "REVIEW" and data["exported"] == 1
    assert data["facts"][0]["rule"] == "not-meh"
    assert json.loads((tmp_path / "tiny-results.jsonl").read_text())["key"] == "a"
    run("submit", "-k", "b", "--no-export", input="good")
    assert len((tmp_path / "tiny-results.jsonl").read_text().splitlines()) == 1
    assert "exported 1 new record(s)" in run("export").stdout


def _untouched(path: Path, key: str, driver: str) -> None:
    """Nothing was recorded for ``key``: no attempt, no try, and ``driver`` still holds it."""
    from reins import SQLiteStore

    with SQLiteStore.open(path) as led:
        item, log = led.snapshot(key)
    assert log == [] and (item.tries, item.turns) == (0, 0)
    assert item.lease_owner == driver


def test_a_persons_oversize_submit_is_a_usage_error_that_records_nothing(
    run: Any, tmp_path: Path
) -> None:
    run("scan")
    (tmp_path / "reins.toml").write_text(f'[reins]\nquest = "{QUEST}"\nmax_submission = 10\n')
    token = json.loads(run("next", "--json", quest=None).stdout)["token"]
    (tmp_path / "answer.txt").write_text("good" * 10)
    out = run("submit", "-k", "a", "--in", "answer.txt", "--token", token, quest=None)
    assert out.exit_code == 2 and out.stdout == ""
    assert "larger than the limit of 10 bytes" in out.stderr
    assert "nothing was recorded" in out.stderr and "max_submission" in out.stderr
    _untouched(tmp_path / "tiny.reins.db", "a", "tester")
    as_json = run("submit", "-k", "a", "--in", "answer.txt", "--json", quest=None)
    assert as_json.exit_code == 2 and json.loads(as_json.stdout)["exit_code"] == 2
    _untouched(tmp_path / "tiny.reins.db", "a", "tester")
    # The lease and its token still hold: the corrected answer goes in on them.
    ok = run("submit", "-k", "a", "--token", token, input="good", quest=None)
    assert ok.exit_code == 0, ok.output


def test_a_persons_submit_that_is_not_utf8_is_a_usage_error_that_records_nothing(
    run: Any, tmp_path: Path
) -> None:
    run("scan")
    run("next")
    (tmp_path / "answer.txt").write_bytes(b"go\xffod")
    out = run("submit", "-k", "a", "--in", "answer.txt")
    assert out.exit_code == 2 and out.stdout == ""
    assert "not UTF-8" in out.stderr and "byte 2" in out.stderr
    assert "nothing was recorded" in out.stderr
    _untouched(tmp_path / "tiny.reins.db", "a", "tester")


def test_next_nags_after_three_calls_without_a_submit(run) -> None:  # type: ignore[no-untyped-def]
    run("scan")
    assert "reminder" not in run("next").stdout
    assert "reminder" not in run("next").stdout
    third = run("next")
    assert third.stdout.startswith("reminder: you asked for an item 3 times without submitting")
    run("submit", "-k", "a", input="bad")
    assert "reminder" not in run("next").stdout


def test_next_says_when_nothing_is_left(run) -> None:  # type: ignore[no-untyped-def]
    run("scan", "a")
    run("submit", "-k", "a", input="good")
    out = run("next")
    assert out.exit_code == 3 and "nothing left" in out.stdout
    assert json.loads(run("next", "--json").stdout)["key"] is None


def test_status_counts_states_tries_and_rules(run) -> None:  # type: ignore[no-untyped-def]
    run("scan")
    run("submit", "-k", "a", input="bad")
    run("submit", "-k", "b", input="good")
    data = json.loads(run("status", "--json").stdout)
    assert data["counts"]["PASS"] == 1 and data["remaining"] == 2 and data["total"] == 3
    assert data["tries"] == {"0": 2, "1": 1}
    assert data["rules"] == {"not-bad": {"fired": 1, "root_cause": 1}}
    text = run("status").stdout
    assert "remaining 2" in text and "not-bad" in text


def test_status_todo_renders_a_checklist(run) -> None:  # type: ignore[no-untyped-def]
    run("scan")
    run("submit", "-k", "a", input="good")
    run("next", "--driver", "bob")
    lines = run("status", "--todo").stdout.splitlines()
    assert lines == ["[x] a  (PASS)", "[>] b  (tries 0, bob is on it)", "[ ] c  (tries 0)"]


def test_rules_log_and_turn(run) -> None:  # type: ignore[no-untyped-def]
    run("scan")
    assert run("rules").stdout.splitlines()[0].split() == [
        "FAIL",
        "not-bad",
        "the",
        "answer",
        "is",
        "not",
        "'bad'",
    ]
    run("submit", "-k", "a", input="bad")
    log = json.loads(run("log", "a", "--json").stdout)
    assert (
        log["attempts"][0]["root_cause"] == "not-bad" and log["attempts"][0]["driver"] == "tester"
    )
    assert "turn 1" in run("log", "a").stdout
    assert "## Record table" in run("turn", quest=None).stdout


def test_a_missing_quest_is_a_usage_error(run) -> None:  # type: ignore[no-untyped-def]
    out = run("status", quest=None)
    assert out.exit_code == 2 and "no quest given" in out.stderr
    bad = run("status", quest="nosuchquest")
    assert (
        bad.exit_code == 2
        and "no quest named 'nosuchquest'" in bad.stderr
        and "emails" in bad.stderr
    )


def test_a_corrupt_ledger_is_a_message_not_a_traceback(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "tiny.reins.db").write_text("garbage")
    out = run("status")
    assert (
        out.exit_code == 1 and "not a reins ledger" in out.stderr and "Traceback" not in out.stderr
    )
    assert (tmp_path / "tiny.reins.db").read_text() == "garbage"
    out = run("scan")
    assert out.exit_code == 1 and (tmp_path / "tiny.reins.db").read_text() == "garbage"


def test_a_missing_ledger_says_to_scan(run) -> None:  # type: ignore[no-untyped-def]
    out = run("next")
    assert out.exit_code == 2 and "reins scan" in out.stderr


def test_reins_toml_supplies_defaults(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "reins.toml").write_text(
        f'[reins]\nquest = "{QUEST}"\nledger = "custom.db"\nmax_tries = 1\n'
    )
    run("scan", quest=None)
    assert (tmp_path / "custom.db").exists()
    out = run("submit", "-k", "a", input="bad", quest=None)
    assert out.exit_code == 11 and "state DONE, tries 1/1" in out.stdout
    (tmp_path / "reins.toml").write_text('[reins]\nqeust = "x"\n')
    bad = run("status", quest=None)
    assert bad.exit_code == 2 and "unknown key(s) qeust" in bad.stderr


def test_init_writes_a_working_starter(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = run("init", "--name", "starter", quest=None)
    assert out.exit_code == 0
    assert run("init", "--name", "starter", quest=None).exit_code == 2
    assert run("scan", quest=None).exit_code == 0
    prompt = json.loads(run("next", "--json", quest=None).stdout)
    assert prompt["key"] == "alpha"
    assert run("submit", "-k", "alpha", input='{"answer": "alpha"}', quest=None).exit_code == 4
    ok = run("submit", "-k", "alpha", input='{"answer": "ALPHA"}', quest=None)
    assert ok.exit_code == 0 and "PASS" in ok.stdout


def test_version_and_help(run) -> None:  # type: ignore[no-untyped-def]
    assert run("--version", quest=None).stdout.startswith("reins, version ")
    helped = run("-h", quest=None).stdout
    for command in ("scan", "next", "submit", "status", "export", "rules", "log", "turn", "init"):
        assert command in helped


def test_a_quest_author_gets_a_console_script_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reins.cli import for_quest

    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(Path(__file__).parent.parent))
    main = for_quest(QUEST)
    with pytest.raises(SystemExit) as exit_info:
        os.environ["REINS_DRIVER"] = "me"
        try:
            import sys

            monkeypatch.setattr(sys, "argv", ["tiny", "scan"])
            main()
        finally:
            del os.environ["REINS_DRIVER"]
    assert exit_info.value.code == 0
    assert (tmp_path / "tiny.reins.db").exists()
