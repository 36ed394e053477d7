"""A reins killed between the fork of a child and the arming of its parent-death signal leaves
nothing running: the child finds it has been adopted and exits before it runs its program."""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reins.workspace import processes

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
# A reins stand-in whose child is slow to arm its signal (the window widened to a second), so
# that the parent can be killed inside it; then the child would run `sleep` for ten minutes.
PARENT = """
import os, subprocess, sys, time
from reins.workspace import processes

def slow_to_arm():
    time.sleep(1.5)
    processes.die_with_parent()

print("forking", flush=True)
subprocess.Popen(["sleep", "600"], env={**os.environ, processes.MARKER: sys.argv[1]},
                 preexec_fn=slow_to_arm)
time.sleep(600)
"""


def test_a_child_whose_parent_died_before_its_signal_was_armed_does_not_run(
    tmp_path: Path,
) -> None:
    tag = f"{tmp_path}#parent-death-{secrets.token_hex(4)}"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    parent = subprocess.Popen([sys.executable, "-c", PARENT, tag], env=env,
                              stdout=subprocess.PIPE)  # fmt: skip
    assert parent.stdout is not None
    assert parent.stdout.readline() == b"forking\n"
    time.sleep(0.5)  # the child is forked and not yet armed
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    parent.stdout.close()
    deadline = time.monotonic() + 4.0  # the child arms its signal 1.5 s after the fork
    survivors: set[int] = set()
    while time.monotonic() < deadline:
        survivors = processes.marked(tag)
        if survivors:
            break
        time.sleep(0.05)
    for pid in survivors:
        os.kill(pid, signal.SIGKILL)
    assert not survivors, "the child ran on after its parent died"
