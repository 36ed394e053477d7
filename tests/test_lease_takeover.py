"""A rerun on the same host after a SIGKILL takes the killed run's leases at once.

The killed run leases for ten minutes; the rerun runs with ``--no-wait``, which stops when the
items left are all held longer than its own lease: before holders were recorded it stopped
with the killed run's items untouched (exit 3), now it sees their holder is gone and works them.
For the text loop, a batch round's job and a coding agent's turn alike. How long a rerun takes
to start on them is measured in bench/bench_takeover.py, never asserted here.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reins import SQLiteStore, State
from reins.loop import StopReason
from reins.store.jobs import JobState
from reins.testing import FakeBackend
from tests.kit import ROOT
from tests.kit.batchkit import run_loop, steered
from tests.kit.batchserver import BatchServer, FakeProvider
from tests.kit.codingkit import FILE_HOLDS_KEY, agent, cli, quest_repo
from tests.kit.loopkit import loop, make_ledger

pytestmark = pytest.mark.slow

LONG = "600"  # the killed run's lease, in seconds: far longer than any test waits
# `reins loop` on a backend that never answers, leasing for LONG seconds: python -c HANGING.
HANGING = f"""
import sys
from reins.backends import registry
from reins.cli import main
from reins.testing import FakeBackend
from tests.kit.loopkit import FakeFactory
registry.register("fake", FakeFactory({{"w": FakeBackend(lambda c: "good", latency=3600)}}))
sys.argv = ["reins", "--quest", "tests.kit:TINY", "--ledger", sys.argv[1], "loop", "-m",
            "fake:w", "-c", "2", "--lease", "{LONG}"]
main()
"""


def until(condition: object, seconds: float = 60.0) -> None:
    """Poll ``condition()`` until it holds (a deadline, so a broken run fails instead of
    hanging; nothing is asserted about how long it took)."""
    deadline = time.monotonic() + seconds
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "the killed run never got that far"
        time.sleep(0.05)


def leased(path: Path) -> int:
    with SQLiteStore.open(path) as led:
        return led.stats().leased


def test_a_rerun_takes_a_killed_loop_s_items_at_once(tmp_path: Path) -> None:
    path = make_ledger(tmp_path / "tiny.reins.db")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    killed = subprocess.Popen([sys.executable, "-c", HANGING, str(path)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        until(lambda: leased(path) == 2)  # a and b in flight, each leased for ten minutes
    finally:
        killed.send_signal(signal.SIGKILL)
        killed.wait()
    with SQLiteStore.open(path) as led:
        assert {led.get(k).lease_owner is not None for k in "ab"} == {True}
    summary = loop(path, FakeBackend(lambda c: "good"), wait=False)
    assert summary.reason is StopReason.DONE, summary.message
    with SQLiteStore.open(path) as led:
        assert {led.get(k).state for k in "abc"} == {State.PASS}
        assert led.stats().leased == 0 and led.check() == []


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_rerun_carries_on_a_killed_batch_run_s_job_at_once(tmp_path: Path, provider: str) -> None:
    server = BatchServer(FakeProvider(steered))
    try:
        path = make_ledger(tmp_path / "tiny.reins.db")
        killed = run_loop(server, provider, path, "sent", "--lease", LONG)
        assert killed.returncode == -signal.SIGKILL, killed.stderr
        with SQLiteStore.open(path) as led:
            [job] = led.jobs()
            assert job.state is JobState.SENT and (job.held_until or 0) > time.time() + 60
        again = run_loop(server, provider, path, None, "--no-wait")
        assert again.returncode == 0, again.stdout + again.stderr
        assert "driven by another process" not in again.stderr
        with SQLiteStore.open(path) as led:
            jobs = led.jobs(open_only=False)
            assert [(j.state, j.requests) for j in jobs] == [
                (JobState.COLLECTED, 3), (JobState.COLLECTED, 1),
            ]  # fmt: skip
            assert led.stats().remaining == 0 and led.check() == []
    finally:
        server.close()


HANGS_FIRST = """
import os, sys, time
marks = sys.argv[1]
if not os.path.exists(os.path.join(marks, "agent")):
    open(os.path.join(marks, "agent"), "w").write(str(os.getpid()))
    time.sleep(600)
open("k.txt", "w").write("k")
"""


def test_a_rerun_takes_a_killed_coding_run_s_item_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    quest_repo(tmp_path / "q", ["k"], FILE_HOLDS_KEY)
    assert cli("-q", "q", "scan").exit_code == 0
    marks = tmp_path / "marks"
    marks.mkdir()
    model = f"cmd:{agent(tmp_path / 'agent.py', HANGS_FIRST)} {marks}"
    # Unconfined: the agent marks its start in a folder of the test's.
    argv = [sys.executable, "-m", "reins.cli", "-q", "q", "loop", "--model", model,
            "--lease", LONG, "--sandbox", "none"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    killed = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        until((marks / "agent").exists)
    finally:
        killed.send_signal(signal.SIGKILL)
        killed.wait()
    out = cli("-q", "q", "loop", "--model", model, "--no-wait", "--sandbox", "none")
    assert out.exit_code == 0, out.output
    with SQLiteStore.open(tmp_path / "q.reins.db") as led:
        item, log = led.snapshot("k")
    assert item.state is State.PASS and [a.turn for a in log] == [1]
