"""One side of ``bench_judge.py``: judged turns timed with whichever reins is on ``sys.path``.

Run as ``python bench/judge_worker.py KIND FILES TURNS FOLDER`` with ``PYTHONPATH`` naming the
``src`` of the reins to measure (this checkout's, or an older commit's worktree): it makes the
coding pack's project (``KIND`` = ``pack``) with ``FILES`` more small files beside it, records two
changes of an item the way the loop does, then judges them in turn, ``TURNS`` times, with the
pack's two pytest rules (the item's test; every test that passed at the base), and prints each
judged turn's seconds as JSON. A judged turn is what the loop does after an agent's run: build
the judge's tree from the recorded patch, run the rules, let the tree go (its cleaning runs off
the turn's path and is waited for between turns, uncounted). Only APIs both sides have are used.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

PACK = Path(__file__).resolve().parent.parent / "src" / "reins" / "packs" / "coding"
JUDGE = ["tests/**", "conftest.py", "pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini"]
WRONG = "\n\ndef _helper():\n    return 1\n"
RIGHT = (
    "\n\nimport re as _re\n\n\ndef slugify(text: str) -> str:  # noqa: F811\n"
    "    return '-'.join(_re.findall(r'[a-z0-9]+', text.lower()))\n"
)


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def make_project(folder: Path, files: int) -> Path:
    repo = folder / "repo"
    repo.mkdir(parents=True)
    for name in ("textkit", "tests", "pytest.ini"):
        source = PACK / name
        if source.is_dir():
            shutil.copytree(source, repo / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, repo / name)
    for i in range(files):
        target = repo / "data" / f"d{i // 100:03d}" / f"f{i:05d}.txt"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"line {i}\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", "base")
    return repo


def main() -> None:
    kind, files, turns, folder = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])
    assert kind == "pack"
    from reins.checks import BASE, spec_of, validate
    from reins.gate.rule import Context
    from reins.workspace.change import take
    from reins.workspace.judgetree import JudgeTrees
    from reins.workspace.spec import Workspace
    from reins.workspace.workspaces import Workspaces

    repo = make_project(folder, files)
    spaces = Workspaces.open(Workspace(repo=str(repo), judge=tuple(JUDGE)), root=str(folder / "w"))
    patches = []
    for body in (WRONG, RIGHT):
        spaces.prepare("slugify", spaces.base)
        module = Path(spaces.path_of("slugify")) / "textkit" / "__init__.py"
        module.write_text((repo / "textkit" / "__init__.py").read_text() + body)
        patches.append(take(spaces, "slugify", spaces.base, message="turn").patch.decode())
    trees = JudgeTrees(spaces.places, spaces.base, judge=JUDGE, hidden=None)
    spec = spec_of("pytest")
    rules = [
        spec.build(validate(spec, {"tests": ["tests/test_textkit_tasks.py::test_slugify"],
                                   "timeout": 300, BASE: str(folder)})),
        spec.build(validate(spec, {"passing_at_base": True, "timeout": 300, BASE: str(folder)})),
    ]  # fmt: skip
    seconds, first = [], 0.0
    for turn in range(turns + 1):  # the first makes the tree pool and the base's run: apart
        started = time.perf_counter()
        with trees.tree(patches[turn % 2], branch="reins/slugify") as tree:
            context = Context(key="slugify", submission="", workspace=tree)
            verdicts = [rule(context) for rule in rules]
        spent = time.perf_counter() - started
        trees.settle()
        if turn:
            seconds.append(spent)
        else:
            first = spent
        if turn == 1:  # the honest check that both sides judge alike: right PASSes, wrong FAILs
            assert all(v is None for v in verdicts), verdicts
        if turn == 2:
            assert verdicts[0] is not None
    print(json.dumps({"first": first, "turns": seconds}))


if __name__ == "__main__":
    main()
