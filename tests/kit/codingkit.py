"""Helpers for the coding-agent tests: real git repositories, scripted agents, the user's checkout.

Every agent here is an ordinary script (``cmd:``), no model: it reads the prompt on stdin and
edits files in its working folder, the item's worktree.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from click.testing import Result

from reins.values import JudgeTree
from tests.kit.cli import reins

PYTHON = sys.executable
ROOT = Path(__file__).resolve().parent.parent.parent
IDENTITY = {
    "GIT_AUTHOR_NAME": "you",
    "GIT_AUTHOR_EMAIL": "you@example.org",
    "GIT_COMMITTER_NAME": "you",
    "GIT_COMMITTER_EMAIL": "you@example.org",
}


def git(repo: Path | str, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | IDENTITY
    done = subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def make_repo(path: Path, files: Mapping[str, str | bytes]) -> Path:
    """A git repository at ``path`` whose one commit (on ``main``) holds ``files``."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "--quiet", "--initial-branch=main")
    for name, content in files.items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
    git(path, "add", "--all")
    git(path, "commit", "--quiet", "-m", "first")
    return path


def checkout_state(repo: Path) -> dict[str, Any]:
    """Everything of the user's that reins must not touch: HEAD, the index, the working files
    and every ref but the ``reins/`` branches reins makes."""
    dot_git = repo / ".git"
    files = {}
    for path in sorted(repo.rglob("*")):
        if dot_git in path.parents or path == dot_git or not path.is_file():
            continue
        files[str(path.relative_to(repo))] = hashlib.sha256(path.read_bytes()).hexdigest()
    refs = [
        line
        for line in git(repo, "for-each-ref", "--format=%(refname) %(objectname)").splitlines()
        if not line.startswith("refs/heads/reins/")
    ]
    return {
        "HEAD": (dot_git / "HEAD").read_bytes(),
        "head commit": git(repo, "rev-parse", "HEAD"),
        "index": (dot_git / "index").read_bytes(),
        "files": files,
        "refs": refs,
        "status": git(repo, "status", "--porcelain", "--untracked-files=all"),
    }


def object_files(repo: Path) -> dict[str, str]:
    """Every file of the repository's git folder but its ``reins/`` refs and their logs, by
    its digest: what no agent, and nothing of reins but a landing, may change. A landing only
    adds (objects, the ``reins/`` branches), so a run leaves this a superset of before."""
    dot_git = repo / ".git"
    found = {}
    for path in sorted(dot_git.rglob("*")):
        name = str(path.relative_to(dot_git))
        if not path.is_file() or "refs/heads/reins" in name or name.endswith(".lock"):
            continue
        found[name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def agent(path: Path, body: str) -> Path:
    """An executable Python script at ``path``: a scripted stand-in for a coding agent."""
    path.write_text(f"#!{PYTHON}\n{body}", encoding="utf-8")
    path.chmod(0o755)
    return path


def cli(*args: str) -> Result:
    """``reins ARGS`` in this process, stdout and stderr apart."""
    return reins(*args)


def events(out: Result) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


def quest_repo(path: Path, keys: list[str], gate_rule: str, *, extra: str = "") -> Path:
    """A quest folder that is also the git repository its items change (like the coding pack).

    ``gate_rule`` is one row of the Rules table; ``extra`` more quest.toml (``[workspace]``
    keys, say, written under the table).
    """
    items = "".join(json.dumps({"id": k}) + "\n" for k in keys)
    toml = (
        'name = "{name}"\n\n[items]\nsource = "items.jsonl"\n\n[prompt]\noutput = "text"\n'
        'template = "Make the file {{{{ key }}}}.txt hold the word {{{{ key }}}}."\n\n'
        "[judge]\nmax_tries = 3\n\n[workspace]\n" + extra
    ).format(name=path.name)
    gate = (
        "# gate\n\n## Rules\n\n| id | level | check | parameters | coaching |\n"
        "|----|-------|-------|------------|----------|\n" + gate_rule + "\n"
    )
    files: dict[str, str | bytes] = {
        "quest.toml": toml,
        "gate.md": gate,
        "items.jsonl": items,
        ".gitignore": "__pycache__/\n",
        "README.md": "a project\n",
    }
    return make_repo(path, files)


FILE_HOLDS_KEY = (
    '| holds-key | FAIL | command | run = ["{python}", "-c", '
    '"import sys; sys.exit(open(sys.argv[1]).read().strip() != sys.argv[2])", '
    '"{key}.txt", "{key}"], workspace = true | Write the word. |'
)
"""A rule that passes when the worktree's ``<key>.txt`` holds the item's key."""


class Judging:
    """Judge's trees of a repository made as the loop makes them: an item's workspace, the
    files an agent would write there (None deletes one), the change taken, a tree built from
    its patch. Each tree is held until :meth:`close` (a test's teardown)."""

    def __init__(self, repo: Path, root: Path, **workspace: Any) -> None:
        from reins.workspace.judgetree import JudgeTrees
        from reins.workspace.spec import Workspace
        from reins.workspace.workspaces import Workspaces

        self.spaces = Workspaces.open(Workspace(repo=str(repo), **workspace), root=str(root))
        spec = self.spaces.workspace
        self.judges = JudgeTrees(
            self.spaces.places, self.spaces.base, judge=spec.judge_globs, hidden=spec.hidden
        )
        self._held: list[Any] = []

    def tree(self, key: str, files: Mapping[str, str | bytes | None]) -> JudgeTree:
        from reins.workspace.change import take

        self.spaces.prepare(key, self.spaces.base)
        work = Path(self.spaces.path_of(key))
        for name, content in files.items():
            target = work / name
            if content is None:
                target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content, encoding="utf-8")
        change = take(self.spaces, key, self.spaces.base, message="turn")
        held = self.judges.tree(change.patch.decode() or None, branch=f"reins/{key}")
        self._held.append(held)
        return held.__enter__()

    def close(self) -> None:
        while self._held:
            self._held.pop().__exit__(None, None, None)


