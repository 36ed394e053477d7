"""`reins loop --batch` against a fake OpenAI and Anthropic batch provider on 127.0.0.1.

The real ``openai`` and ``anthropic`` backends talk to tests/batchserver.py through their
``base_url``; the fake answers each request from the prompt it was sent, writes the results out
of the requests' order, and keeps a log of every call.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from reins import Context, Item, SQLiteStore, State, Verdict
from reins.errors import Exit
from reins.store.jobs import JobState
from reins.store.model import AttemptKind
from tests.kit import TINY, tiny_prepare
from tests.kit.batchkit import FEEDBACK, batch_loop, cli, spec
from tests.kit.batchserver import Answer, Ask, BatchServer, Expire, Fail
from tests.kit.loopkit import make_ledger


@pytest.fixture
def path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for var in ("REINS_QUEST", "REINS_LEDGER", "REINS_MODEL", "REINS_STRONG_MODEL"):
        monkeypatch.delenv(var, raising=False)
    return make_ledger(tmp_path / "tiny.reins.db")


def events(out: Result) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.stdout.splitlines()]


def created(server: BatchServer, provider: str) -> int:
    """How many provider batches were made."""
    where = r"^/v1/batches$" if provider == "openai" else r"^/v1/messages/batches$"
    return server.fake.calls("POST", where)


def test_each_result_is_a_turn_and_the_next_round_carries_the_feedback(
    server: BatchServer, provider: str, path: Path
) -> None:
    out = batch_loop(server, provider, "--json")
    assert out.exit_code == 0, out.output
    seen = events(out)
    turns = [e for e in seen if e["event"] == "turn"]
    # Matched by custom id, not by position: the fake writes results out of order.
    assert {(e["key"], e["turn"]): e["outcome"] for e in turns} == {
        ("a", 1): "PASS", ("b", 1): "FAIL", ("c", 1): "REVIEW", ("b", 2): "PASS",
    }  # fmt: skip
    phases = [(e["phase"], e["job"]) for e in seen if e["event"] == "batch"]
    assert (
        phases[0] == ("sent", 1) and ("collected", 1) in phases and phases[-1] == ("collected", 2)
    )
    assert ("poll", 1) in phases and seen[-1]["event"] == "summary"
    assert seen[-1]["reason"] == "done" and seen[-1]["exported"] == 3
    assert created(server, provider) == 2  # one batch a round
    # Round 2 was composed from the log: b's prompt carries its FAIL exactly as recorded.
    asked = [a for a in server.fake.asked if "for b." in a.user]
    with SQLiteStore.open(path) as led:
        _, log = led.snapshot("b")
        assert [a.outcome for a in log] == ["FAIL", "PASS"]
        assert FEEDBACK not in asked[0].user and log[0].feedback in asked[1].user
        for item_key in "abc":
            _, attempts = led.snapshot(item_key)
            for a in attempts:
                assert a.usage.batch and a.usage.backend == provider
                assert a.notes.batch is not None and a.notes.batch.startswith(("batch_", "msg"))
                assert a.driver == "loop" and a.notes.via == "loop"
        jobs = led.jobs(open_only=False)
        assert [(j.state, j.requests) for j in jobs] == [
            (JobState.COLLECTED, 3), (JobState.COLLECTED, 1),
        ]  # fmt: skip
        assert led.stats().leased == 0 and led.check() == []
    shown = cli("log", "b").stdout
    assert re.search(rf"loop via {provider} \(batch (batch_|msgbatch_)\w+\) · FAIL", shown), shown
    for ask in server.fake.asked:  # Anthropic's rule on custom ids holds for both
        assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", ask.custom_id)
    assert len(Path("tiny-results.jsonl").read_text().splitlines()) == 3


def test_a_batch_turn_costs_the_batch_price_and_report_says_what_it_saved(
    server: BatchServer, provider: str, path: Path
) -> None:
    model = spec(server, provider, price_in="2", price_out="10")
    out = cli("loop", "--batch", "--model", model, "--poll", "0.01", "--no-export")
    assert out.exit_code == 0, out.output
    with SQLiteStore.open(path) as led:
        attempts = [a for key in "abc" for a in led.snapshot(key)[1]]
        for a in attempts:
            u = a.usage
            assert u.input_tokens and u.output_tokens and u.cost and u.list_cost
            listed = (u.input_tokens * 2 + u.output_tokens * 10) / 1e6
            assert u.list_cost == pytest.approx(listed) and u.cost == pytest.approx(listed / 2)
        stats = led.stats()
        assert stats.batch_cost == pytest.approx(stats.cost) and stats.cost > 0
        assert stats.list_cost == pytest.approx(2 * stats.cost)
    notes = out.stderr.splitlines()  # progress goes to stderr, one note per change
    assert any(re.match(rf"note: batch job 1 · {provider} \S+ · \w+ · 0/3 recorded", n)
               for n in notes), notes  # fmt: skip
    assert any(n.startswith("note: batch job 1 ") and "3/3 recorded" in n for n in notes)
    report = json.loads(cli("report", "--json").stdout)
    assert report["usage"]["batch_cost"] == pytest.approx(stats.cost)
    assert report["usage"]["list_cost"] == pytest.approx(2 * stats.cost)
    assert report["saved"] == {"total": pytest.approx(stats.cost), "cache": pytest.approx(0.0),
                               "batch": pytest.approx(stats.cost)}  # fmt: skip
    text = cli("report").stdout
    cost = next(line for line in text.splitlines() if line.startswith("cost  $"))
    assert f"list price ${2 * stats.cost:.4f}" in cost and f"batch ${stats.cost:.4f}" in cost


def test_errored_and_expired_requests_are_generation_errors_that_use_no_try(
    server: BatchServer, provider: str, path: Path
) -> None:
    def broken(ask: Ask) -> Answer:
        if "for a." in ask.user:
            return Fail(400, "prompt too long for this model")
        return Expire() if "for b." in ask.user else "good"

    server.fake.answer = broken
    out = batch_loop(server, provider, "--set-aside-after", "2", "--json")
    assert out.exit_code == Exit.SET_ASIDE, out.output
    seen = events(out)
    asides = [e["key"] for e in seen if e["event"] == "set_aside"]
    assert sorted(asides) == ["a", "b"]
    assert created(server, provider) == 2  # two rounds each, then both are set aside
    with SQLiteStore.open(path) as led:
        a, log_a = led.snapshot("a")
        b, log_b = led.snapshot("b")
        assert (a.state, a.tries, b.state, b.tries) == (State.TODO, 0, State.TODO, 0)
        assert [x.kind for x in log_a + log_b] == [AttemptKind.GENERATION_ERROR] * 4
        assert "prompt too long for this model" in (log_a[0].error or "")
        assert "expired" in (log_b[0].error or "")
        assert led.get("c").state is State.PASS and led.stats().leased == 0
        assert all(x.feedback == "" and x.outcome is None for x in log_a + log_b)


def test_the_breaker_stops_the_run_after_the_round_and_records_no_more_errors(
    server: BatchServer, provider: str, tmp_path: Path, path: Path
) -> None:
    big = make_ledger(tmp_path / "big.reins.db", [f"k{i}" for i in range(6)])
    server.fake.answer = lambda ask: Fail(500, "overloaded")
    out = batch_loop(server, provider, "--breaker", "3", ledger=big)
    assert out.exit_code == Exit.BREAKER, out.output
    assert "circuit breaker: generation errors on 3 items in a row" in out.stderr
    assert created(server, provider) == 1
    with SQLiteStore.open(big) as led:
        stats = led.stats()
        assert stats.kinds == {"generation_error": 3} and stats.tries == {0: 6}
        assert stats.leased == 0  # the items not recorded are given back with the job
        [job] = led.jobs(open_only=False)
        assert job.state is JobState.COLLECTED
        assert "3 errors not recorded (the breaker tripped)" in (job.note or "")


def _mended(item: Item, raw: str) -> Context | Verdict:
    return tiny_prepare(item, "good")


# The tiny quest with its gate mended: prepare no longer blows up on "explode".
FIXED = dataclasses.replace(TINY, prepare=_mended)


def test_the_judge_breaker_stops_recording_and_a_rerun_records_the_rest(
    server: BatchServer, provider: str, tmp_path: Path, path: Path
) -> None:
    big = make_ledger(tmp_path / "big.reins.db", [f"k{i}" for i in range(5)])
    server.fake.answer = lambda ask: "explode"
    out = batch_loop(server, provider, "--judge-breaker", "2", ledger=big)
    assert out.exit_code == Exit.JUDGE_ERROR, out.output
    assert "judge breaker: 2 judge errors in a row" in out.stderr
    assert "still open" in out.stderr and "run the same command again" in out.stderr
    with SQLiteStore.open(big) as led:
        assert led.stats().kinds == {"judge_error": 2}
        [job] = led.jobs()
        assert job.state is JobState.SENT and led.stats().leased == 5
    # The gate mended, a rerun records the other three answers the provider holds: nothing
    # is sent again for them, and the two recorded are not recorded twice.
    out = batch_loop(server, provider, ledger=big, quest="tests.batch.test_batch_loop:FIXED")
    assert out.exit_code == 0, out.output
    with SQLiteStore.open(big) as led:
        kinds = [a.kind for i in range(5) for a in led.snapshot(f"k{i}")[1]]
        assert kinds.count(AttemptKind.JUDGE_ERROR) == 2 and kinds.count(AttemptKind.JUDGED) == 5
        assert all(led.get(f"k{i}").state is State.PASS for i in range(5))
        assert [j.requests for j in led.jobs(open_only=False)] == [5, 2]
        assert led.check() == []
    assert created(server, provider) == 2


def test_a_backend_without_a_batch_api_and_strong_are_refused(path: Path) -> None:
    out = cli("loop", "--batch", "--model", "ollama:m?base_url=http://127.0.0.1:9")
    assert out.exit_code == Exit.USAGE and "has no batch API" in out.output
    out = cli("loop", "--batch", "--model", "openai:m", "--strong", "openai:n",
              "--escalate-on", "not-bad")  # fmt: skip
    assert out.exit_code == Exit.USAGE and "--strong" in out.output
    with SQLiteStore.open(path) as led:
        assert led.jobs(open_only=False) == [] and led.stats().attempts == 0


def test_a_transient_provider_error_is_retried_and_a_create_is_never_made_twice(
    server: BatchServer, provider: str, path: Path
) -> None:
    create = r"^/v1/batches$" if provider == "openai" else r"^/v1/messages/batches$"
    poll = r"^/v1/batches/" if provider == "openai" else r"^/v1/messages/batches/"
    server.fake.fault("POST", create, 500, times=1)  # refused before anything was made
    server.fake.fault("GET", poll, 429, times=2)
    out = batch_loop(server, provider)
    assert out.exit_code == 0, out.output
    assert created(server, provider) == 3  # the refused create, then one batch a round
    with SQLiteStore.open(path) as led:
        assert led.stats().remaining == 0 and len(led.jobs(open_only=False)) == 2


def test_a_terminal_draws_the_batch_being_polled_in_place(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    monkeypatch.setenv("COLUMNS", "200")
    from reins.loop import BatchEvent, TtyReporter

    out, err = io.StringIO(), io.StringIO()
    tty = TtyReporter(out, err)
    poll = BatchEvent("poll", 3, "openai", "gpt-4o", "batch_abc", "in_progress", 500, 12,
                      {"total": 500, "completed": 130, "failed": 2}, 151.0)  # fmt: skip
    tty.batch(poll)
    line = "batch job 3 · openai batch_abc · in_progress · 12/500 recorded · total 500, "
    assert err.getvalue() == f"\r\x1b[2K{line}completed 130, failed 2 · 2:31"
    tty.batch(dataclasses.replace(poll, phase="collected", done=500, message="done"))
    assert err.getvalue().endswith(
        "500/500 recorded · total 500, completed 130, failed 2 · 2:31: done\n"
    )
    assert out.getvalue() == ""
