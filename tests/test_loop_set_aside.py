"""No item holds the loop hostage: an item whose generation keeps failing is set aside for the
run (TODO, tries unchanged) while the others are worked, and the breaker trips only when errors
span several items — when the backend itself is down (invariant 15)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from reins import SQLiteStore, State
from reins.errors import BackendError, ConfigError, Exit
from reins.loop import LoopOptions, StopReason
from reins.quests.emails import quest as EMAILS
from reins.store import AttemptKind
from reins.testing import FakeBackend, FakeCall
from reins.values import JSON
from reins.verify.mailaddr import addresses
from tests.kit import Cli
from tests.kit.loopkit import loop, make_ledger, registered

KEYS = [f"k{i:02d}" for i in range(11)]


def too_long_for(*stuck: str) -> Any:
    """A backend whose context window the prompts of ``stuck`` items do not fit."""

    def reply(call: FakeCall) -> str | BackendError:
        if call.key in stuck:
            return BackendError("fake: the prompt exceeds the context window (262,390 tokens)")
        return "good"

    return reply


def events(out: Result) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.stdout.splitlines()]


def test_an_item_that_never_generates_is_set_aside_and_the_others_are_worked(
    tmp_path: Path,
    cli: Cli,
) -> None:
    path = make_ledger(tmp_path / "tiny.reins.db", KEYS)
    with registered(w=FakeBackend(too_long_for("k03"))):
        out = cli("loop", "--model", "fake:w", "--json", "--no-export")
    assert out.exit_code == Exit.SET_ASIDE, out.output
    seen = events(out)
    aside = [e for e in seen if e["event"] == "set_aside"]
    assert aside == [
        {
            "event": "set_aside",
            "key": "k03",
            "errors": 3,
            "error": "fake: the prompt exceeds the context window (262,390 tokens)",
            "tries": 0,
            "max_tries": 3,
            "failures_used": 0,
            "answers_allowed": 3,
        }
    ]
    summary = seen[-1]
    assert summary["event"] == "summary" and summary["reason"] == "set-aside"
    assert summary["set_aside"] == ["k03"] and summary["remaining"] == 1
    assert summary["locked"] == {"PASS": 10} and summary["generation_errors"] == 3
    with SQLiteStore.open(path) as led:
        item, log = led.snapshot("k03")
        assert (item.state, item.tries, item.lease_owner) == (State.TODO, 0, None)
        assert [a.kind for a in log] == [AttemptKind.GENERATION_ERROR] * 3
        assert all(led.get(k).state is State.PASS for k in KEYS if k != "k03")


def test_the_loop_says_which_items_it_set_aside_and_why(tmp_path: Path, cli: Cli) -> None:
    make_ledger(tmp_path / "tiny.reins.db", KEYS)
    with registered(w=FakeBackend(too_long_for("k03", "k07"))):
        out = cli("loop", "--model", "fake:w", "--no-export", "--set-aside-after", "1")
    assert out.exit_code == Exit.SET_ASIDE, out.output
    assert "set aside 'k03' for the rest of this run: 1 generation error in a row" in out.stderr
    assert "context window" in out.stderr and "0 of 3 failures used" in out.stderr
    assert "loop set-aside: 2 item(s) left; set aside this run" in out.stderr
    assert "  set aside this run: k03, k07" in out.stderr


def test_fewer_stuck_items_in_a_row_than_the_breaker_never_trip_it(
    tmp_path: Path, cli: Cli
) -> None:
    """Four items in a row whose prompts are too long: the breaker (5 items) stays closed."""
    path = make_ledger(tmp_path / "tiny.reins.db", KEYS)
    stuck = ("k00", "k01", "k02", "k03")
    summary = loop(path, FakeBackend(too_long_for(*stuck)))
    assert summary.reason is StopReason.SET_ASIDE
    assert summary.set_aside == stuck and summary.locked == {"PASS": 7}
    with SQLiteStore.open(path) as led:
        assert [led.get(k).tries for k in stuck] == [0, 0, 0, 0]


def test_a_backend_that_is_down_still_trips_the_breaker(tmp_path: Path, cli: Cli) -> None:
    """One slot: each item is set aside after 3 errors, and the fifth item's first trips it."""
    path = make_ledger(tmp_path / "tiny.reins.db", KEYS)
    summary = loop(path, FakeBackend(lambda call: BackendError("fake: connection refused")))
    assert summary.reason is StopReason.BREAKER
    assert "generation errors on 5 items in a row, 13 errors with" in summary.message
    assert summary.set_aside == ("k00", "k01", "k02", "k03")
    assert summary.judged == 0 and summary.generation_errors == 13
    with SQLiteStore.open(path) as led:
        stats = led.stats()
    assert stats.remaining == 11 and stats.tries == {0: 11} and stats.leased == 0


