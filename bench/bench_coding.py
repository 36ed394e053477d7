"""Coding-agent benchmarks: reins' own time around an agent beside git's floor, and 8 at once.

Usage (from the repository root)::

    .venv/bin/python bench/bench_coding.py            # full: 10,000 and 100,000 files, 5 runs
    .venv/bin/python bench/bench_coding.py --quick    # 10,000 files, 3 runs, shorter loops

**Beside the floor** (``coding_e2e.py``): on tmpfs and on the disk, for a repository of 10,000
(and 100,000) small files, each round measures, one after the other, git's floor (a bare
``git worktree add`` + ``remove``, and a ``git checkout`` of a one-line change in place) and a
loop run of 5 items, 2 turns each, and reports reins' own time in a turn (its start to its
record, less the agent's run, and between turns) beside the floor. **Phases**: the same costs
taken apart with the library's functions on 10,000 files: the base store, a workspace made or
reset, the runner, taking the change, the judge's tree (new and reused), the submission, the
record. **Throughput** runs ``reins loop``'s engine on 16 items with concurrency 8 and an agent
of fixed latency (a shell script that sleeps L seconds, then writes one file), a gate that
passes every answer (a ``regex`` check), each item one turn, on tmpfs and on the disk;
the ideal is 8 / L turns per second. Every run starts in a fresh
process on a fresh ledger.
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

from bench import coding_e2e as e2e  # noqa: E402
from bench.coding_e2e import CHANGED, make_repo  # noqa: E402
from bench.machine import cpu_model  # noqa: E402

FILES = 10_000
# (files in the repository, the agent's latency in seconds) of each throughput row
THROUGHPUT = ((100, 1.0), (100, 10.0), (FILES, 1.0), (FILES, 10.0), (FILES, 60.0))


def timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return (time.perf_counter() - started) * 1000


def phases(repo: Path, root: Path, ledger: Path) -> dict[str, float]:
    """One pass over the phases of two turns of one item, each in milliseconds, and the git
    floor beside them: a bare ``git worktree add --detach`` + ``remove`` of the same base."""
    from reins.coders.cmd import CmdAgent
    from reins.coders.protocol import Session
    from reins.coders.runner import run_agent
    from reins.values import Prompt
    from reins.workspace.change import take
    from reins.workspace.judgetree import JudgeTrees
    from reins.workspace.spec import Workspace
    from reins.workspace.submission import compose
    from reins.workspace.workspaces import Workspaces

    out: dict[str, float] = {}
    floor = root.parent / "floor"
    out[FLOOR] = timed(lambda: git_floor(repo, floor))
    made: list[Workspaces] = []
    out[STORE] = timed(
        lambda: made.append(Workspaces.open(Workspace(repo=str(repo)), root=str(root)))
    )
    spaces = made[0]
    out[FIRST] = timed(lambda: spaces.prepare("item", spaces.base))
    out[LATER] = timed(lambda: spaces.prepare("item", spaces.base))
    home = root / ".reins" / "home"
    home.mkdir(parents=True, exist_ok=True)
    noop = root.parent / "noop.sh"
    noop.write_text(f"#!/bin/sh\ncat >/dev/null\necho x >> {CHANGED}\necho done\n")
    noop.chmod(0o755)
    agent = CmdAgent(str(noop), {})
    session = Session(Prompt("", "do it"), spaces.path_of("item"), str(home))
    out["run a no-op agent (runner)"] = timed(lambda: asyncio.run(run_agent(agent, session)))
    changes: list[Any] = []
    out["take the change: measure, stage, commit, diff"] = timed(
        lambda: changes.append(take(spaces, "item", spaces.base, message="turn"))
    )
    change = changes[0]
    judges = JudgeTrees(spaces.places, spaces.base, judge=spaces.workspace.judge_globs)

    def judge_tree() -> None:
        with judges.tree(change.patch.decode(), branch="reins/item"):
            pass

    out["build the judge's tree (first)"] = timed(judge_tree)
    judges.settle()  # cleaned off the path after a judgment, as between two turns of a run
    out["build the judge's tree (reused)"] = timed(judge_tree)
    judges.settle()
    out["compose the submission"] = timed(
        lambda: compose(
            "done",
            change.patch,
            files=change.files,
            base=spaces.base,
            commit=change.commit,
            branch="b",
        )
    )
    out["record the turn (SQLite)"] = record_ms(ledger, spaces.base, change)
    return out


FLOOR = "git floor: bare worktree add + remove"
STORE = "make the base store (once a quest)"
FIRST = "make the workspace (first turn)"
LATER = "reset it (a later turn)"


def git_floor(repo: Path, folder: Path) -> None:
    for argv in (
        ["git", "worktree", "add", "--quiet", "--detach", str(folder), "HEAD"],
        ["git", "worktree", "remove", "--force", str(folder)],
    ):
        subprocess.run(argv, cwd=repo, check=True, capture_output=True)


def record_ms(ledger: Path, base: str, change: Any) -> float:
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
        notes = Notes(via="loop", branch="reins/item", commit=change.commit, base=base)
        origin = Origin(usage=Usage(backend="cmd"), notes=notes)
        return timed(
            lambda: record(
                led, counter, lease.item, verdict, origin, driver="loop", owner="bench#0",
                submission="done\n\n" + change.patch.decode(),
            )
        )  # fmt: skip


def file_systems() -> list[tuple[str, str | None]]:
    """(name, a folder for temporary files on it): tmpfs where /dev/shm is one, and the disk."""
    found: list[tuple[str, str | None]] = []
    if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
        found.append(("tmpfs", "/dev/shm"))
    found.append(("disk", os.environ.get("REINS_BENCH_DISK", "/var/tmp")))
    return found


def beside_the_floor(fs: str, where: str | None, files: int, repeat: int) -> None:
    """reins' own time in a loop's turns beside git's floor, interleaved, on one repository."""
    floors: dict[str, list[float]] = {"add+remove": [], "checkout in place": []}
    own: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(dir=where) as name:
        folder = Path(name)
        made = e2e.timed(lambda: make_repo(folder / "repo", files))
        for n in range(repeat):
            floors["add+remove"].append(e2e.floor_add_remove(folder / "repo", folder / "wt"))
            floors["checkout in place"].append(e2e.floor_checkout(folder / "clone"))
            for key, ms in e2e.overheads(e2e.loop_run(folder / "repo", folder / f"run{n}")).items():
                own.setdefault(key, []).append(ms)
    floor = statistics.median(floors["add+remove"])
    print(f"\n{files} files on {fs} (made in {made / 1000:.0f} s), medians of {repeat} runs (ms)")
    for label, ms in floors.items():
        print(f"  git floor: {label:<36} {statistics.median(ms):>8.1f}   {_runs(ms)}")
    for label, ms in own.items():
        med = statistics.median(ms)
        print(f"  reins beyond the agent: {label:<23} {med:>8.1f}   {_runs(ms)}   "
              f"{med / floor:.2f}x add+remove")  # fmt: skip


