"""The parts of ``bench_coding.py`` that run a real loop: a repository of N files, git's own
floor beside it, and reins' time beyond the agent in each turn of a loop run.

**The git floor**, measured in the same run as what it is compared with: a bare ``git worktree
add --detach`` + ``git worktree remove`` of the base (what a tool that makes a checkout per item
pays at least), and a ``git checkout`` of a one-line change and back in place (what any tool
pays at least to move a checkout from one commit to another).

**reins' time beyond the agent**, per turn of a loop run (the library's ``run``, one process,
the default sandbox, concurrency 1, 5 items, 2 turns each: an agent that changes one line, a gate
of one ``regex`` rule that fails the first answer and passes the second, so no test run is
counted): the time from the turn's start to its record, less the agent's own run
(``usage.latency``), plus the time from a record to the next turn's start (the landing, the
lease, compose). The first item of a run is cold (no free folder, no judge's tree yet); the
others take the folder the one before gave back.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

IDENTITY = {
    "GIT_AUTHOR_NAME": "b",
    "GIT_AUTHOR_EMAIL": "b@b",
    "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@b",
}
ITEMS = 5
CHANGED = "pkg0000/mod000000.py"  # the file the agent and the in-place checkout change
QUEST = """name = "bench"

[items]
source = "items.jsonl"

[prompt]
output = "text"
template = "change one line"

[workspace]
repo = "{repo}"
"""
GATE = """# gate

## Rules

| id | level | check | parameters | coaching |
|----|-------|-------|------------|----------|
| said | FAIL | regex | pattern = 'fixed' | Say fixed. |
"""
# Changes one line; says "fixed" once the prompt carries the gate's FAIL (the second turn).
AGENT = """#!/bin/sh
prompt=$(cat)
echo x >> pkg0000/mod000000.py
case "$prompt" in *"failed the gate"*) echo fixed ;; *) echo first try ;; esac
"""


def make_repo(path: Path, files: int) -> Path:
    """A repository of ``files`` small Python files in folders of 100, one commit on main."""
    path.mkdir(parents=True)
    for i in range(files):
        folder = path / f"pkg{i // 100:04d}"
        folder.mkdir(exist_ok=True)
        (folder / f"mod{i:06d}.py").write_text(f"VALUE = {i}\n\n\ndef f():\n    return VALUE\n")
    (path / CHANGED).write_text("VALUE = 0\n")
    for argv in (["git", "init", "--quiet", "--initial-branch=main"], ["git", "add", "--all"],
                 ["git", "commit", "--quiet", "-m", "base"]):  # fmt: skip
        subprocess.run(argv, cwd=path, env={**os.environ, **IDENTITY}, check=True)
    return path


def timed(action: Any) -> float:
    started = time.perf_counter()
    action()
    return (time.perf_counter() - started) * 1000


def floor_add_remove(repo: Path, folder: Path) -> float:
    """ms of a bare ``git worktree add --detach`` + ``remove`` of the base."""

    def both() -> None:
        for argv in (["git", "worktree", "add", "--quiet", "--detach", str(folder), "HEAD"],
                     ["git", "worktree", "remove", "--force", str(folder)]):  # fmt: skip
            subprocess.run(argv, cwd=repo, check=True, capture_output=True)

    return timed(both)


def floor_checkout(clone: Path) -> float:
    """ms of a ``git checkout`` of a one-line change and back, in place."""
    if not (clone / ".git").exists():
        subprocess.run(["git", "clone", "--quiet", str(clone.parent / "repo"), str(clone)],
                       check=True)  # fmt: skip
        (clone / CHANGED).write_text("VALUE = 1\n")
        env = {**os.environ, **IDENTITY}
        subprocess.run(["git", "commit", "--quiet", "-am", "one line"], cwd=clone, env=env,
                       check=True)  # fmt: skip

    def there_and_back() -> None:
        for target in ("HEAD~1", "main"):
            subprocess.run(["git", "checkout", "--quiet", target], cwd=clone, check=True,
                           capture_output=True)  # fmt: skip

    return timed(there_and_back) / 2


def loop_run(repo: Path, folder: Path) -> dict[str, Any]:
    """One loop run of ``ITEMS`` items, 2 turns each, in a fresh process; its turns' timings."""
    quest = folder / "quest"
    quest.mkdir(parents=True)
    (quest / "quest.toml").write_text(QUEST.format(repo=repo))
    (quest / "gate.md").write_text(GATE)
    (quest / "items.jsonl").write_text("")
    (folder / "agent.sh").write_text(AGENT)
    (folder / "agent.sh").chmod(0o755)
    argv = [sys.executable, str(Path(__file__).resolve()), str(folder)]
    out = subprocess.run(argv, capture_output=True, text=True, check=False)
    if out.returncode:
        raise SystemExit(f"a benchmark loop failed: {out.stderr[-3000:]}")
    shutil.rmtree(folder / "trees", ignore_errors=True)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def child(folder: Path) -> None:
    """In a process of its own: the loop run, then each turn's timings from the ledger."""
    from reins import SQLiteStore
    from reins.declare.questdoc import load_folder
    from reins.loop import LoopOptions, choose_generator, run

    quest = load_folder(folder / "quest")
    ledger = folder / "q.reins.db"
    with SQLiteStore.open(ledger, create=True) as led:
        led.add((f"i{n}", {"id": n}) for n in range(ITEMS))
    agent = choose_generator(f"cmd:{folder / 'agent.sh'}", quest)
    options = LoopOptions(concurrency=1, error_backoff=0.0, worktrees=str(folder / "trees"))
    started = time.time()
    with SQLiteStore.open(ledger) as led:
        run(led, quest, agent, options=options, handle_signals=False)
        logs = [led.snapshot(f"i{n}")[1] for n in range(ITEMS)]
    turns = []
    for log in logs:
        for a in log:
            began, ended = _when(a.started_at), _when(a.recorded_at)
            turns.append({"turn": a.turn, "outcome": a.outcome, "began": began, "ended": ended,
                          "agent": a.usage.latency or 0.0})  # fmt: skip
    print(json.dumps({"started": started, "turns": turns}))


def _when(stamp: str | None) -> float:
    assert stamp is not None
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def overheads(result: dict[str, Any]) -> dict[str, float]:
    """ms of reins' own time in the run's turns: an item's first turn and a later one (the
    median over the run), the first item's (cold) first turn, and the time between turns."""
    turns = sorted(result["turns"], key=lambda t: t["began"])
    assert [t["outcome"] for t in turns] == ["FAIL", "PASS"] * ITEMS, turns
    own = [(t["ended"] - t["began"] - t["agent"]) * 1000 for t in turns]
    between = [(b["began"] - a["ended"]) * 1000 for a, b in itertools.pairwise(turns)]
    return {
        "first turn (cold, the run's first item)": own[0] + 0.0,
        "first turn of an item (median)": statistics.median(own[0::2]),
        "a later turn (median)": statistics.median(own[1::2]),
        "between turns (median)": statistics.median(between),
    }


if __name__ == "__main__":
    child(Path(sys.argv[1]))
