"""``--sandbox bwrap``: the agent's writes are confined to its worktree and its HOME; the user's
checkout, other folders and every branch are read-only to it, while git still stages there.

Skipped only when bubblewrap is not installed and ``CI`` is unset: CI installs it (.ci/run).
"""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

import pytest

from reins import SQLiteStore, State
from tests.kit.codingkit import FILE_HOLDS_KEY, agent, checkout_state, cli, git, quest_repo

if shutil.which("bwrap") is None and not os.environ.get("CI"):
    pytest.skip("bubblewrap (bwrap) is not installed", allow_module_level=True)

# Tries to escape in every way it can, reports each attempt in its final message, then does
# the task.
ESCAPES = """
import os, subprocess, sys
outside, checkout, probe = sys.argv[1], sys.argv[2], sys.argv[3]

def attempt(what, action):
    try:
        action()
        print(what + ": allowed")
    except Exception as exc:
        print(what + ": denied (" + type(exc).__name__ + ")")

def run(*argv):
    subprocess.run(argv, check=True, capture_output=True)

attempt("write outside", lambda: open(outside, "w").write("escaped"))
attempt("write in the checkout", lambda: open(os.path.join(checkout, "x.txt"), "w").write("x"))
attempt("move main", lambda: run("git", "update-ref", "refs/heads/main", "HEAD"))
attempt("write home", lambda: open(os.path.expanduser("~/notes"), "w").write("mine"))
attempt("write /tmp", lambda: open(probe, "w").write("mine"))
open("k.txt", "w").write("k")
attempt("git add", lambda: run("git", "add", "k.txt"))
"""


def test_a_sandboxed_agent_writes_only_its_worktree_and_home_and_moves_no_branch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    repo = quest_repo(tmp_path / "q", ["k"], FILE_HOLDS_KEY)
    assert cli("-q", "q", "scan").exit_code == 0
    before = checkout_state(repo)
    outside = tmp_path / "outside.txt"
    probe = Path(f"/tmp/reins-bwrap-probe-{uuid.uuid4().hex}")
    script = agent(tmp_path / "agent.py", ESCAPES)
    model = f"cmd:{script} {outside} {repo} {probe}"
    out = cli("-q", "q", "loop", "--model", model, "--sandbox", "bwrap")
    assert out.exit_code == 0, out.output + out.stderr
    with SQLiteStore.open(tmp_path / "q.reins.db") as led:
        item, log = led.snapshot("k")
    said = log[-1].submission or ""
    assert item.state is State.PASS, said
    for line in (
        "write outside: denied (OSError)",
        "write in the checkout: denied (OSError)",
        "move main: denied (CalledProcessError)",
        "write home: allowed",
        "write /tmp: allowed",
        "git add: allowed",
    ):
        assert line in said, said
    assert not outside.exists() and not probe.exists()  # its /tmp was its own
    assert checkout_state(repo) == before
    assert git(repo, "show", "reins/k:k.txt") == "k"


def test_without_the_sandbox_the_same_agent_escapes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the sandbox is for: a worktree alone confines nothing."""
    monkeypatch.chdir(tmp_path)
    repo = quest_repo(tmp_path / "q", ["k"], FILE_HOLDS_KEY)
    assert cli("-q", "q", "scan").exit_code == 0
    outside = tmp_path / "outside.txt"
    script = agent(tmp_path / "agent.py", ESCAPES)
    probe = tmp_path / "probe"
    out = cli("-q", "q", "loop", "--model", f"cmd:{script} {outside} {repo} {probe}")
    assert out.exit_code == 0, out.output
    assert outside.read_text() == "escaped" and (repo / "x.txt").exists()


def test_a_program_installed_by_npm_in_a_project_under_tmp_runs_inside_the_sandbox(
    tmp_path: Path,
) -> None:
    # A checkout under /tmp (as CI's may be): the private /tmp must not hide the agent's
    # program, reached through node_modules/.bin's link, nor the package files beside it.
    import subprocess

    from reins.coders.sandbox import confine

    assert str(tmp_path).startswith("/tmp/")
    package = tmp_path / "project" / "node_modules" / "tool"
    (package / "bin").mkdir(parents=True)
    (package / "data.txt").write_text("the package's own file\n")
    program = package / "bin" / "tool"
    program.write_text('#!/bin/sh\ncat "$(dirname "$(readlink -f "$0")")/../data.txt"\n')
    program.chmod(0o755)
    link = tmp_path / "project" / "node_modules" / ".bin" / "tool"
    link.parent.mkdir()
    link.symlink_to("../tool/bin/tool")
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    argv = confine([str(link)], cwd=str(work), home=str(home), writable=[], readable=[])
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    assert (done.returncode, done.stdout) == (0, "the package's own file\n"), done.stderr


def test_a_script_whose_interpreter_is_a_virtual_environment_under_tmp_runs_inside_it(
    tmp_path: Path,
) -> None:
    import subprocess
    import sys

    from reins.coders.sandbox import confine

    bin_ = tmp_path / "venv" / "bin"
    bin_.mkdir(parents=True)
    (bin_ / "python").symlink_to(os.path.realpath(sys.executable))
    script = tmp_path / "scripts" / "agent.py"  # beside the environment, not inside it
    script.parent.mkdir()
    script.write_text(f"#!{bin_ / 'python'}\nprint('ran')\n")
    script.chmod(0o755)
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    argv = confine([str(script)], cwd=str(work), home=str(home), writable=[], readable=[])
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    assert (done.returncode, done.stdout) == (0, "ran\n"), done.stderr
