"""Coding-agent benchmarks of issue 19: reins' own cost per agent turn, and 8 worktrees at once.

Usage (from the repository root)::

    .venv/bin/python bench/bench_coding.py            # full: 5 runs of each phase, 3 loop runs
    .venv/bin/python bench/bench_coding.py --quick    # fewer runs, smaller loops

**Overhead per turn** is measured phase by phase on a repository of 10,000 files (100 folders
of 100 small Python files, one commit), with the library's own functions, the gate excluded:
making an item's worktree (its first turn) or resetting it to where a retry starts (every
later turn), running a no-op agent through the runner (spawn, clean environment, watchdogs,
the scan of ``/proc`` for leftovers), the snapshot (stage, commit on the branch, diff from the
base) after the agent changed one file, composing the submission, and recording the turn in a
SQLite ledger. **Throughput** runs ``reins loop``'s engine on 16 items with concurrency 8 and
an agent of fixed latency (a shell script that sleeps L seconds, then writes one file), a gate
that passes every answer (a ``regex`` check on the submission), each item one turn; the ideal
is 8 / L turns per second. Every run starts in a fresh process on a fresh ledger and worktrees.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.machine import cpu_model  # noqa: E402

FILES = 10_000
GOAL_MS = 200.0
# (files in the repository, the agent's latency in seconds) of each throughput row
THROUGHPUT = ((100, 1.0), (100, 10.0), (FILES, 10.0), (FILES, 60.0))
IDENTITY = {
    "GIT_AUTHOR_NAME": "b",
    "GIT_AUTHOR_EMAIL": "b@b",
    "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@b",
}


def make_repo(path: Path, files: int) -> Path:
    """A repository of ``files`` small Python files in folders of 100, one commit on main."""
    path.mkdir(parents=True)
    for i in range(files):
        folder = path / f"pkg{i // 100:03d}"
        folder.mkdir(exist_ok=True)
        (folder / f"mod{i:05d}.py").write_text(f"VALUE = {i}\n\n\ndef f():\n    return VALUE\n")
    env = {**os.environ, **IDENTITY}
    for argv in (
        ["git", "init", "--quiet", "--initial-branch=main"],
        ["git", "add", "--all"],
        ["git", "commit", "--quiet", "-m", "base"],
    ):
        subprocess.run(argv, cwd=path, env=env, check=True)
    return path


def timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return (time.perf_counter() - started) * 1000


def phases(repo: Path, root: Path, ledger: Path) -> dict[str, float]:
    """One pass over the phases of two turns of one item, each in milliseconds."""
    from reins.coders.cmd import CmdAgent
    from reins.coders.protocol import Session
    from reins.coders.runner import run_agent
    from reins.values import Prompt
    from reins.workspace.snapshot import snapshot
    from reins.workspace.spec import Workspace
    from reins.workspace.submission import compose
    from reins.workspace.trees import Worktrees

    out: dict[str, float] = {}
    trees = Worktrees.open(Workspace(repo=str(repo)), root=str(root))
    tree = trees.tree("item")
    out["make the worktree (first turn)"] = timed(lambda: trees.prepare("item", trees.base))
    out["reset it (a retry's start)"] = timed(lambda: trees.prepare("item", trees.base))
    home = root / ".reins" / "home"
    home.mkdir(parents=True, exist_ok=True)
    noop = root.parent / "noop.sh"
    noop.write_text("#!/bin/sh\ncat >/dev/null\necho x >> pkg000/mod00000.py\necho done\n")
    noop.chmod(0o755)
    agent = CmdAgent(str(noop), {})
    session = Session(Prompt("", "do it"), tree.path, str(home))
    out["run a no-op agent (runner)"] = timed(lambda: asyncio.run(run_agent(agent, session)))
    snaps: list[Any] = []
    out["snapshot: stage, commit, diff"] = timed(
        lambda: snaps.append(snapshot(trees, tree, message="turn"))
    )
    snap = snaps[0]
    out["compose the submission"] = timed(
        lambda: compose(
            "done", snap.diff, files=snap.files, base=tree.base, commit=snap.commit, branch="b"
        )
    )
    out["record the turn (SQLite)"] = record_ms(ledger, tree, snap)
    return out


def record_ms(ledger: Path, tree: Any, snap: Any) -> float:
    """Lease an item and record a judged FAIL of it, as the loop does (the gate excluded)."""
    from bench.quests import counter
    from reins import Fact, Outcome, SQLiteStore, Verdict
    from reins.store import Notes, Usage
    from reins.turn.record import Origin, record

    with SQLiteStore.open(ledger, create=True) as led:
        led.add([("c0000000", {"n": 0})])
        lease = led.lease("bench#0", ttl=60)
        assert lease is not None
        verdict = Verdict.short(
            Outcome.FAIL, Fact(rule="equals", where="a", expected="b", actual="c")
        )
        notes = Notes(via="loop", branch=tree.branch, commit=snap.commit, base=tree.base)
        origin = Origin(usage=Usage(backend="cmd"), notes=notes)
        return timed(
            lambda: record(
                led, counter, lease.item, verdict, origin, driver="loop", owner="bench#0",
                submission="done\n\n" + snap.diff.decode(),
            )
        )  # fmt: skip


def overhead(repeat: int) -> dict[str, list[float]]:
    runs: dict[str, list[float]] = {}
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as folder:
            base = Path(folder)
            repo = make_repo(base / "repo", FILES)
            for name, ms in phases(repo, base / "trees", base / "b.reins.db").items():
                runs.setdefault(name, []).append(ms)
    return runs


def child(args: argparse.Namespace) -> None:
    """One loop run in this process: 32 items, concurrency 8, an agent of fixed latency."""
    from reins import SQLiteStore
    from reins.coders.registry import resolve_agent
    from reins.declare.questdoc import load_folder
    from reins.loop import LoopOptions, run

    folder = Path(args.folder)
    quest = load_folder(folder / "quest")
    with SQLiteStore.open(folder / "q.reins.db", create=True) as led:
        led.add((f"i{n:02d}", {"id": n}) for n in range(args.items))
    agent = resolve_agent(f"cmd:{folder / 'agent.sh'}")
    options = LoopOptions(
        concurrency=args.concurrency, error_backoff=0.0, worktrees=str(folder / "trees")
    )
    with SQLiteStore.open(folder / "q.reins.db") as led:
        started = time.time()
        summary = run(led, quest, agent, options=options, handle_signals=False)
        ended = time.time()
    print(json.dumps({"turns": summary.turns, "judged": summary.judged, "wall": ended - started}))


QUEST_TOML = """name = "bench"

