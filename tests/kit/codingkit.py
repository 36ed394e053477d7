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

from click.testing import CliRunner, Result

from reins.cli import make_group

PYTHON = sys.executable
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


def agent(path: Path, body: str) -> Path:
    """An executable Python script at ``path``: a scripted stand-in for a coding agent."""
    path.write_text(f"#!{PYTHON}\n{body}", encoding="utf-8")
    path.chmod(0o755)
    return path


def cli(*args: str) -> Result:
    """``reins ARGS`` in this process, stdout and stderr apart."""
    return CliRunner().invoke(make_group(), list(args), catch_exceptions=False)


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
