"""``--sandbox bwrap``, the default: the agent's writes are confined to its workspace and its
HOME; the user's checkout is read-only to it, and the user's git folder, the ledger and the
other items' workspaces are out of its sight, while git works in its own repository.

Skipped only when bubblewrap is not installed and ``CI`` is unset: CI installs it (.ci/run).
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path

import pytest

from reins import SQLiteStore, State
from tests.kit.codingkit import (
    FILE_HOLDS_KEY,
    agent,
    checkout_state,
    cli,
    git,
    object_files,
    passes_reproduce,
    quest_repo,
)

if shutil.which("bwrap") is None and not os.environ.get("CI"):
    pytest.skip("bubblewrap (bwrap) is not installed", allow_module_level=True)

# Tries to escape in every way it can, reports each attempt in its final message, then does
# the task.
ESCAPES = """
import glob, os, sqlite3, subprocess, sys
outside, checkout, probe, ledger, root, real_home = sys.argv[1:7]

def attempt(what, action):
    try:
        action()
        print(what + ": allowed")
    except Exception as exc:
        print(what + ": denied (" + type(exc).__name__ + ")")

def run(*argv):
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout

def read_ledger():
    with sqlite3.connect(ledger) as db:
        db.execute("SELECT count(*) FROM items").fetchone()

def delete_objects():
    found = glob.glob(os.path.join(checkout, ".git", "objects", "*"))
    if not found:
        raise FileNotFoundError("no objects to be seen")
    for path in found:
        subprocess.run(["rm", "-rf", path], check=True)

def others():
    seen = sorted(os.listdir(root))
    if seen != [".reins", os.path.basename(os.getcwd())]:
        return
    raise PermissionError(f"only {seen}")

attempt("write outside", lambda: open(outside, "w").write("escaped"))
attempt("write in the checkout", lambda: open(os.path.join(checkout, "x.txt"), "w").write("x"))
attempt("move the user's main", lambda: run("git", "-C", checkout, "update-ref",
                                            "refs/heads/main", "HEAD"))
attempt("delete the user's objects", delete_objects)
attempt("read the ledger", read_ledger)
attempt("see other workspaces", others)
attempt("write home", lambda: open(os.path.expanduser("~/notes"), "w").write("mine"))
attempt("write the real home", lambda: open(os.path.join(real_home, "reins-probe"), "w").write("x"))
attempt("write reins.toml", lambda: open(os.path.join(os.path.dirname(ledger), "reins.toml"),
                                         "a").write("[reins]"))
attempt("write /tmp", lambda: open(probe, "w").write("mine"))
key = os.path.basename(os.getcwd())
open(key + ".txt", "w").write(key)
attempt("git commit in its own repository", lambda: run("git", "add", "-A") + run(
    "git", "commit", "-qm", "mine"))
