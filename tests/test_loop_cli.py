"""`reins loop` and its exit codes, output modes and signals, with fakes behind --model."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reins import SQLiteStore, State
from reins.cli.loop import RETRY_CHOICES
from reins.errors import Exit
from reins.quest import RETRY_POLICIES
from reins.store.walk import iter_items
from reins.testing import FakeBackend
from tests.kit import Cli
from tests.kit.loopkit import SLOW_LOOP, first_turn, make_ledger, registered


@pytest.fixture
def path(tmp_path: Path, cli: Cli) -> Path:
    """A ledger of the tiny quest holding a, b and c; alice drives ``cli``."""
    cli.driver = "alice"
    return make_ledger(tmp_path / "tiny.reins.db")


def test_json_mode_writes_one_event_per_turn_then_the_summary(path: Path, cli: Cli) -> None:
    fake = FakeBackend({"a": ["bad", "good"], "b": ["meh"], "c": ["bad"] * 3})
    with registered(w=fake):
        out = cli("loop", "--model", "fake:w", "--json", "-c", "2")
    assert out.exit_code == 0, out.output
    events = [json.loads(line) for line in out.stdout.splitlines()]
    turns, summary = events[:-1], events[-1]
    assert len(turns) == 6 and all(e["event"] == "turn" for e in turns)
    assert sorted((e["key"], e["turn"]) for e in turns) == [
        ("a", 1), ("a", 2), ("b", 1), ("c", 1), ("c", 2), ("c", 3)
    ]  # fmt: skip
    first_a = next(e for e in turns if e["key"] == "a")
    assert first_a["outcome"] == "FAIL" and first_a["feedback"].startswith("a -> FAIL")
    assert summary["event"] == "summary" and summary["reason"] == "done"
    assert summary["locked"] == {"PASS": 1, "REVIEW": 1, "DONE": 1} and summary["exported"] == 3
    assert len(Path("tiny-results.jsonl").read_text().splitlines()) == 3


def test_plain_lines_when_not_a_terminal_and_a_summary(path: Path, cli: Cli) -> None:
    with registered(w=FakeBackend({"a": ["bad", "good"], "b": ["good"], "c": ["good"]})):
        out = cli("loop", "--model", "fake:w", "--no-export")
    assert out.exit_code == 0
    assert out.stdout == ""  # without --json every line is for people: stderr
    lines = out.stderr.splitlines()
    turns = [line for line in lines if line.startswith("turn ")]
    assert turns[0] == "turn 1 · a · FAIL (not-bad) → TODO, 1 of 3 failures used · fake"
    assert "turn 2 · a · PASS on answer 2 of 3 → PASS · fake" in lines
    assert "loop done: every item is locked" in lines
    assert "  locked this run: PASS 3; 0 of 3 item(s) left" in lines
    assert not Path("tiny-results.jsonl").exists()


def test_the_breaker_has_its_own_exit_code_and_says_what_to_do(path: Path, cli: Cli) -> None:
    with registered(w=FakeBackend(lambda c: "good", failure_rate=1.0)):
        out = cli("loop", "--model", "fake:w", "--breaker", "2")
    assert out.exit_code == Exit.BREAKER
    assert "circuit breaker: generation errors on 2 items in a row" in out.stderr
    assert "Check the backend" in out.stderr
    with SQLiteStore.open(path) as led:
        assert led.stats().tries == {0: 3}


def test_items_all_leased_elsewhere_exit_3(path: Path, cli: Cli) -> None:
    with SQLiteStore.open(path) as led:
        for name in ("p1", "p2", "p3"):
            led.lease(name, ttl=900)
    with registered(w=FakeBackend([])):
        out = cli("loop", "--model", "fake:w", "--no-wait")
    assert out.exit_code == Exit.NOTHING_LEFT
    assert "3 item(s) left, all leased to other drivers" in out.stderr


def test_caps_and_the_retry_policy_reach_the_run(path: Path, cli: Cli) -> None:
    fake = FakeBackend(lambda c: "bad")
    with registered(w=fake):
        out = cli("loop", "--model", "fake:w", "--max-turns", "2", "--retry", "fresh")
    assert out.exit_code == 0 and "loop max-turns" in out.stderr
    assert "## Your last" not in fake.calls[1].prompt.user
    with SQLiteStore.open(path) as led:
        assert [a.policy for a in led.snapshot("a")[1]] == ["fresh", "fresh"]


def test_strong_model_and_escalation_from_the_command_line(path: Path, cli: Cli) -> None:
    weak, strong = FakeBackend(lambda c: "bad"), FakeBackend(lambda c: "good", name="strong")
    with registered(w=weak, s=strong):
        out = cli(
            "loop", "-m", "fake:w", "--strong", "fake:s", "--escalate-on", "x,not-bad", "--json"
        )
    assert out.exit_code == 0
    assert len(weak.calls) == 3 and len(strong.calls) == 3


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--escalate-on", "not-bad"], "--escalate-on needs --strong"),
        (["--concurrency", "0"], "0 is not in the range"),
        (["--retry", "sometimes"], "unknown retry policy 'sometimes'"),
    ],
)
def test_bad_flags_are_usage_errors(path: Path, cli: Cli, args: list[str], message: str) -> None:
    with registered(w=FakeBackend([])):
        out = cli("loop", "--model", "fake:w", *args)
    assert out.exit_code == 2 and message in out.stderr


def test_an_unknown_backend_names_the_known_ones(path: Path, cli: Cli) -> None:
    out = cli("loop", "--model", "nosuch:model")
    assert out.exit_code == 2 and "No backend named 'nosuch'" in out.stderr


def test_the_retry_choices_are_the_quest_policies() -> None:
    assert RETRY_CHOICES == RETRY_POLICIES


def test_reins_turn_prints_the_driver_table(cli: Cli) -> None:
    out = cli("turn", quest=None)
    assert "<!-- driver-table: begin -->" in out.stdout
    assert "| loop   | loop         | backend   | sent    | yes    | loop         |" in out.stdout


@pytest.mark.slow  # a loop in its own process
@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_the_loop_cleanly_with_a_summary(
    tmp_path: Path, sig: signal.Signals, code: int
) -> None:
    path = make_ledger(tmp_path / "tiny.reins.db", [f"k{i}" for i in range(50)])
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_LOOP],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 20
    assert proc.stderr is not None
    first = first_turn(proc.stderr)  # a turn was recorded: the loop is in full swing
    assert first.startswith("turn 1"), first + (proc.stdout.read() if proc.stdout else "")
    time.sleep(0.1)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
    assert proc.returncode == code, err
    # the summary is for people: on stderr, and nothing on stdout without --json
    assert f"loop interrupted: stopped by {sig.name}" in err and out == ""
    assert "none half-recorded, leases released" in err
    with SQLiteStore.open(path) as led:
        stats = led.stats()
        assert stats.leased == 0 and 0 < stats.attempts < 50
        items = list(iter_items(led))
        assert all(i.state in (State.TODO, State.PASS) for i in items)
        assert all(i.turns == len(led.snapshot(i.key)[1]) for i in items)
