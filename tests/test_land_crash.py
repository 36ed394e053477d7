"""``reins land`` SIGKILLed at each of its steps, then run again: nothing is lost, nothing lands
twice, no land item is added twice, and the user's branch ends where the integration is.

The process kills itself at a named step (``REINS_CRASH_AT``, reins.loop.crashpoint): after a
merge commit is made and before the integration's ref moves (``land-merged``), after the ref
moved and before the user's branch did (``land-ref``), after both (``land-branch``), and right
after a conflict was added as a land item (``land-item``). The quest (tests/kit/landkit.py) has
a, b and c, whose a and b conflict, landed by key: a lands, b becomes ``land/b``, c lands.
"""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest

from reins import SQLiteStore
from reins.errors import Exit
from reins.store.walk import iter_items
from reins.workspace.landtask import LandTask
from tests.kit.codingkit import cli, git
from tests.kit.landkit import land_process, land_quest, landings, stand_in, worked

pytestmark = pytest.mark.slow

STEPS = ["land-merged", "land-ref", "land-branch", "land-item", "land-merged:2", "land-ref:2"]


def land_items(folder: Path) -> list[tuple[str, str]]:
    """Each land item of the ledger: its key and the integration commit it starts from."""
    with SQLiteStore.open(folder / "q.reins.db") as led:
        found = [(i.key, LandTask.of(i.payload)) for i in iter_items(led)]
    return [(key, task.onto) for key, task in found if task is not None]


def integration_ref(folder: Path) -> str:
    base = git(folder / "q", "rev-parse", "main").strip()
    store = folder / ".reins-worktrees" / "q" / ".reins" / f"land-{base}.git"
    return git(store, "rev-parse", "refs/heads/integration").strip()


@pytest.mark.parametrize("step", STEPS)
def test_a_land_killed_at_each_step_is_carried_on_by_a_rerun(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("REINS_CRASH_AT", raising=False)
    repo = land_quest(tmp_path / "q", [{"id": "a", "shared": True}, {"id": "b", "shared": True},
                                       {"id": "c"}])  # fmt: skip
    assert cli("-q", "q", "scan").exit_code == 0
    worked("q", stand_in(tmp_path))

    killed = land_process(tmp_path, "q", "integration", crash_at=step)
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    again = land_process(tmp_path, "q", "integration")
    assert again.returncode == Exit.NOT_LANDED, again.stdout + again.stderr
    assert landings(repo, "integration") == ["a", "c"]  # each once
    assert git(repo, "rev-parse", "integration").strip() == integration_ref(tmp_path)
    [(key, onto)] = land_items(tmp_path)  # added once, on the integration that held a
    assert key == "land/b" and onto == git(repo, "rev-parse", "integration~1").strip()

    # Carried on to the end: the land item passes, the next land merges it in b's place.
    worked("q", stand_in(tmp_path))
    final = land_process(tmp_path, "q", "integration")
    assert final.returncode == 0, final.stdout + final.stderr
    assert landings(repo, "integration") == ["a", "c", "b"]
    assert git(repo, "show", "integration:shared.txt") == "top\na\nb\nbottom\n"
    assert len(land_items(tmp_path)) == 1
    with SQLiteStore.open(tmp_path / "q.reins.db") as led:
        assert led.check() == []
    fsck = subprocess.run(["git", "fsck", "--full", "--no-dangling"], cwd=repo,
                          capture_output=True, text=True)  # fmt: skip
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr
