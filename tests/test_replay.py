"""Replay: recorded outputs go through the same turn as submissions, as a third driver."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from reins import SQLiteStore, State
from reins.errors import Exit
from reins.turn import compose
from reins.turn.replay import Replayed, read_lines, replay
from tests.kit import TINY, Cli
from tests.kit.loopkit import make_ledger


@pytest.fixture
def path(tmp_path: Path, cli: Cli) -> Path:
    """A ledger of the tiny quest holding a, b and c; alice drives ``cli``."""
    cli.driver = "alice"
    return make_ledger(tmp_path / "tiny.reins.db")


def jsonl(*rows: Any) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows)


def test_each_line_is_a_turn_and_lines_for_one_key_are_successive_tries(
    path: Path, cli: Cli, tmp_path: Path
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
        "a -> FAIL on answer 1 of 3 (state TODO, 2 answers left)",
        "b -> REVIEW on answer 1 of 3 (state REVIEW)",
        "a -> PASS on answer 2 of 3 (state PASS)",
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


def test_replay_judges_exactly_as_submit_does(path: Path, cli: Cli, tmp_path: Path) -> None:
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
            "unmatched": 0,
            "locked": 0,
            "leased": 0,
            "repeated": 0,
            "judged": 0,
        },
        "outcomes": {"FAIL": 1},
        "judge_errors": 0,
        "generation_errors": 0,
        "exported": 0,
        "refused": [],
    }


def test_bad_lines_unknown_keys_and_locked_items_are_skipped_and_reported(
    path: Path, cli: Cli, tmp_path: Path
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
    assert out.exit_code == Exit.REPLAY_INCOMPLETE
    assert out.stdout.splitlines() == [
        "a -> PASS on answer 1 of 3 (state PASS)",
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


def test_an_item_another_driver_holds_is_skipped(path: Path, cli: Cli) -> None:
    with SQLiteStore.open(path) as led:
        led.lease("bob", ttl=600)
        summary = replay(led, TINY, read_lines([json.dumps({"key": "a", "output": "good"})]))
        assert summary.lines == {Replayed.LEASED: 1} and not summary.complete
        assert led.get("a").turns == 0


def test_replay_reads_standard_input(path: Path, cli: Cli) -> None:
    out = cli("replay", "--from", "-", input=jsonl({"key": "c", "output": "good"}))
    assert out.exit_code == 0 and out.stdout.startswith("c -> PASS")


def test_a_line_that_is_not_utf8_is_a_bad_line() -> None:
    lines = list(read_lines([b'{"key": "a", "output": "\xff"}\n']))
    assert lines[0].problem is not None and "not UTF-8" in lines[0].problem


# --- judge errors: counted, named, and an exit code of their own -------------------------


def test_a_replay_whose_every_line_is_a_judge_error_says_so_and_exits_10(
    path: Path, cli: Cli, tmp_path: Path
) -> None:
    file = tmp_path / "out.jsonl"
    file.write_text(jsonl({"key": "a", "output": "explode"}, {"key": "b", "output": "explode"}))
    out = cli("replay", "--from", str(file))
    assert out.exit_code == Exit.JUDGE_ERROR, out.output
    assert out.stdout.splitlines() == [
        "a -> judge error: quest.prepare: RuntimeError: prepare blew up",
        "b -> judge error: quest.prepare: RuntimeError: prepare blew up",
        "replayed 2 line(s): 2 recorded (judge errors 2)",
    ]
    summary = json.loads(cli("replay", "--from", str(file), "--json").stdout.splitlines()[-1])
    assert (summary["judge_errors"], summary["generation_errors"]) == (
        2,
        0,
    )  # judged again: a judge error is no verdict
    assert summary["outcomes"] == {}


def test_judge_errors_are_counted_beside_the_outcomes_and_outrank_skipped_lines(
    path: Path, cli: Cli, tmp_path: Path
) -> None:
    """Both exit codes apply; 10 wins: the gate must be fixed first, and replaying the file
    again then judges those lines (a judge error is no judged output) and reports the rest."""
    file = tmp_path / "out.jsonl"
    file.write_text(
        jsonl(
            {"key": "a", "output": "bad"},
            {"key": "b", "output": "explode"},
            {"key": "zzz", "output": "good"},
        )
    )
    dry = cli("replay", "--from", str(file), "--dry-run")
    assert dry.exit_code == Exit.JUDGE_ERROR
    assert dry.stdout.splitlines()[-1] == (
        "replayed 3 line(s): 1 unknown-key, 2 judged (FAIL 1, judge errors 1)"
    )
    out = cli("replay", "--from", str(file))
    assert out.exit_code == Exit.JUDGE_ERROR, out.output
    assert out.stdout.splitlines()[-1] == (
        "replayed 3 line(s): 2 recorded, 1 unknown-key (FAIL 1, judge errors 1)"
    )


NEEDS_NLTK = (
    'function = "tests.kit.checkfuncs:needs_nltk_data", params = { resource = "reins_absent" }'
)
NLTK_GATE = f"""\
# gate

## Rules

