"""The confined judge's cost per judged turn, side by side with the judge before it (issue 37).

Usage (from the repository root)::

    .venv/bin/python bench/bench_judge.py                    # 10 turns, 5 rounds
    .venv/bin/python bench/bench_judge.py --quick            # 4 turns, 2 rounds
    .venv/bin/python bench/bench_judge.py --baseline REF     # another "before" (a git ref)

A judged turn is what the loop does after an agent's run on the coding pack: build the judge's
tree from the recorded patch and run the pack's two pytest rules (``bench/judge_worker.py``).
"before" is the code at ``--baseline`` (default: the last commit before the confined judge),
checked out in a git worktree; "now" is this checkout. Both run the same worker, one process a
round each, interleaved (before, now, before, now, …) on the same machine, so that the load
of the moment weighs on both. Two projects: the coding pack as shipped, and the same with
10,000 more small files. Medians of every turn of every round; the goal: now at most 1.10
times before. Figures go to ``bench/JUDGE.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.machine import cpu_model  # noqa: E402

BASELINE = "a3301ee"
"""The last commit before the confined judge (issue 37)."""
PROJECTS = (("the coding pack", 0), ("the pack + 10,000 files", 10_000))
Row = tuple[str, float, float, float, float, float]
"""A project; a later judged turn before, now, their ratio; a process's first one before, now."""


def turns_of(src: Path, files: int, turns: int) -> tuple[float, list[float]]:
    with tempfile.TemporaryDirectory(prefix="reins-bench-judge-") as folder:
        env = {**os.environ, "PYTHONPATH": str(src)}
        done = subprocess.run(
            [sys.executable, str(HERE / "judge_worker.py"), "pack", str(files), str(turns), folder],
            env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
    if done.returncode:
        raise SystemExit(f"judge_worker ({src}) failed:\n{done.stderr[-3000:]}")
    said = json.loads(done.stdout.strip().splitlines()[-1])
    return float(said["first"]), [float(s) for s in said["turns"]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="4 turns, 2 rounds")
    parser.add_argument("--baseline", default=BASELINE, help="the git ref measured as before")
    args = parser.parse_args()
    turns, rounds = (4, 2) if args.quick else (10, 5)
    worktree = Path(tempfile.mkdtemp(prefix="reins-bench-baseline-"))
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "-q", str(worktree),
                    args.baseline], check=True)  # fmt: skip
    try:
        sides = {"before": worktree / "src", "now": REPO / "src"}
        rows: list[Row] = []
        for name, files in PROJECTS:
            seen: dict[str, list[float]] = {side: [] for side in sides}
            firsts: dict[str, list[float]] = {side: [] for side in sides}
            for _ in range(rounds):
                for side, src in sides.items():
                    first, later = turns_of(src, files, turns)
                    firsts[side].append(first)
                    seen[side] += later
            before, now = (statistics.median(seen[s]) * 1000 for s in ("before", "now"))
            cold = [statistics.median(firsts[s]) * 1000 for s in ("before", "now")]
            rows.append((name, before, now, now / before, *cold))
            print(f"{name}: before {before:.0f} ms, now {now:.0f} ms, {now / before:.2f}×; "
                  f"first judgment {cold[0]:.0f} → {cold[1]:.0f} ms", flush=True)  # fmt: skip
    finally:
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(worktree)],
                       check=False)  # fmt: skip
        shutil.rmtree(worktree, ignore_errors=True)
    write(rows, args.baseline, turns, rounds)
    return 0


def write(rows: list[Row], baseline: str, turns: int, n: int) -> None:
    load = os.getloadavg()[0]
    lines = [
        "# The confined judge per judged turn (`bench_judge.py`, issue 37)",
        "",
        f"Machine: {cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
        f"load average {load:.1f} at the end. Before: `{baseline}`; {n} rounds × {turns} turns "
        "a side, interleaved; medians.",
        "",
        "| project | a judged turn, before | now (confined) | now / before "
        "| a process's first judgment, before | now |",
        "|---|---:|---:|---:|---:|---:|",
        *(
            f"| {name} | {b:.0f} ms | {c:.0f} ms | {r:.2f}× | {fb:.0f} ms | {fc:.0f} ms |"
            for name, b, c, r, fb, fc in rows
        ),
        "",
    ]
    (HERE / "JUDGE.md").write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    raise SystemExit(main())
