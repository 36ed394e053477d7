"""Helpers for the ``reins land`` tests: a small coding quest with land rules, and a ``cmd:``
stand-in that does an item's work and lands a land item's change (with ``git merge`` in its own
repository, conflicts resolved), no model.

The quest's repository (the quest folder itself, as the coding pack's) holds ``shared.txt``
(``top``, ``slot``, ``bottom``), ``limit.txt`` and a test of the judge's: the items' files
(``<key>.txt``) may be at most as many as ``limit.txt`` says. Each item writes ``<key>.txt``;
an item whose payload says ``shared`` also puts its key in place of ``slot``, so two of those
conflict when merged. The gate passes an item whose ``<key>.txt`` holds its key; the land rule
``budget`` runs the judge's test in the merged tree.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.kit.codingkit import FILE_HOLDS_KEY, agent, cli, git, make_repo

ROOT = Path(__file__).resolve().parent.parent.parent
TEMPLATE = (
    "Make the file {{ key }}.txt hold the word {{ key }}."
    '{% if item.shared %} Also write {{ key }} in place of "slot" in shared.txt.{% endif %}'
    "{% if item.pad %} Also write {{ item.pad }} bytes to {{ key }}.dat.{% endif %}"
)
LAND_RULES = """# The land rules

Judged in the merged tree after each merge of `reins land`.

## Rules

| id | level | check | parameters | coaching |
|----|-------|-------|------------|----------|
| budget | FAIL | pytest | timeout = 120 | Stay within the budget limit.txt sets. |
"""
BUDGET_TEST = """from pathlib import Path


def test_the_items_fit_the_budget():
    made = [p for p in Path(".").glob("*.txt") if p.name not in ("shared.txt", "limit.txt")]
    assert len(made) <= int(Path("limit.txt").read_text())
"""
STAND_IN = r"""
import re, subprocess, sys
from pathlib import Path
prompt = sys.stdin.read()
land = re.search(r"Land the change of item (\S+) onto .*?The change to land is commit ([0-9a-f]+),",
                 prompt, re.S)
if land is None:
    key = re.search(r"Make the file (\S+)\.txt", prompt).group(1)
    Path(f"{key}.txt").write_text(key + "\n")
    if "shared.txt" in prompt:
        shared = Path("shared.txt").read_text().replace("slot", key)
        Path("shared.txt").write_text(shared)
    pad = re.search(r"Also write (\d+) bytes to (\S+)\.dat", prompt)
    if pad is not None:
        Path(f"{pad.group(2)}.dat").write_text("x" * (int(pad.group(1)) - 1) + "\n")
    print(f"wrote {key}")
    sys.exit(0)
key, commit = land.groups()
merged = subprocess.run(["git", "merge", "--no-edit", "--quiet", commit], capture_output=True,
                        text=True)
said = [f"git merge: exit {merged.returncode}"]
shared = Path("shared.txt")
if "<<<<<<<" in shared.read_text():
    kept = [ln for ln in shared.read_text().splitlines()
            if not ln.startswith(("<<<<<<<", "=======", ">>>>>>>"))]
    shared.write_text("\n".join(kept) + "\n")
    said.append("resolved shared.txt")
if "test_the_items_fit_the_budget" in prompt:
    made = [p for p in Path(".").glob("*.txt") if p.name not in ("shared.txt", "limit.txt")]
    Path("limit.txt").write_text(f"{len(made)}\n")
    said.append(f"raised the limit to {len(made)}")
print(f"landed {key}: " + ", ".join(said))
"""


def land_quest(
    path: Path, items: list[dict[str, Any]], *, limit: int = 10, max_bytes: int | None = None
) -> Path:
    """The quest folder (and repository) at ``path`` with ``items`` (each ``{"id": …}``,
    ``"shared": true`` for one that edits shared.txt, ``"pad": N`` for one that also writes N
    bytes to ``<key>.dat``), and ``[workspace] max_bytes`` when given."""
    cap = "" if max_bytes is None else f"max_bytes = {max_bytes}\n"
    toml = (
        f'name = "{path.name}"\n\n[items]\nsource = "items.jsonl"\n\n[prompt]\noutput = "text"\n'
        f"template = '''{TEMPLATE}'''\n\n[judge]\nmax_tries = 3\n\n"
        f'[workspace]\njudge = ["tests/**"]\n{cap}\n[land]\nrules_file = "land.md"\n'
    )
    gate = (
        "# gate\n\n## Rules\n\n| id | level | check | parameters | coaching |\n"
        "|----|-------|-------|------------|----------|\n" + FILE_HOLDS_KEY + "\n"
    )
    files: dict[str, str | bytes] = {
        "quest.toml": toml,
        "gate.md": gate,
        "land.md": LAND_RULES,
        "items.jsonl": "".join(json.dumps({"shared": False, "pad": 0, **i}) + "\n" for i in items),
        ".gitignore": "__pycache__/\n",
        "shared.txt": "top\nslot\nbottom\n",
        "limit.txt": f"{limit}\n",
        "tests/test_budget.py": BUDGET_TEST,
    }
    return make_repo(path, files)


def stand_in(folder: Path) -> str:
    """The ``--model`` of the stand-in agent."""
    return f"cmd:{agent(folder / 'stand_in.py', STAND_IN)}"


def worked(quest: str, model: str, *more: str) -> None:
    """``reins loop`` on ``quest`` until every item is locked."""
    out = cli("-q", quest, "loop", "--model", model, *more)
    assert out.exit_code == 0, out.output


def landings(repo: Path, branch: str) -> list[str]:
    """The ``Reins-Landed`` key of each merge on ``branch``'s first-parent line, oldest first."""
    log = git(repo, "log", "--first-parent", "--reverse", "--format=%(trailers:key=Reins-Landed,"
              "valueonly)", branch)  # fmt: skip
    return [line for line in log.splitlines() if line]


def refs_and_status(repo: Path, *, but: str) -> tuple[list[str], str, bytes]:
    """Every ref of ``repo`` but ``but`` and the ``reins/`` item branches, ``git status``, and
    the index: what ``reins land`` must leave as it found it."""
    refs = [
        line
        for line in git(repo, "for-each-ref", "--format=%(refname) %(objectname)").splitlines()
        if not line.startswith(("refs/heads/reins/", f"refs/heads/{but} "))
    ]
    status = git(repo, "status", "--porcelain", "--untracked-files=all")
    return refs, status, (repo / ".git" / "index").read_bytes()


def land_process(
    folder: Path, quest: str, branch: str, *, crash_at: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``reins land`` in a process of its own (killed by itself at ``crash_at``)."""
    env = {k: v for k, v in os.environ.items() if k != "REINS_CRASH_AT"}
    env["PYTHONPATH"] = str(ROOT / "src")
    if crash_at is not None:
        env["REINS_CRASH_AT"] = crash_at
    argv = [sys.executable, "-m", "reins.cli", "-q", quest, "land", branch, "--order", "key"]
    return subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True, timeout=600)