def _runs(ms: list[float]) -> str:
    return " ".join(f"{m:.0f}" for m in ms)


def overhead(repeat: int) -> dict[str, list[float]]:
    runs: dict[str, list[float]] = {}
    shm = "/dev/shm" if os.path.isdir("/dev/shm") else None
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(dir=shm) as folder:
            base = Path(folder)
            repo = make_repo(base / "repo", FILES)
            for name, ms in phases(repo, base / "trees", base / "b.reins.db").items():
                runs.setdefault(name, []).append(ms)
    return runs


def child(args: argparse.Namespace) -> None:
    """One loop run in this process: 32 items, concurrency 8, an agent of fixed latency."""
    from reins import SQLiteStore
    from reins.declare.questdoc import load_folder
    from reins.loop import LoopOptions, choose_generator, run

    folder = Path(args.folder)
    quest = load_folder(folder / "quest")
    with SQLiteStore.open(folder / "q.reins.db", create=True) as led:
        led.add((f"i{n:02d}", {"id": n}) for n in range(args.items))
    agent = choose_generator(f"cmd:{folder / 'agent.sh'}", quest)
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


def throughput(
    files: int, latency: float, items: int, concurrency: int, where: str | None = None
) -> float:
    """Turns per second of one loop run in a folder under ``where`` (process start-up and
    seeding excluded)."""
    with tempfile.TemporaryDirectory(dir=where) as name:
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
    parser.add_argument(
        "--part",
        choices=("floor", "phases", "throughput"),
        action="append",
        help="run only these parts (repeat; default: all)",
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    parser.add_argument("--items", type=int, default=32, help=argparse.SUPPRESS)
    parser.add_argument("--concurrency", type=int, default=8, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    repeat = 3 if args.quick else 5
    load = os.getloadavg()[0]
    print(
        f"# bench_coding · {os.cpu_count()} CPU · {cpu_model()} · Python "
        f"{platform.python_version()} · git {git_version()} · load {load:.1f}"
    )
    parts = set(args.part or ("floor", "phases", "throughput"))
    sizes = (FILES,) if args.quick else (FILES, 100_000)
    for fs, where in file_systems() if "floor" in parts else ():
        for files in sizes:
            beside_the_floor(fs, where, files, repeat)
    if "phases" in parts:
        print(
            f"\nphases on {FILES} files (tmpfs where there is one), medians of {repeat} runs (ms)"
        )
        runs = overhead(repeat)
        medians = {name: statistics.median(ms) for name, ms in runs.items()}
        for name, med in medians.items():
            shown = " ".join(f"{m:.0f}" for m in runs[name])
            print(f"  {name:<46} {med:>8.1f}   {shown}")
    if "throughput" in parts:
        throughputs(args.quick)


def throughputs(quick: bool) -> None:
    """The 8-slot throughput rows on each file system: turns per second beside the ideal."""
    items = 16
    loops = 1 if quick else 2
    rows = THROUGHPUT[:4] if quick else THROUGHPUT
    print(f"\nthroughput, {items} items, concurrency 8, agent of fixed latency (turns/s)")
    print(
        f"  {'fs':<6} {'files':>6} {'latency':>8} {'turns/s':>8} {'ideal':>6} {'of ideal':>8}"
        "   runs"
    )
    for fs, where in file_systems():
        for files, latency in rows:
            rates = [throughput(files, latency, items, 8, where) for _ in range(loops)]
            med, ideal = statistics.median(rates), 8 / latency
            shown = " ".join(f"{r:.2f}" for r in rates)
            print(
                f"  {fs:<6} {files:>6} {latency:>7.0f}s {med:>8.2f} {ideal:>6.1f} "
                f"{med / ideal:>8.2f}   {shown}"
            )


def git_version() -> str:
    out = subprocess.run(["git", "--version"], capture_output=True, text=True)
    return out.stdout.split()[-1] if out.returncode == 0 else "?"


if __name__ == "__main__":
    main()