print("history:", run("git", "log", "--all", "--format=%s").split())
"""


def test_a_sandboxed_agent_writes_only_its_workspace_and_home_and_reads_no_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    repo = quest_repo(tmp_path / "q", ["a", "b"], FILE_HOLDS_KEY, extra='keep = "all"\n')
    assert cli("-q", "q", "scan").exit_code == 0
    before = checkout_state(repo)
    objects = object_files(repo)
    outside = tmp_path / "outside.txt"
    probe = Path(f"/tmp/reins-bwrap-probe-{uuid.uuid4().hex}")
    script = agent(tmp_path / "agent.py", ESCAPES)
    root = tmp_path / ".reins-worktrees" / "q"
    ledger = tmp_path / "q.reins.db"
    (tmp_path / "reins.toml").write_text('[reins]\nquest = "q"\n')
    toml = (tmp_path / "reins.toml").read_bytes()
    home = Path.home()
    model = f"cmd:{script} {outside} {repo} {probe} {ledger} {root} {home}"
    out = cli("-q", "q", "loop", "--model", model)  # the default: --sandbox bwrap
    assert out.exit_code == 0, out.output + out.stderr
    with SQLiteStore.open(ledger) as led:
        item, log = led.snapshot("b")  # the second: item a's workspace was there, kept
    said = log[-1].submission or ""
    assert item.state is State.PASS, said
    assert log[-1].notes.sandbox == "bwrap"
    # Writes outside, in the checkout and to reins.toml land, if anywhere, in the agent's
    # private /tmp (this test's folders are under /tmp, made there empty as the folders of its
    # mounts): the host's files are checked below.
    for line in (
        "move the user's main: denied (CalledProcessError)",
        "delete the user's objects: denied (FileNotFoundError)",
        "read the ledger: denied (OperationalError)",
        "see other workspaces: denied (PermissionError)",
        "write home: allowed",
        "write the real home: denied (OSError)",
        "write /tmp: allowed",
        "git commit in its own repository: allowed",
        "history: ['mine', 'first']",  # its own commit and the base: no other branch
    ):
        assert line in said, said
    assert not outside.exists() and not probe.exists()  # its /tmp was its own
    assert not (home / "reins-probe").exists() and (tmp_path / "reins.toml").read_bytes() == toml
    assert checkout_state(repo) == before
    assert objects.items() <= object_files(repo).items()  # nothing of the user's changed
    assert git(repo, "fsck", "--full", "--strict") == ""
    assert git(repo, "show", "reins/q/b:b.txt") == "b"
    assert "sandboxed (bwrap)" in cli("-q", "q", "status").stdout
    assert passes_reproduce(repo, ledger, repo, tmp_path / "replay") == 2


def test_without_the_sandbox_the_same_agent_escapes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the sandbox is for: a workspace alone confines nothing."""
    monkeypatch.chdir(tmp_path)
    repo = quest_repo(tmp_path / "q", ["k"], FILE_HOLDS_KEY)
    assert cli("-q", "q", "scan").exit_code == 0
    outside = tmp_path / "outside.txt"
    script = agent(tmp_path / "agent.py", ESCAPES)
    probe = tmp_path / "probe"
    root = tmp_path / ".reins-worktrees" / "q"
    model = f"cmd:{script} {outside} {repo} {probe} {tmp_path / 'q.reins.db'} {root} {tmp_path}"
    out = cli("-q", "q", "loop", "--model", model, "--sandbox", "none")
    assert out.exit_code == 0, out.output
    assert outside.read_text() == "escaped" and (repo / "x.txt").exists()
    # Unconfined is said where a person looks: the run's start and summary, status, the log,
    # the record and the export.
    assert "agents run UNCONFINED" in out.stderr
    assert "coding agents ran UNCONFINED (--sandbox none)" in out.stderr
    assert "agents       ran UNCONFINED in the last loop" in cli("-q", "q", "status").stdout
    assert json.loads(cli("-q", "q", "status", "--json").stdout)["sandbox"] == "none"
    assert "UNCONFINED (--sandbox none)" in cli("-q", "q", "log", "k").stdout
    record = json.loads((tmp_path / "q-results.jsonl").read_text().splitlines()[-1])
    assert record["workspace"]["sandbox"] == "none"


def test_a_program_installed_by_npm_in_a_project_under_tmp_runs_inside_the_sandbox(
    tmp_path: Path,
) -> None:
    # A checkout under /tmp (as CI's may be): the private /tmp must not hide the agent's
    # program, reached through node_modules/.bin's link, nor the package files beside it.
    import subprocess

    from reins.sandbox import Policy, confine, launched

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
    launch = [str(link)]
    policy = Policy(view="host", network=True, writable=(str(work), str(home)), cwd=str(work))
    argv = confine(launch, launched(launch, policy))
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    assert (done.returncode, done.stdout) == (0, "the package's own file\n"), done.stderr


def test_a_script_whose_interpreter_is_a_virtual_environment_under_tmp_runs_inside_it(
    tmp_path: Path,
) -> None:
    import subprocess
    import sys

    from reins.sandbox import Policy, confine, launched

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
    launch = [str(script)]
    policy = Policy(view="host", network=True, writable=(str(work), str(home)), cwd=str(work))
    argv = confine(launch, launched(launch, policy))
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    assert (done.returncode, done.stdout) == (0, "ran\n"), done.stderr


@pytest.mark.parametrize("program", ["/bin/sh", "/usr/bin/env", "/bin/true"])
def test_a_program_of_a_system_folder_shows_no_more_than_the_toolchain(program: str) -> None:
    """A program in ``/bin`` (a link to ``usr/bin`` on most systems) is the toolchain's: its
    launch adds nothing, least of all the folder above ``bin`` (``/``: everything)."""
    from reins.sandbox import Policy, launched

    if not os.path.exists(program):
        pytest.skip(f"{program} is not on this system")
    seen = launched([program, "-c", "true"], Policy(view="toolchain"))
    assert "/" not in seen.readable, seen.readable
    for secret in ("/etc/shadow", "/root/.bash_history", "/home/ann/.ssh/id_ed25519"):
        assert not seen.sees(secret), secret
