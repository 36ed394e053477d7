"""reins' temporary folders: a run killed during a judgment leaves its folder in ``$TMPDIR``,
and the next run removes it when it starts; a live run's folder, and one made in another pid
namespace, are left alone."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from reins.workspace import processes
from tests.kit.codingkit import agent, cli, quest_repo

ROOT = Path(__file__).resolve().parent.parent
HANGS = (
    '| hangs | FAIL | command | run = ["{python}", "-c", "import time; time.sleep(3141)"], '
    "timeout = 600 | Wait. |"
)
WRITES = 'open("k.txt", "w").write("k")\nprint("done")\n'


def wait_until(condition: object, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "it never happened"
        time.sleep(0.05)


def test_a_run_removes_the_temporary_folders_of_dead_runs_only(tmp_path: Path) -> None:
    from reins.workspace import scratch

    gone = subprocess.Popen(["true"])
    gone.wait()
    ns = processes.pid_namespace()
    dead = tmp_path / f"reins-judged-{ns}.{gone.pid}.1-abc"
    live = tmp_path / f"reins-judged-{scratch.owner()}-abc"
    elsewhere = tmp_path / f"reins-judged-1{ns}.{gone.pid}.1-abc"  # another pid namespace's
    unnamed = tmp_path / "reins-judged-xyz"  # no owner recorded: whose, no one can tell
    for folder in (dead, live, elsewhere, unnamed):
        (folder / "sub").mkdir(parents=True)
    (dead / "sub").chmod(0o000)  # what the judged code may have done to it
    assert scratch.sweep(str(tmp_path)) == [str(dead)]
    assert not dead.exists() and live.exists() and elsewhere.exists() and unnamed.exists()


@pytest.mark.slow
def test_a_loop_killed_during_a_judgment_leaves_a_folder_the_next_run_removes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    quest_repo(tmp_path / "q", ["k"], HANGS)
    assert cli("-q", "q", "scan").exit_code == 0
    model = f"cmd:{agent(tmp_path / 'writes.py', WRITES)}"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "TMPDIR": str(temporary)}
    argv = [sys.executable, "-m", "reins.cli", "-q", "q", "loop", "--model", model,
            "--sandbox", "none"]  # fmt: skip
    loop = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    try:  # the command check judges the submission written to a folder of its own
        wait_until(lambda: list(temporary.glob("reins-command-*/submission.txt")))
        time.sleep(0.5)
    finally:
        loop.send_signal(signal.SIGKILL)
        loop.wait()
    left = list(temporary.iterdir())
    assert left and all(p.name.startswith("reins-") for p in left)

    monkeypatch.setenv("TMPDIR", str(temporary))
    monkeypatch.setattr(tempfile, "tempdir", None)  # read again from TMPDIR
    (tmp_path / "q" / "gate.md").write_text(  # the next run's check ends
        (tmp_path / "q" / "gate.md").read_text().replace("time.sleep(3141)", "pass")
    )
    out = cli("-q", "q", "loop", "--model", model, "--sandbox", "none", "--max-turns", "1")
    assert not [p for p in left if p.exists()], out.output
