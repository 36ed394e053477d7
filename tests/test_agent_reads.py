"""Issue 38, its reads: a sandboxed agent reads its workspace and its toolchain, nothing else of
the host (another repository, a file of /etc it does not need, the project folder), unless the
quest names it (``[workspace] read``); ``reins loop`` says what the agents can see."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import reins
from tests.kit.codingkit import FILE_HOLDS_KEY, agent, cli, quest_repo

# Tries each read of TARGETS, says what it saw, and does the item's work.
READS = """
import os
for path in TARGETS:
    try:
        with open(path, "rb") as f:
            f.read(1)
        print(f"read {path}: allowed")
    except OSError as exc:
        print(f"read {path}: denied ({type(exc).__name__})")
key = os.path.basename(os.getcwd())
open(key + ".txt", "w").write(key)
"""


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The test's folder: the autouse ``clean_environment`` made it the working folder, with no
    ``REINS_*`` variable; the user's HOME is ``home`` in it, holding a secret."""
    secret = a_file_in_home(tmp_path)
    secret.parent.mkdir()
    secret.write_text("127.0.0.1:5432:*:ann:hunter2\n")
    monkeypatch.setenv("HOME", str(secret.parent))
    return tmp_path


def another_repository() -> Path:
    """A file outside the private /tmp that is neither toolchain nor workspace: reins' own
    checkout (a git repository of its own, the user's other work as far as an agent knows)."""
    return Path(reins.__file__).resolve().parents[2] / "pyproject.toml"


def a_file_in_home(here: Path) -> Path:
    """A secret in the user's HOME (the test's stand-in for it: ``HOME`` points there)."""
    return here / "home" / ".pgpass"


def said_by(here: Path) -> tuple[str, str]:
    """The loop's notes and the agent's answer for item k."""
    secret = a_file_in_home(here)
    targets = [str(another_repository()), "/etc/shadow", str(here / "q-results.jsonl"),
               str(here / "reins.toml"), str(secret), reins.__file__]  # fmt: skip
    script = agent(here / "reads.py", f"TARGETS = {targets!r}\n" + READS)
    (here / "reins.toml").write_text('[reins]\nquest = "q"\n')
    (here / "q-results.jsonl").write_text('{"key": "an earlier answer"}\n')
    out = cli("-q", "q", "loop", "--model", f"cmd:{script}", "--json")
    assert out.exit_code == 0, out.output
    notes = " ".join(e["message"] for e in map(json.loads, out.stdout.splitlines())
                     if e["event"] == "note")  # fmt: skip
    from reins import SQLiteStore

    with SQLiteStore.open(here / "q.reins.db") as led:
        return notes, led.snapshot("k")[1][-1].submission or ""


def test_a_sandboxed_agent_reads_no_file_outside_its_workspace_and_toolchain(here: Path) -> None:
    assert another_repository().is_file()
    quest_repo(here / "q", ["k"], FILE_HOLDS_KEY)
    assert cli("-q", "q", "scan").exit_code == 0
    notes, said = said_by(here)
    for path in (
        another_repository(),
        "/etc/shadow",
        here / "q-results.jsonl",
        here / "reins.toml",
        a_file_in_home(here),
        reins.__file__,  # reins' own package: an agent cannot open the ledger through it
    ):
        assert f"read {path}: denied (FileNotFoundError)" in said, said
    assert "agents see their workspace, an empty HOME and a private /tmp" in notes


def test_a_path_the_quest_names_in_workspace_read_is_readable(here: Path) -> None:
    extra = f"read = [{json.dumps(str(another_repository()))}]\n"
    quest_repo(here / "q", ["k"], FILE_HOLDS_KEY, extra=extra)
    assert cli("-q", "q", "scan").exit_code == 0
    notes, said = said_by(here)
    assert f"read {another_repository()}: allowed" in said, said
    assert "read {}: denied".format(here / "q-results.jsonl") in said
    assert f"read: {another_repository()}" in notes


def test_a_read_that_is_no_list_of_paths_is_refused_at_its_line(here: Path) -> None:
    quest_repo(here / "q", ["k"], FILE_HOLDS_KEY, extra='read = "/etc"\n')
    out = cli("-q", "q", "scan")
    assert out.exit_code == 2 and "read must be an array" in out.stderr, out.stderr
