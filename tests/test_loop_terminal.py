"""`reins loop` on a terminal, and stopped by Ctrl-C: a line per turn scrolls above the live
status line (as the README shows), and what the stop says of the turns in flight is what the
ledger records (a coding agent killed by it is a generation error, and said to be one)."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

from reins import SQLiteStore
from reins.errors import Exit
from reins.store import AttemptKind, State
from tests.kit import CHILD_PATH
from tests.kit.codingkit import FILE_HOLDS_KEY, agent, cli, quest_repo

# `reins loop` on a fake backend that answers "good" in 0.05 s, in a process of its own.
FAKE_LOOP = """
import sys
from reins.backends import registry
from reins.cli import main
from reins.testing import FakeBackend
from tests.kit.loopkit import FakeFactory
registry.register("fake", FakeFactory({"w": FakeBackend(lambda c: "good", latency=0.05)}))
sys.argv = ["reins", *sys.argv[1:]]
main()
"""


def on_a_terminal(argv: list[str], cwd: Path) -> tuple[int, str]:
    """Run ``argv`` with its stderr on a pseudo-terminal (stdout discarded); its exit code and
    what the terminal received."""
    leader, follower = pty.openpty()
    env = {**os.environ, "PYTHONPATH": CHILD_PATH, "COLUMNS": "200"}
    child = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=follower)
    os.close(follower)
    seen = b""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.5)
        if not ready:
            if child.poll() is not None:
                break
            continue
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    return child.wait(timeout=30), seen.decode()


def test_a_terminal_shows_a_line_per_turn_above_the_status_line(tmp_path: Path) -> None:
    assert (
        cli("--quest", "tests.kit:TINY", "--ledger", str(tmp_path / "t.db"), "scan").exit_code == 0
    )
    argv = [sys.executable, "-c", FAKE_LOOP, "--quest", "tests.kit:TINY", "--ledger",
            str(tmp_path / "t.db"), "loop", "--model", "fake:w", "--no-export"]  # fmt: skip
    code, terminal = on_a_terminal(argv, tmp_path)
    assert code == 0, terminal
    lines = terminal.replace("\r\x1b[2K", "\n").replace("\r\n", "\n").splitlines()
    for key in "abc":
        assert f"turn 1 · {key} · PASS on answer 1 of 3 → PASS · fake" in lines, terminal
    assert any(line.startswith("0/3 done · 3 left") for line in lines)  # the status line too
    assert "loop done: every item is locked" in terminal


# A coding agent that says it started, then works for longer than the test waits.
WORKS_ON = """
import sys, time
open(sys.argv[1], "w").close()
print("thinking", flush=True)
time.sleep(300)
"""

LOOP = "import sys\nfrom reins.cli import main\nsys.argv = ['reins', *sys.argv[1:]]\nmain()\n"


def test_ctrl_c_on_a_coding_loop_says_what_it_records(tmp_path: Path) -> None:
    quest_repo(tmp_path / "q", ["k"], FILE_HOLDS_KEY)
    started = tmp_path / "started"
    script = agent(tmp_path / "agent.py", WORKS_ON)
    argv = [sys.executable, "-c", LOOP, "-q", "q", "loop", "--model",
            f"cmd:{script} {started}", "--sandbox", "none", "--no-export"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": CHILD_PATH}
    assert subprocess.run([*argv[:5], "scan"], cwd=tmp_path, env=env, check=False).returncode == 0
    child = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)  # fmt: skip
    deadline = time.monotonic() + 60
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started.exists(), child.communicate(timeout=10)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=60)
    assert child.returncode == Exit.SIGINT, err
    with SQLiteStore.open(tmp_path / "q.reins.db") as led:
        item, log = led.snapshot("k")
    assert [a.kind for a in log] == [AttemptKind.GENERATION_ERROR]  # recorded, as said:
    assert (
        "1 turn(s) in flight were cut short, their agents killed, and recorded as generation errors"
        in err
    )
    assert "dropped" not in err
    assert item.state is State.TODO and item.tries == 0
