"""What a loop run shows: a status line on a terminal, plain lines, JSON events, a summary."""

from __future__ import annotations

import io
import json
from pathlib import Path

from reins.loop import JsonReporter, LineReporter, Status, StopReason, Summary, TtyReporter
from reins.loop.lines import clock, status_line, summary_text
from reins.store import State
from reins.testing import FakeBackend
from tests.kit.loopkit import loop, make_ledger


def status(**over: object) -> Status:
    base: dict[str, object] = {
        "total": 40,
        "counts": {State.TODO: 28, State.PASS: 9, State.REVIEW: 1, State.DONE: 2},
        "turns": 37,
        "judged": 34,
        "generation_errors": 3,
        "judge_errors": 0,
        "in_flight": 4,
        "input_tokens": 12_000,
        "output_tokens": 345,
        "cost": 0.0123,
        "elapsed": 4.6,
    }
    return Status(**{**base, **over})  # type: ignore[arg-type]


def test_the_status_line_shows_done_left_counts_rate_tokens_cost_and_time() -> None:
    assert status_line(status()) == (
        "12/40 done · 28 left · PASS 9 REVIEW 1 unsolved (DONE) 2 · 37 turns (3 generation errors)"
        " · 8.0 turns/s · 12,345 tokens · cost 0.0123 · 0:04 · 4 in flight"
    )
    quiet = status(generation_errors=0, input_tokens=0, output_tokens=0, cost=0.0)
    assert "errors" not in status_line(quiet) and "tokens" not in status_line(quiet)
    judging = status(generation_errors=0, judge_errors=2)
    assert " · 37 turns (2 judge errors) · " in status_line(judging)
    both = status_line(status(judge_errors=1))
    assert "(3 generation errors, 1 judge error)" in both


def test_the_clock_reads_minutes_and_hours() -> None:
    assert [clock(s) for s in (0.4, 65, 3723)] == ["0:00", "1:05", "1:02:03"]


def test_a_terminal_gets_a_line_redrawn_in_place_and_the_summary_on_stdout(
    tmp_path: Path,
) -> None:
    out, err = io.StringIO(), io.StringIO()
    path = make_ledger(tmp_path / "t.reins.db")
    fake = FakeBackend({"a": ["bad", "good"], "b": ["good"], "c": ["meh"]}, latency=0.12)
    summary = loop(path, fake, reporter=TtyReporter(out, err))
    assert summary.reason is StopReason.DONE
    frames = err.getvalue().split("\r\x1b[2K")
    assert len(frames) >= 3 and "0/3 done · 3 left" in frames[1]
    assert any("3/3 done · 0 left" in f or "2/3 done" in f for f in frames)
    assert err.getvalue().endswith("\r\x1b[2K")  # the line is cleared before the summary
    assert out.getvalue() == summary_text(summary)
    # each turn's line scrolls above the status line, as a pipe gets it
    turns = [line for f in frames for line in f.splitlines() if line.startswith("turn ")]
    assert turns.count("turn 1 · a · FAIL (not-bad) → TODO, 1 of 3 failures used · fake") == 1
    assert "turn 2 · a · PASS on answer 2 of 3 → PASS · fake" in turns and len(turns) == 4


def test_json_events_and_plain_lines_tell_the_same_turns(tmp_path: Path) -> None:
    lines, events = io.StringIO(), io.StringIO()
    for name, reporter in (
        ("plain", LineReporter(lines, io.StringIO())),
        ("json", JsonReporter(events)),
    ):
        path = make_ledger(tmp_path / f"{name}.reins.db", ["a"])
        loop(path, FakeBackend({"a": ["bad", "good"]}), reporter=reporter)
    parsed = [json.loads(line) for line in events.getvalue().splitlines()]
    assert [e["event"] for e in parsed] == ["turn", "turn", "summary"]
    assert parsed[0]["root_cause"] == "not-bad" and parsed[1]["state"] == "PASS"
    assert lines.getvalue().splitlines()[:2] == [
        "turn 1 · a · FAIL (not-bad) → TODO, 1 of 3 failures used · fake",
        "turn 2 · a · PASS on answer 2 of 3 → PASS · fake",
    ]


def test_a_judge_error_is_its_own_kind_of_turn_in_lines_and_events(tmp_path: Path) -> None:
    lines, events = io.StringIO(), io.StringIO()
    for name, reporter in (
        ("plain", LineReporter(lines, io.StringIO())),
        ("json", JsonReporter(events)),
    ):
        path = make_ledger(tmp_path / f"{name}.reins.db", ["a"])
        loop(path, FakeBackend({"a": ["explode", "good"]}), reporter=reporter)
    parsed = [json.loads(line) for line in events.getvalue().splitlines()]
    assert [e["event"] for e in parsed] == ["turn", "turn", "summary"]
    first = parsed[0]
    assert (first["kind"], first["state"], first["tries"]) == ("judge_error", "TODO", 0)
    assert first["error"] == "quest.prepare: RuntimeError: prepare blew up"
    assert first["outcome"] is None and first["root_cause"] is None
    assert parsed[2]["judge_errors"] == 1 and parsed[2]["generation_errors"] == 0
    assert lines.getvalue().splitlines()[:2] == [
        "turn 1 · a · judge error: quest.prepare: RuntimeError: prepare blew up"
        " · the gate failed, no answer counted · fake",
        "turn 2 · a · PASS on answer 1 of 3 → PASS · fake",
    ]


def test_the_summary_says_why_the_run_ended_and_what_it_did() -> None:
    summary = Summary(
        reason=StopReason.BREAKER,
        message="circuit breaker: 5 generation errors in a row",
        elapsed=2.0,
        turns=10,
        judged=5,
        generation_errors=5,
        judge_errors=0,
        items=3,
        locked={"PASS": 2},
        escalated=1,
        input_tokens=100,
        output_tokens=10,
        cost=0.5,
        total=9,
        remaining=7,
        exported=2,
    )
    assert summary_text(summary).splitlines() == [
        "loop breaker: circuit breaker: 5 generation errors in a row",
        "  turns 10 (5 judged, 5 generation errors, 0 judge errors) in 0:02, 5.0 turns/s",
        "  locked this run: PASS 2; 7 of 9 item(s) left",
        "  turns on the stronger backend: 1",
        "  tokens 100 in / 10 out, cost 0.5000",
        "  exported 2 record(s)",
    ]
    assert summary.to_json()["reason"] == "breaker" and summary.to_json()["turns_per_second"] == 5


def test_the_summary_of_a_tripped_judge_breaker_counts_the_judge_errors() -> None:
    summary = Summary(
        reason=StopReason.JUDGE_BREAKER,
        message="judge breaker: 3 judge errors in a row",
        elapsed=1.0,
        turns=4,
        judged=1,
        generation_errors=0,
        judge_errors=3,
        items=2,
        locked={"PASS": 1},
        escalated=0,
        input_tokens=0,
        output_tokens=0,
        cost=0.0,
        total=2,
        remaining=1,
        exported=0,
    )
    assert summary_text(summary).splitlines()[:2] == [
        "loop judge-breaker: judge breaker: 3 judge errors in a row",
        "  turns 4 (1 judged, 0 generation errors, 3 judge errors) in 0:01, 4.0 turns/s",
    ]
    assert summary.to_json()["reason"] == "judge-breaker"
    assert summary.to_json()["judge_errors"] == 3
    assert StopReason.JUDGE_BREAKER.hard
