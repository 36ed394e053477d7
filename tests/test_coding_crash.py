"""A loop SIGKILLed while its agent works: nothing of the turn is recorded, the agent does not
outlive reins, and the next run ends what it left, resets the worktree and records the turn
once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reins import SQLiteStore, State
from reins.coders import tree
from tests.kit.codingkit import FILE_HOLDS_KEY, agent, cli, git, quest_repo

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
# The first run of the agent edits a file, starts a daemon that leaves its session, and hangs
# until the loop is killed; the second does the task.
CRASHING = """
import os, subprocess, sys, time
marks = sys.argv[1]
if not os.path.exists(os.path.join(marks, "agent")):
    open("half.txt", "w").write("an edit the crash interrupts\\n")
    daemon = subprocess.Popen(["sleep", "600"], start_new_session=True)
    open(os.path.join(marks, "daemon"), "w").write(str(daemon.pid))
    open(os.path.join(marks, "agent"), "w").write(str(os.getpid()))
    print("working", flush=True)
    time.sleep(600)
open("k.txt", "w").write("k")
print("done")
"""


def wait_for(path: Path, seconds: float = 120.0) -> str:
    deadline = time.monotonic() + seconds
    while not path.exists() or not path.read_text():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)
    return path.read_text()


def dies(pid: int, seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while tree.alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_a_crash_mid_agent_records_nothing_and_the_rerun_cleans_up_and_records_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    quest_repo(tmp_path / "q", ["k"], FILE_HOLDS_KEY)
    assert cli("-q", "q", "scan").exit_code == 0
    marks = tmp_path / "marks"
    marks.mkdir()
    model = f"cmd:{agent(tmp_path / 'agent.py', CRASHING)} {marks}"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    loop = subprocess.Popen(
        [sys.executable, "-m", "reins.cli", "-q", "q", "loop", "--model", model, "--lease", "2"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        first = int(wait_for(marks / "agent"))
        daemon = int(wait_for(marks / "daemon"))
    finally:
        loop.send_signal(signal.SIGKILL)
        loop.wait()
    assert dies(first), "the agent outlived the reins that ran it"
    assert tree.alive(daemon)  # left its session: only the next run can end it
    worktree = tmp_path / ".reins-worktrees" / "q" / "k"
    assert (worktree / "half.txt").exists()
    with SQLiteStore.open(tmp_path / "q.reins.db") as led:
        assert led.snapshot("k")[1] == []  # the crashed turn is not a turn

    out = cli("-q", "q", "loop", "--model", model)  # waits out the dead run's lease
    assert out.exit_code == 0, out.output
    assert dies(daemon), "the crashed run's daemon was left running"
    with SQLiteStore.open(tmp_path / "q.reins.db") as led:
        item, log = led.snapshot("k")
    assert item.state is State.PASS and [a.turn for a in log] == [1]
    # The crash's half-made edit did not reach the submission or the branch.
    assert git(tmp_path / "q", "diff", "--name-only", "main", "reins/k").split() == ["k.txt"]
    assert "half.txt" not in (log[0].submission or "")