def test_a_backend_that_is_down_trips_the_breaker_at_once_across_slots(
    tmp_path: Path, cli: Cli
) -> None:
    path = make_ledger(tmp_path / "tiny.reins.db", [f"k{i:02d}" for i in range(40)])
    fake = FakeBackend(lambda call: BackendError("fake: connection refused"), latency=0.002)
    summary = loop(path, fake, concurrency=8, breaker=3)
    assert summary.reason is StopReason.BREAKER and summary.set_aside == ()
    assert 3 <= summary.generation_errors < 3 + 8


def test_a_judged_turn_resets_the_breaker(tmp_path: Path, cli: Cli) -> None:
    """Stuck items with a good one between each: never two items in a row fail."""
    keys = [f"k{i:02d}" for i in range(12)]
    path = make_ledger(tmp_path / "tiny.reins.db", keys)
    stuck = tuple(keys[::2])
    summary = loop(path, FakeBackend(too_long_for(*stuck)), breaker=2)
    assert summary.reason is StopReason.SET_ASIDE and summary.set_aside == stuck


def test_a_set_aside_item_is_tried_again_by_the_next_run(tmp_path: Path, cli: Cli) -> None:
    path = make_ledger(tmp_path / "tiny.reins.db", ["a", "b"])
    first = loop(path, FakeBackend(too_long_for("a")))
    assert first.set_aside == ("a",)
    again = loop(path, FakeBackend(lambda call: "good"))
    assert again.reason is StopReason.DONE and again.set_aside == ()
    with SQLiteStore.open(path) as led:
        item, log = led.snapshot("a")
    assert item.state is State.PASS and [a.kind for a in log][-1] is AttemptKind.JUDGED


def test_set_aside_after_is_a_whole_number_of_at_least_one(tmp_path: Path, cli: Cli) -> None:
    make_ledger(tmp_path / "tiny.reins.db")
    with registered(w=FakeBackend([])):
        bad = cli("loop", "--model", "fake:w", "--set-aside-after", "0")
    assert bad.exit_code == 2 and "--set-aside-after" in bad.stderr
    with pytest.raises(ConfigError, match="set_aside_after"):
        LoopOptions(set_aside_after=0)


def _text(payload: JSON) -> str:
    assert isinstance(payload, dict) and isinstance(payload["text"], str)
    return payload["text"]


def test_a_megabyte_answer_to_the_emails_quest_does_not_stop_the_loop(
    tmp_path: Path, cli: Cli
) -> None:
    """The reported defect: a 1 MB answer made a 1 MB FAIL text and a 1 MB next prompt, every
    later turn of that item failed to generate, and the breaker stopped the whole run."""
    assert cli("scan", quest="emails").exit_code == 0
    texts = {key: _text(payload) for key, payload in EMAILS.seed([])}
    big = json.dumps({"addresses": ["x" * 1_000_000 + "@example.org"]})

    def context_window(call: FakeCall) -> str | BackendError:
        if len(call.prompt.text()) > 100_000:
            return BackendError("fake: the prompt exceeds the context window")
        if call.key == "01-meeting" and call.n == 0:
            return big
        return json.dumps({"addresses": addresses(texts[call.key])})

    fake = FakeBackend(context_window)
    with registered(w=fake):
        out = cli("loop", "--model", "fake:w", "--json", quest="emails")
    assert out.exit_code == 0, out.output
    summary = events(out)[-1]
    assert summary["reason"] == "done" and summary["generation_errors"] == 0
    assert len(fake.calls_for("01-meeting")) == 2
    with SQLiteStore.open(tmp_path / "emails.reins.db") as led:
        item, log = led.snapshot("01-meeting")
    assert item.state.terminal and log[0].submission == big
