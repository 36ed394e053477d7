"""A loop SIGKILLed while its agent works: nothing of the turn is recorded, nothing the agent
started outlives reins (a ``setsid`` daemon neither), and the next run resets the workspace
and records the turn once. A process a crashed run left anyway is ended when the next run of
the quest starts, not when it happens to take that item."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reins import SQLiteStore, State
from reins.workspace import processes as tree
from tests.kit.codingkit import FILE_HOLDS_KEY, agent, cli, git, passes_reproduce, quest_repo

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
# Edits a file, starts a daemon that leaves its session (as `setsid` would), and hangs until
# the loop is killed.
CRASHING = """
import subprocess, time
subprocess.Popen(["sleep", "600"], start_new_session=True)
open("half.txt", "w").write("an edit the crash interrupts\\n")
print("working", flush=True)
time.sleep(600)
"""
DOING = """
open("k.txt", "w").write("k")
print("done")
"""


def wait_until(condition: object, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "it never happened"
        time.sleep(0.05)


def all_die(pids: set[int], seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while any(tree.alive(p) for p in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.mark.parametrize("sandbox", ["bwrap", "none"])
def test_a_crash_mid_agent_leaves_nothing_running_and_the_rerun_records_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sandbox: str
) -> None:
    monkeypatch.chdir(tmp_path)
    quest_repo(tmp_path / "q", ["k"], FILE_HOLDS_KEY)
    assert cli("-q", "q", "scan").exit_code == 0
    crashing = f"cmd:{agent(tmp_path / 'crashing.py', CRASHING)}"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    argv = [sys.executable, "-m", "reins.cli", "-q", "q", "loop", "--model", crashing,
            "--lease", "2", "--sandbox", sandbox]  # fmt: skip
    loop = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    workspace = tmp_path / ".reins-worktrees" / "q" / "k"
    try:
        wait_until(lambda: (workspace / "half.txt").exists())
        # The agent, the daemon and whatever namespace holds them, as the host sees them.
        wait_until(lambda: any(_is_sleep(p) for p in tree.marked(str(workspace))))
        started = tree.marked(str(workspace))
    finally:
        loop.send_signal(signal.SIGKILL)
        loop.wait()
    assert started and all_die(started), "what the agent started outlived the reins that ran it"
    with SQLiteStore.open(tmp_path / "q.reins.db") as led:
        assert led.snapshot("k")[1] == []  # the crashed turn is not a turn

    out = cli("-q", "q", "loop", "--model", f"cmd:{agent(tmp_path / 'doing.py', DOING)}",
              "--sandbox", sandbox)  # fmt: skip
    assert out.exit_code == 0, out.output
    with SQLiteStore.open(tmp_path / "q.reins.db") as led:
        item, log = led.snapshot("k")
    assert item.state is State.PASS and [a.turn for a in log] == [1]
    # The crash's half-made edit did not reach the submission or the branch.
    assert git(tmp_path / "q", "diff", "--name-only", "main", "reins/q/k").split() == ["k.txt"]
    assert "half.txt" not in (log[0].submission or "")
    q = tmp_path / "q"
    assert passes_reproduce(q, tmp_path / "q.reins.db", q, tmp_path / "replay") == 1


def test_a_run_ends_what_a_crashed_run_left_when_it_starts_and_spares_a_live_run_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A leftover no namespace caught (the host allowed none): the next run of the quest
    ends it at its start, though it never takes that item; a live run's agent is left be."""
    monkeypatch.chdir(tmp_path)
    quest_repo(tmp_path / "q", ["k"], FILE_HOLDS_KEY)
    assert cli("-q", "q", "scan").exit_code == 0
    root = tmp_path / ".reins-worktrees" / "q"
    gone = subprocess.Popen(["true"])
    gone.wait()
    dead_runner = f"{gone.pid}:1"  # a reins process that is no more
    live_runner = tree.runner()  # this one, alive
    orphan = _marked_sleep(f"{root}/other#{dead_runner}#t0")
    spared = _marked_sleep(f"{root}/mine#{live_runner}#t1")
    try:
        out = cli("-q", "q", "loop", "--model", f"cmd:{agent(tmp_path / 'a.py', DOING)}")
        assert out.exit_code == 0, out.output
        assert "ended 1 process(es) a crashed run left running" in out.stderr
        assert all_die({orphan.pid}, 10)
        assert spared.poll() is None
    finally:
        for proc in (orphan, spared):
            proc.kill()
            proc.wait()


def _marked_sleep(marker: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, tree.MARKER: marker}
    return subprocess.Popen(["sleep", "600"], env=env, start_new_session=True)


def _is_sleep(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().startswith(b"sleep")
    except OSError:
        return False


# The agent's code, imported by the judge's test run, starts a daemon that leaves its session
# (a background writer of the Terminal-Bench kind), then the test hangs until the loop is killed.
PLANTS_A_DAEMON = r"""
code = '''
import subprocess, time
subprocess.Popen(["sleep", "3141"], start_new_session=True)
time.sleep(600)
'''
open("k.py", "w").write(code)
open("k.txt", "w").write("k")
print("done")
"""
IMPORTS_IT = (
    '| imports | FAIL | command | run = ["{python}", "-c", "import k"], workspace = true, '
    "timeout = 600 | Import it. |"
)


def test_a_loop_killed_while_its_gate_runs_leaves_no_test_process_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    quest_repo(tmp_path / "q", ["k"], IMPORTS_IT)
    assert cli("-q", "q", "scan").exit_code == 0
    model = f"cmd:{agent(tmp_path / 'plants.py', PLANTS_A_DAEMON)}"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    argv = [sys.executable, "-m", "reins.cli", "-q", "q", "loop", "--model", model]
    loop = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    judge = tmp_path / ".reins-worktrees" / "q" / ".reins" / "judge"
    try:
        wait_until(lambda: any(_is(p, b"sleep\x003141") for p in tree.marked(str(judge))))
        started = tree.marked(str(judge))
    finally:
        loop.send_signal(signal.SIGKILL)
        loop.wait()
    assert all_die(started), "the gate's test run outlived the reins that ran it"
    assert not [p for p in _pids() if _is(p, b"sleep\x003141")]


def _pids() -> list[int]:
    return [int(n) for n in os.listdir("/proc") if n.isdigit()]


def _is(pid: int, command: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().startswith(command)
    except OSError:
        return False