def passes_reproduce(quest_folder: Path, ledger: Path, repo: Path, scratch: Path) -> int:
    """Replay every PASS of ``ledger`` from its recorded patch on a fresh clone of the base:
    the patch applies with plain git and gives the very tree of the commit that landed on its
    branch, and the quest's gate, judging in a tree built from that clone alone, passes it
    again (invariant 17). Returns how many PASSes were replayed.
    """
    from reins import SQLiteStore, State
    from reins.declare.questdoc import load_folder
    from reins.store.walk import iter_items
    from reins.turn.judge import judge
    from reins.workspace.basestore import base_store
    from reins.workspace.judgetree import JudgeTrees
    from reins.workspace.places import Places
    from reins.workspace.repository import Repository
    from reins.workspace.submission import patch_at

    quest = load_folder(quest_folder)
    assert quest.workspace is not None
    replayed = 0
    scratch.mkdir(parents=True, exist_ok=True)
    with SQLiteStore.open(ledger) as led:
        passed = [led.snapshot(i.key) for i in iter_items(led) if i.state is State.PASS]
    for n, (item, log) in enumerate(passed):
        attempt = log[-1]
        base, submission = attempt.notes.base, attempt.submission or ""
        assert base is not None and attempt.notes.branch is not None
        patch = patch_at(submission, attempt.notes.patch_start, attempt.notes.patch_end)
        clone = scratch / f"clone-{n}"
        git(scratch, "clone", "--quiet", "--no-local", "--no-checkout", str(repo), str(clone))
        git(clone, "checkout", "--quiet", "--detach", base)
        if patch:
            subprocess.run(["git", "apply", "--binary", "-"], cwd=clone, input=patch.encode(),
                           check=True)  # fmt: skip
        git(clone, "add", "--all")
        landed = git(repo, "rev-parse", f"refs/heads/{attempt.notes.branch}^{{tree}}")
        assert git(clone, "write-tree") == landed, f"{item.key}: the patch is not the branch"
        fresh = Places(str(scratch / f"reins-{n}"))
        Path(fresh.own).mkdir(parents=True)
        base_store(Repository.find(str(clone)), fresh, base)
        spec = quest.workspace
        judges = JudgeTrees(fresh, base, judge=spec.judge_globs, hidden=spec.hidden)
        with judges.tree(patch, branch=attempt.notes.branch) as tree:
            verdict, _ = judge(quest, item, submission, workspace=tree, limit=1 << 24)
        assert getattr(verdict, "outcome", None) == "PASS", f"{item.key}: {verdict}"
        replayed += 1
    return replayed
