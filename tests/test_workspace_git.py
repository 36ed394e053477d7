"""Each thing ``reins.workspace.git`` keeps git from reading, against the program it would run.

An unconfined agent, or whatever started reins, may have written git settings anywhere git would
read them: the environment, the user's global or XDG configuration, reins' own stores, the
workspace's attributes and its ``.git``. Each case below plants one such thing (a filter, a hook,
an fsmonitor, a diff driver, a textconv, an include, a replacement of the base, an ignore or
attributes file) and first shows, with plain git on the same folders (the control), that it
would act: a marker file is written, or what is read changes. Then reins takes the change and
builds the judge's tree, and neither runs it nor is changed by it.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from reins.workspace.change import take
from reins.workspace.judgetree import JudgeTrees
from reins.workspace.spec import Workspace
from reins.workspace.workspaces import Workspaces
from tests.kit.codingkit import make_repo


@dataclass
class Case:
    tmp: Path
    spaces: Workspaces
    mp: pytest.MonkeyPatch

    @property
    def work(self) -> Path:
        return Path(self.spaces.path_of("k"))

    @property
    def store(self) -> Path:
        return Path(self.spaces.places.item_store("k"))

    @property
    def marker(self) -> Path:
        return self.tmp / "ran"

    @property
    def program(self) -> str:
        """A program that says it ran, then passes its input through (a filter's job)."""
        script = self.tmp / "evil.sh"
        if not script.exists():
            script.write_text(f"#!/bin/sh\necho ran >> {self.marker}\nexec cat\n")
            script.chmod(0o755)
        return str(script)

    def plain(self, *args: str) -> str:
        """Plain git on the item's store and workspace, as a careless tool would run it."""
        env = {**os.environ, "GIT_INDEX_FILE": str(self.tmp / "plain-index")}
        for name in ("GIT_DIR", "GIT_WORK_TREE"):
            env.pop(name, None)
        argv = ["git", f"--git-dir={self.store}", f"--work-tree={self.work}", *args]
        done = subprocess.run(argv, cwd=self.work, env=env, capture_output=True, check=False)
        return done.stdout.decode("utf-8", "replace")


Plant = Callable[[Case], None]
Control = Callable[[Case], bool]  # True: plain git was acted on


def ran(case: Case) -> bool:
    return case.marker.exists()


def filter_in(config: Path, case: Case) -> None:
    config.parent.mkdir(parents=True, exist_ok=True)
    with open(config, "a") as f:
        f.write(f'[filter "evil"]\n\tclean = {case.program}\n\trequired = true\n')
    (case.work / ".gitattributes").write_text("*.py filter=evil\n")


def global_filter(case: Case) -> None:
    filter_in(case.tmp / "home" / ".gitconfig", case)
    case.mp.setenv("HOME", str(case.tmp / "home"))


def xdg_filter(case: Case) -> None:
    filter_in(case.tmp / "xdg" / "git" / "config", case)
    case.mp.setenv("XDG_CONFIG_HOME", str(case.tmp / "xdg"))
    case.mp.setenv("HOME", str(case.tmp / "nohome"))


def environment_filter(case: Case) -> None:
    for n, (key, value) in enumerate(
        [("filter.evil.clean", case.program), ("filter.evil.required", "true")]
    ):
        case.mp.setenv(f"GIT_CONFIG_KEY_{n}", key)
        case.mp.setenv(f"GIT_CONFIG_VALUE_{n}", value)
    case.mp.setenv("GIT_CONFIG_COUNT", "2")
    (case.work / ".gitattributes").write_text("*.py filter=evil\n")


def system_filter(case: Case) -> None:
    filter_in(case.tmp / "system", case)
    case.mp.setenv("GIT_CONFIG_SYSTEM", str(case.tmp / "system"))


def store_include(case: Case) -> None:
    filter_in(case.tmp / "evil.config", case)
    with open(case.store / "config", "a") as f:
        f.write(f"[include]\n\tpath = {case.tmp / 'evil.config'}\n")


def store_fsmonitor(case: Case) -> None:
    with open(case.store / "config", "a") as f:
        f.write(f"[core]\n\tfsmonitor = {case.program}\n")


def store_hook(case: Case) -> None:
    hooks = case.store / "hooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "post-index-change").write_text(f"#!/bin/sh\necho ran >> {case.marker}\n")
    (hooks / "post-index-change").chmod(0o755)


def store_textconv(case: Case) -> None:
    with open(case.store / "config", "a") as f:
        f.write(
            f'[diff "evil"]\n\ttextconv = {case.program}\n[diff]\n\texternal = {case.program}\n'
        )
    (case.work / ".gitattributes").write_text("*.py diff=evil\n")


def diff_ran(case: Case) -> bool:
    case.plain("add", "-A")
    tree = case.plain("write-tree").strip()
    case.plain("diff", case.spaces.base, tree)
    return ran(case)


def store_replace(case: Case) -> None:
    empty = case.plain("mktree").strip()
    forged = subprocess.run(
        ["git", f"--git-dir={case.store}", "commit-tree", "-m", "not the base", empty],
        capture_output=True, text=True, check=True, env={**os.environ, "GIT_AUTHOR_NAME": "a",
        "GIT_AUTHOR_EMAIL": "a@a", "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@a"},
    ).stdout.strip()  # fmt: skip
    replace = case.store / "refs" / "replace"
    replace.mkdir(parents=True, exist_ok=True)
    (replace / case.spaces.base).write_text(forged + "\n")


def replaced(case: Case) -> bool:
    case.plain("add", "-A")
    tree = case.plain("write-tree").strip()
    return "-X = 1" not in case.plain("diff", case.spaces.base, tree)  # diffed from nothing


def xdg_ignore_and_attributes(case: Case) -> None:
    folder = case.tmp / "xdg" / "git"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ignore").write_text("new.py\n")  # read with no configuration at all
    (folder / "attributes").write_text("*.py -diff\n")
    case.mp.setenv("XDG_CONFIG_HOME", str(case.tmp / "xdg"))


def hidden_or_binary(case: Case) -> bool:
    untracked = case.plain("ls-files", "--others", "--exclude-standard")
    case.plain("add", "-A")
    tree = case.plain("write-tree").strip()
    return "new.py" not in untracked or "Binary files" in case.plain("diff", case.spaces.base, tree)


def agent_git_config(case: Case) -> None:
    filter_in(case.work / ".git" / "config", case)


def agent_git_link(case: Case) -> None:
    """The workspace's .git a link to a repository of the agent's, whose config has a filter."""
    mine = case.tmp / "mine.git"
    subprocess.run(["git", "init", "--quiet", "--bare", str(mine)], check=True)
    subprocess.run(["git", "--git-dir", str(mine), "config", "core.bare", "false"], check=True)
    filter_in(mine / "config", case)
    subprocess.run(["rm", "-rf", str(case.work / ".git")], check=True)
    (case.work / ".git").write_text(f"gitdir: {mine}\n")


def agent_git_ran(case: Case) -> bool:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    subprocess.run(["git", "add", "-A"], cwd=case.work, env=env, capture_output=True, check=False)
    return ran(case)


def adds_and_runs(case: Case) -> bool:
    case.plain("add", "-A")
    case.plain("status")
    return ran(case)


CASES: dict[str, tuple[Plant, Control]] = {
    "a filter in the user's global configuration": (global_filter, adds_and_runs),
    "a filter in the XDG configuration": (xdg_filter, adds_and_runs),
    "a filter in GIT_CONFIG_COUNT variables": (environment_filter, adds_and_runs),
    "a filter in a GIT_CONFIG_SYSTEM file": (system_filter, adds_and_runs),
    "an include of a filter in reins' store": (store_include, adds_and_runs),
    "an fsmonitor in reins' store": (store_fsmonitor, adds_and_runs),
    "a hook in reins' store": (store_hook, adds_and_runs),
    "a textconv and an external diff in reins' store": (store_textconv, diff_ran),
    "a replacement of the base in reins' store": (store_replace, replaced),
    "an XDG ignore and attributes file": (xdg_ignore_and_attributes, hidden_or_binary),
    "a filter in the workspace's own .git/config": (agent_git_config, agent_git_ran),
    "a .git that links to a repository of the agent's": (agent_git_link, agent_git_ran),
}


@pytest.fixture
def case(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Case]:
    repo = make_repo(tmp_path / "project", {"app.py": "X = 1\n"})
    spaces = Workspaces.open(Workspace(repo=str(repo)), root=str(tmp_path / "root"))
    spaces.prepare("k", spaces.base)
    yield Case(tmp_path, spaces, monkeypatch)


@pytest.mark.parametrize("name", list(CASES))
def test_a_planted_git_setting_acts_on_plain_git_and_not_on_reins(case: Case, name: str) -> None:
    plant, control = CASES[name]
    (case.work / "app.py").write_text("X = 2\n")
    (case.work / "new.py").write_text("Y = 1\n")
    plant(case)
    assert control(case), "the plant is not live: plain git was not acted on"
    case.marker.unlink(missing_ok=True)
    change = take(case.spaces, "k", case.spaces.base, message="t")
    assert change.commit is not None
    # Read as the files are, from the real base, every file there.
    assert b"-X = 1\n+X = 2\n" in change.patch and b"+Y = 1\n" in change.patch
    judges = JudgeTrees(case.spaces.places, case.spaces.base, judge=())
    with judges.tree(change.patch.decode(), branch="reins/k") as tree:
        assert (Path(tree.path) / "app.py").read_text() == "X = 2\n"
    case.spaces.prepare("k", change.commit)  # the next turn's reset
    assert not ran(case), "a planted program ran in reins' git"
