"""Ctrl-C leaves a sent batch running and says how to resume or cancel; `reins batch status`
and `reins batch cancel` against the fake provider."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import Result

from reins import SQLiteStore, State
from reins.errors import Exit
from reins.store.jobs import JobState
from tests.kit import CHILD_PATH
from tests.kit.batchkit import LOOP, run_loop
from tests.kit.batchserver import KEY, BatchServer
from tests.kit.cli import reins
from tests.kit.loopkit import make_ledger


@pytest.fixture
def ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for var in ("REINS_QUEST", "REINS_LEDGER", "REINS_MODEL"):
        monkeypatch.delenv(var, raising=False)
    return make_ledger(tmp_path / "tiny.reins.db")


def model(server: BatchServer, provider: str) -> str:
    return server.openai() if provider == "openai" else server.anthropic()


def cli(ledger: Path, *args: str) -> Result:
    return reins("--quest", "tests.kit:TINY", "--ledger", str(ledger), *args)


def start_loop(server: BatchServer, provider: str, ledger: Path) -> subprocess.Popen[str]:
    argv = ["--quest", "tests.kit:TINY", "--ledger", str(ledger), "loop", "--batch"]
    argv += ["--model", model(server, provider), "--poll", "0.01", "--lease", "1", "--json"]
    return subprocess.Popen(
        [sys.executable, "-c", LOOP, *argv],
        env={**os.environ, "PYTHONPATH": CHILD_PATH, "BATCH_KEY": KEY},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def sent_batch(proc: subprocess.Popen[str]) -> dict[str, object]:
    """Read the loop's events until its batch is sent."""
    assert proc.stdout is not None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        assert line, proc.stderr.read() if proc.stderr else ""
        event = json.loads(line)
        if event.get("phase") == "sent":
            return dict(event)
    raise AssertionError("the batch was never sent")


def test_ctrl_c_leaves_the_batch_running_and_a_rerun_records_it(
    server: BatchServer, provider: str, ledger: Path
) -> None:
    server.fake.auto = False  # the batch runs until the test says
    proc = start_loop(server, provider, ledger)
    sent = sent_batch(proc)
    time.sleep(0.2)  # polling now
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == Exit.SIGINT, err
    summary = json.loads(out.splitlines()[-1])
    assert summary["reason"] == "interrupted"
    message = summary["message"]
    assert f"batch job(s) 1 ({provider} {sent['batch_id']}) still open" in message
    assert "run the same command again" in message and "reins batch cancel" in message
    with SQLiteStore.open(ledger) as led:
        [job] = led.jobs()
        assert job.state is JobState.SENT and job.batch_id == sent["batch_id"]
        assert led.stats().leased == 3 and led.stats().attempts == 0  # still in flight
    assert "batch jobs   1 open, 3 item(s) in flight" in cli(ledger, "status").stdout
    status = json.loads(cli(ledger, "batch", "status", "--json").stdout)
    assert [(j["job"], j["state"], j["batch_id"], j["requests"]) for j in status] == [
        (1, "sent", sent["batch_id"], 3)
    ]
    assert status[0]["held_by"] is None and status[0]["provider"] is None
    asked = json.loads(
        cli(ledger, "batch", "status", "--model", model(server, provider), "--json").stdout
    )
    assert asked[0]["provider"]["status"] in ("in_progress", "validating")
    server.fake.auto = True
    rerun = cli(ledger, "loop", "--batch", "--model", model(server, provider), "--poll", "0.01")
    assert rerun.exit_code == 0, rerun.output
    creates = r"^/v1/batches$" if provider == "openai" else r"^/v1/messages/batches$"
    assert server.fake.calls("POST", creates) == 2  # the first batch was carried on, not resent
    with SQLiteStore.open(ledger) as led:
        assert led.stats().remaining == 0 and led.jobs() == []
    assert "no open batch job" in cli(ledger, "batch", "status").stdout
    assert "collected" in cli(ledger, "batch", "status", "--all").stdout


def test_batch_cancel_records_what_finished_and_gives_the_rest_back(
    server: BatchServer, provider: str, ledger: Path
) -> None:
    server.fake.auto = False
    proc = start_loop(server, provider, ledger)
    sent = sent_batch(proc)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=30)
    batch = server.fake.batches[str(sent["batch_id"])]
    batch.done_before_stop = 1  # one request was answered before the cancel took
    server.fake.auto = True
    out = cli(ledger, "batch", "cancel", "--model", model(server, provider), "--json")
    assert out.exit_code == 0, out.output
    [view] = json.loads(out.stdout)
    assert (view["job"], view["state"], view["outcome"]) == (1, "cancelled", "cancelled")
    assert "1 recorded" in view["note"] and "2 canceled" in view["note"]
    with SQLiteStore.open(ledger) as led:
        stats = led.stats()
        assert stats.attempts == 1 and stats.leased == 0 and stats.tries == {0: 3}
        assert led.get("a").state is State.PASS  # the one answered: the first request
        assert [(led.get(k).state, led.get(k).turns) for k in "bc"] == [(State.TODO, 0)] * 2
        assert [j.state for j in led.jobs(open_only=False)] == [JobState.CANCELLED]
    again = cli(ledger, "batch", "cancel", "1", "--model", model(server, provider))
    assert again.exit_code == Exit.USAGE and "cancelled already" in again.output


def test_batch_cancel_refuses_another_backend_s_job_and_discards_an_unsent_one(
    server: BatchServer, ledger: Path
) -> None:
    from reins.store.jobs import JobDraft

    with SQLiteStore.open(ledger) as led:
        opened = led.open_job(JobDraft("openai", "gpt-test", "loop", "x"), limit=2, hold=0)
        assert opened is not None
    out = cli(ledger, "batch", "cancel", "--model", server.anthropic())
    assert out.exit_code == Exit.USAGE and "was sent to openai:gpt-test" in out.output
    out = cli(ledger, "batch", "cancel", "--model", server.openai())
    assert out.exit_code == 0, out.output
    assert "discarded" in out.stdout
    with SQLiteStore.open(ledger) as led:
        assert led.stats().leased == 0 and led.jobs() == []
    assert server.fake.log == []  # never sent: the provider heard nothing of it


def test_batch_cancel_of_a_batch_never_recorded_cancels_only_one_known_to_be_the_job_s(
    server: BatchServer, provider: str, ledger: Path
) -> None:
    """Killed after the provider made its batch, before it recorded the id: at Anthropic a
    batch is the job's only once its results say so, so a cancel with --no-wait touches no
    batch (another batch of the same size may be someone else's), and one that waits waits
    until they end and records the job's own results."""
    server.fake.auto = False
    killed = run_loop(server, provider, ledger, "created")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    with server.fake.lock:  # someone else's batch of the same size, made just after
        server.fake.an_create({"requests": [{"custom_id": f"elsewhere-{n}", "params": {}}
                                            for n in range(3)]})  # fmt: skip
    out = cli(ledger, "batch", "cancel", "--no-wait", "--model", model(server, provider))
    assert out.exit_code == 0, out.output
    cancels = server.fake.calls("POST", r"/cancel$")
    with SQLiteStore.open(ledger) as led:
        [job] = led.jobs(open_only=False)
    if provider == "openai":  # the batch carries the job's tag: its cancel is asked for
        assert cancels == 1 and job.state is JobState.SENT and job.note == "cancelling"
        return
    assert cancels == 0 and job.state is JobState.COMPOSED and job.batch_id is None
    assert "may have been sent as anthropic batch(es)" in out.stderr
    assert "msgbatch_000001, msgbatch_000002" not in out.stderr  # newest first
    assert "msgbatch_000002, msgbatch_000001" in out.stderr
    server.fake.auto = True
    out = cli(ledger, "batch", "cancel", "--model", model(server, provider))
    assert out.exit_code == 0, out.output
    assert server.fake.calls("POST", r"/cancel$") == 1  # its own, which had ended already
    with SQLiteStore.open(ledger) as led:
        [job] = led.jobs(open_only=False)
        assert job.state is JobState.COLLECTED and job.batch_id == "msgbatch_000001"
        assert led.stats().attempts == 3 and led.check() == []