[items]
source = "items.jsonl"

[prompt]
output = "text"
template = "write the file"

[workspace]
repo = "{repo}"
"""
GATE_MD = """# gate

## Rules

| id | level | check | parameters | coaching |
|----|-------|-------|------------|----------|
| said | FAIL | regex | pattern = 'done' | Say done. |
"""


def throughput(files: int, latency: float, items: int, concurrency: int) -> float:
    """Turns per second of one loop run (process start-up and seeding excluded)."""
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        repo = make_repo(folder / "repo", files)
        quest = folder / "quest"
        quest.mkdir()
        (quest / "quest.toml").write_text(QUEST_TOML.format(repo=repo))
        (quest / "gate.md").write_text(GATE_MD)
        (quest / "items.jsonl").write_text("")
        agent = folder / "agent.sh"
        agent.write_text(
            f'#!/bin/sh\ncat >/dev/null\nsleep {latency}\necho x > "$(basename "$PWD").txt"\n'
            "echo done\n"
        )
        agent.chmod(0o755)
        argv = [sys.executable, str(Path(__file__).resolve()), "--child", "--folder", name]
        argv += ["--items", str(items), "--concurrency", str(concurrency)]
        out = subprocess.run(argv, cwd=REPO, capture_output=True, text=True)
        if out.returncode:
            raise SystemExit(f"a benchmark loop failed: {out.stderr[-2000:]}")
        result = json.loads(out.stdout.strip().splitlines()[-1])
        shutil.rmtree(folder / "trees", ignore_errors=True)
    if result["judged"] != items:
        raise SystemExit(f"expected {items} judged turns, got {result}")
    return float(result["turns"]) / float(result["wall"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs, smaller loops")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    parser.add_argument("--items", type=int, default=32, help=argparse.SUPPRESS)
    parser.add_argument("--concurrency", type=int, default=8, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    repeat = 2 if args.quick else 5
    load = os.getloadavg()[0]
    print(
        f"# bench_coding · {os.cpu_count()} CPU · {cpu_model()} · Python "
        f"{platform.python_version()} · git {git_version()} · load {load:.1f}"
    )
    print(f"\noverhead per agent turn, {FILES} files, medians of {repeat} runs (ms)")
    runs = overhead(repeat)
    medians = {name: statistics.median(ms) for name, ms in runs.items()}
    for name, med in medians.items():
        shown = " ".join(f"{m:.0f}" for m in runs[name])
        print(f"  {name:<34} {med:>7.1f}   {shown}")
    common = sum(m for n, m in medians.items() if "worktree" not in n and "reset" not in n)
    first = common + medians["make the worktree (first turn)"]
    later = common + medians["reset it (a retry's start)"]
    for label, total in (("first turn of an item", first), ("a later turn", later)):
        verdict = "met" if total <= GOAL_MS else "missed"
        print(f"  = {label:<32} {total:>7.1f}   goal ≤ {GOAL_MS:.0f} ms: {verdict}")
    items = 16
    loops = 1 if args.quick else 2
    rows = THROUGHPUT[:2] if args.quick else THROUGHPUT
    print(f"\nthroughput, {items} items, concurrency 8, agent of fixed latency (turns/s)")
    print(f"  {'files':>6} {'latency':>8} {'turns/s':>8} {'ideal':>6} {'of ideal':>8}   runs")
    for files, latency in rows:
        rates = [throughput(files, latency, items, 8) for _ in range(loops)]
        med, ideal = statistics.median(rates), 8 / latency
        shown = " ".join(f"{r:.2f}" for r in rates)
        print(
            f"  {files:>6} {latency:>7.0f}s {med:>8.2f} {ideal:>6.1f} {med / ideal:>8.2f}   {shown}"
        )


def git_version() -> str:
    out = subprocess.run(["git", "--version"], capture_output=True, text=True)
    return out.stdout.split()[-1] if out.returncode == 0 else "?"


if __name__ == "__main__":
    main()