| id | level | check | parameters |
|----|-------|-------|------------|
| sentences-first | FAIL | python | function = "tests.kit.checkfuncs:too_long" |
| sentences-count | FAIL | python | {NEEDS_NLTK} |
| sentences-last | FAIL | python | {NEEDS_NLTK} |
"""


def test_a_judge_error_line_names_the_rule_and_the_first_line_that_says_something(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli
) -> None:
    """Two rules share one check function (as IFEval's 57 do): the line names the rule, and
    NLTK's LookupError (a blank line, then a row of stars) shows its first real line."""
    pytest.importorskip("nltk")
    monkeypatch.setenv("NLTK_DATA", str(tmp_path / "no-nltk-data"))
    folder = tmp_path / "sentences"
    folder.mkdir()
    (folder / "quest.toml").write_text(
        'name = "sentences"\n[items]\nsource = "items.jsonl"\nkey = "id"\n'
        '[prompt]\noutput = "text"\ntemplate = "Write {{ item.id }}."\n'
    )
    (folder / "gate.md").write_text(NLTK_GATE)
    (folder / "items.jsonl").write_text('{"id": "a"}\n')
    cli.quest = "./sentences"
    assert cli("scan").exit_code == 0
    (tmp_path / "out.jsonl").write_text(jsonl({"key": "a", "output": "One. Two."}))
    out = cli("replay", "--from", "out.jsonl")
    assert out.exit_code == Exit.JUDGE_ERROR, out.output
    line = out.stdout.splitlines()[0]
    assert line.startswith("a -> judge error: sentences-count: "), line
    assert "python check tests.kit.checkfuncs:needs_nltk_data" in line
    assert line.endswith("LookupError: Resource 'reins_absent' not found."), line


def test_a_benchmarks_own_file_replays_by_a_payload_field_and_its_output_field(
    path: Path, cli: Cli, tmp_path: Path
) -> None:
    """IFEval's and IFBench's files pair a response with its prompt's text, not a key: the
    item is found by its payload field, the output read from the field named."""
    file = tmp_path / "responses.jsonl"
    file.write_text(
        jsonl(
            {"word": "a", "response": "good"},
            {"word": "b", "response": "bad"},
            {"word": "zzz", "response": "good"},
            {"response": "good"},
        )
    )
    out = cli("replay", "--from", str(file), "--match", "word", "--output-field", "response")
    assert out.exit_code == Exit.REPLAY_INCOMPLETE, out.output
    assert out.stdout.splitlines()[:2] == [
        "a -> PASS on answer 1 of 3 (state PASS)",
        "b -> FAIL on answer 1 of 3 (state TODO, 2 answers left)",
    ]
    assert "line 3: no item whose payload \"word\" is 'zzz', skipped" in out.stderr
    assert 'line 4: no "word" string to find its item by, skipped' in out.stderr
    with SQLiteStore.open(path) as led:
        assert led.get("a").state is State.PASS and led.get("b").tries == 1


def test_a_line_match_finds_no_item_for_is_counted_apart_from_bad_lines(
    path: Path, cli: Cli, tmp_path: Path
) -> None:
    """A well-formed line whose value no item holds is no bad line: a benchmark's file often
    holds more prompts than the ledger was seeded with."""
    file = tmp_path / "responses.jsonl"
    file.write_text(
        jsonl(
            {"word": "a", "response": "good"},
            {"word": "zzz", "response": "good"},
            {"response": "good"},
        )
    )
    args = ("replay", "--from", str(file), "--match", "word", "--output-field", "response")
    out = cli(*args, "--dry-run")
    assert out.exit_code == Exit.REPLAY_INCOMPLETE, out.output
    assert out.stdout.splitlines()[-1] == (
        "replayed 3 line(s): 1 bad-line, 1 unmatched, 1 judged (PASS 1)"
    )
    summary = json.loads(cli(*args, "--dry-run", "--json").stdout.splitlines()[-1])
    assert (summary["lines"]["bad-line"], summary["lines"]["unmatched"]) == (1, 1)


def test_the_key_and_output_fields_are_options_and_an_integer_key_is_its_text(
    tmp_path: Path, cli: Cli
) -> None:
    make_ledger(tmp_path / "tiny.reins.db", ["1001", "1002"])
    file = tmp_path / "out.jsonl"
    file.write_text(jsonl({"id": 1001, "text": "good"}, {"id": "1002", "text": "meh"}))
    out = cli("replay", "--from", str(file), "--key-field", "id", "--output-field", "text")
    assert out.exit_code == 0, out.output
    assert [line.split(" -> ")[0] for line in out.stdout.splitlines()[:2]] == ["1001", "1002"]
    missing = cli("replay", "--from", str(file), "--dry-run")
    assert 'line 1: no "key" string, skipped' in missing.stderr


def test_two_items_with_the_same_payload_field_are_not_guessed_between(
    tmp_path: Path, cli: Cli
) -> None:
    with SQLiteStore.open(tmp_path / "tiny.reins.db", create=True) as led:
        led.add((k, {"word": "same"}) for k in "xy")
    file = tmp_path / "out.jsonl"
    file.write_text(jsonl({"word": "same", "output": "good"}))
    out = cli("replay", "--from", str(file), "--match", "word")
    assert out.exit_code == Exit.REPLAY_INCOMPLETE
    assert '2 items have this payload "word" (x, y)' in out.stderr
