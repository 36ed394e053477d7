"""Replay: recorded outputs go through the same turn as submissions, as a third driver."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from reins import SQLiteStore, State
from reins.cli import make_group
from reins.cli.loop import EXIT_REPLAY_INCOMPLETE
from reins.turn import compose
from reins.turn.replay import Replayed, read_lines, replay
from tests.conftest import TINY
from tests.loopkit import make_ledger

QUEST = "tests.conftest:TINY"


@pytest.fixture
def path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("REINS_DRIVER", "alice")
    monkeypatch.delenv("REINS_QUEST", raising=False)
    monkeypatch.delenv("REINS_LEDGER", raising=False)
    return make_ledger(tmp_path / "tiny.reins.db")


def cli(*args: str, input: str | bytes | None = None) -> Result:
    return CliRunner().invoke(make_group(), ["--quest", QUEST, *args], input=input)


def jsonl(*rows: Any) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows)


def test_each_line_is_a_turn_and_lines_for_one_key_are_successive_tries(
    path: Path, tmp_path: Path
) -> None:
    file = tmp_path / "out.jsonl"
    file.write_text(
        jsonl(
            {"key": "a", "output": "bad"},
            {"key": "b", "output": "meh"},
            {"key": "a", "output": "good"},
        )
    )
    out = cli("replay", "--from", str(file))
    assert out.exit_code == 0, out.output
    assert out.stdout.splitlines() == [
        "a -> FAIL (state TODO, tries 1/3)",
        "b -> REVIEW (state REVIEW, tries 0/3)",
        "a -> PASS (state PASS, tries 1/3)",
        "replayed 3 line(s): 3 recorded (FAIL 1, PASS 1, REVIEW 1)",
    ]
    with SQLiteStore.open(path) as led:
        item, log = led.snapshot("a")
        assert item.state is State.PASS and [a.driver for a in log] == ["replay", "replay"]
        assert [(a.notes.via, a.notes.line) for a in log] == [("replay", 1), ("replay", 3)]
        # The digest is the prompt reins would have composed at that turn.
        before = dataclasses.replace(item, turns=1, state=State.TODO)
        assert log[1].prompt_digest == compose(TINY, before, log[:1]).digest()
    results = Path("tiny-results.jsonl").read_text().splitlines()
    assert sorted(json.loads(r)["key"] for r in results) == ["a", "b"]


def test_replay_judges_exactly_as_submit_does(path: Path, tmp_path: Path) -> None:
    twin = make_ledger(tmp_path / "twin.reins.db")
    submitted = cli("--ledger", str(twin), "submit", "--key", "a", input="bad")
    file = tmp_path / "out.jsonl"
    file.write_text(jsonl({"key": "a", "output": "bad"}))
    replayed = cli("replay", "--from", str(file), "--json")
    lines = [json.loads(line) for line in replayed.stdout.splitlines()]
    assert lines[0]["feedback"] == submitted.stdout
    assert lines[0]["status"] == "recorded" and lines[0]["outcome"] == "FAIL"
    assert lines[-1] == {
        "event": "summary",
        "lines": {
            "recorded": 1,
            "bad-line": 0,
            "unknown-key": 0,
            "locked": 0,
            "leased": 0,
            "repeated": 0,
            "judged": 0,
        },
        "outcomes": {"FAIL": 1},
        "exported": 0,
    }


def test_bad_lines_unknown_keys_and_locked_items_are_skipped_and_reported(
    path: Path, tmp_path: Path
) -> None:
    file = tmp_path / "out.jsonl"
    file.write_text(
        jsonl(
            "not json",
            {"key": "a", "output": "good"},
            "",
            {"key": "a", "output": "bad"},
            {"key": "zzz", "output": "good"},
            {"output": "good"},
            {"key": "b", "output": 42},
            [1, 2],
        )
    )
    out = cli("replay", "--from", str(file))
    assert out.exit_code == EXIT_REPLAY_INCOMPLETE
    assert out.stdout.splitlines() == [
        "a -> PASS (state PASS, tries 0/3)",
        "replayed 7 line(s): 1 recorded, 4 bad-line, 1 unknown-key, 1 locked (PASS 1)",
    ]
    err = out.stderr
    assert "line 1: not JSON" in err
    assert "line 4: a is PASS, locked for good; not judged again" in err
    assert "line 5: no item 'zzz', skipped" in err
    assert 'line 6: no "key" string' in err
    assert 'line 7: "output" is missing or not a string' in err
    assert "line 8: a JSON list, not an object" in err
    with SQLiteStore.open(path) as led:
        assert led.get("a").turns == 1 and led.get("b").turns == 0


def test_an_item_another_driver_holds_is_skipped(path: Path) -> None:
    with SQLiteStore.open(path) as led:
        led.lease("bob", ttl=600)
        summary = replay(led, TINY, read_lines([json.dumps({"key": "a", "output": "good"})]))
        assert summary.lines == {Replayed.LEASED: 1} and not summary.complete
        assert led.get("a").turns == 0


def test_replay_reads_standard_input(path: Path) -> None:
    out = cli("replay", "--from", "-", input=jsonl({"key": "c", "output": "good"}))
    assert out.exit_code == 0 and out.stdout.startswith("c -> PASS")


def test_a_line_that_is_not_utf8_is_a_bad_line() -> None:
    lines = list(read_lines([b'{"key": "a", "output": "\xff"}\n']))
    assert lines[0].problem is not None and "not UTF-8" in lines[0].problem
