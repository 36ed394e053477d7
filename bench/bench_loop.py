"""Loop benchmarks of issue 3: throughput against a FakeBackend, framework overhead, 4 processes.

Usage (from the repository root)::

    .venv/bin/python bench/bench_loop.py            # full: 3 runs each; prints the table
    .venv/bin/python bench/bench_loop.py --quick    # 1 run each, shorter runs
    .venv/bin/python bench/bench_loop.py --repeat 5 --seconds 8

Every measurement runs in a fresh process on a fresh ledger of ``bench.quests:counter`` items.
The fake answers each item wrong once and right the next time, so every item takes two turns
and every second prompt carries a FAIL's facts. Throughput counts recorded turns over the time
``reins.loop.run`` took (process start-up and seeding excluded). The ideal at latency L and
concurrency C is C / L turns per second. "One core" runs pin the process to CPU 0. The
four-process runs start four loops on one ledger at the same instant; their rate is all turns
over the time from that instant to the last loop's end.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.machine import cpu_model  # noqa: E402

LATENCY = 0.1
CONCURRENCY = (1, 8, 32, 128)


def child(args: argparse.Namespace) -> None:
    """One measured run, in this process; prints a JSON line."""
    if args.pin:
        os.sched_setaffinity(0, {0})
    from bench.quests import counter
    from reins import SQLiteStore
    from reins.loop import LoopOptions, TextGenerator, run
    from reins.testing import FakeBackend, FakeCall

    def answer(call: FakeCall) -> str:
        n = int(call.key[1:])
        return str(n) if call.n else "-1"

    path = Path(args.ledger)
    if args.seed_items:
        with SQLiteStore.open(path, create=True) as led:
            led.add((s.key, s.payload) for s in counter.seed([str(args.items)]))
        return
    if args.start_at:
        time.sleep(max(0.0, args.start_at - time.time()))
    fake = FakeBackend(answer, latency=args.latency)
    options = LoopOptions(concurrency=args.concurrency, error_backoff=0.0, export_every=1.0)
    with SQLiteStore.open(path) as led:
        started = time.time()
        summary = run(led, counter, TextGenerator(fake), options=options, handle_signals=False)
        ended = time.time()
    print(json.dumps({"turns": summary.turns, "started": started, "ended": ended}))


def spawn(ledger: Path, **flags: Any) -> subprocess.Popen[str]:
    argv = [sys.executable, str(Path(__file__).resolve()), "--child", "--ledger", str(ledger)]
    for name, value in flags.items():
        if value is True:
            argv.append(f"--{name.replace('_', '-')}")
        elif value not in (None, False):
            argv += [f"--{name.replace('_', '-')}", str(value)]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, cwd=REPO)


def measure(
    items: int, concurrency: int, latency: float, *, processes: int = 1, pin: bool = False
) -> float:
    """Turns per second of one run (or of ``processes`` loops on one ledger)."""
    with tempfile.TemporaryDirectory() as folder:
        ledger = Path(folder) / "bench.reins.db"
        seeding = spawn(ledger, seed_items=True, items=items)
        seeding.communicate()
        start_at = time.time() + 1.5 if processes > 1 else None
        procs = [
            spawn(ledger, concurrency=concurrency, latency=latency, pin=pin, start_at=start_at)
            for _ in range(processes)
        ]
        results = []
        for proc in procs:
            out, _ = proc.communicate()
            if proc.returncode:
                raise SystemExit(f"a benchmark loop failed (exit {proc.returncode})")
            results.append(json.loads(out))
    turns = sum(r["turns"] for r in results)
    if turns != 2 * items:
        raise SystemExit(f"expected {2 * items} turns, got {turns}")
    began = start_at if start_at is not None else min(r["started"] for r in results)
    return turns / (max(r["ended"] for r in results) - began)


def median_of(repeat: int, *args: Any, **kwargs: Any) -> tuple[float, list[float]]:
    runs = [measure(*args, **kwargs) for _ in range(repeat)]
    return statistics.median(runs), runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1 run each, shorter runs")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (median)")
    parser.add_argument("--seconds", type=float, default=6.0, help="target length of a run")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--ledger", help=argparse.SUPPRESS)
    parser.add_argument("--seed-items", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--items", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--concurrency", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--latency", type=float, default=0.0, help=argparse.SUPPRESS)
    parser.add_argument("--pin", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--start-at", type=float, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    repeat, seconds = (1, 3.0) if args.quick else (args.repeat, args.seconds)
    print(
        f"# bench_loop · {os.cpu_count()} CPU · {cpu_model()} · Python {platform.python_version()}"
    )
    print(f"# medians of {repeat} run(s); FakeBackend; 2 turns per item\n")
    print(f"latency {LATENCY * 1000:.0f} ms, one process")
    print(f"{'concurrency':>11}  {'turns/s':>8}  {'ideal':>7}  {'of ideal':>8}  runs")
    for c in CONCURRENCY:
        ideal = c / LATENCY
        items = max(20, int(ideal * seconds / 2))
        med, runs = median_of(repeat, items, c, LATENCY)
        shown = " ".join(f"{r:.0f}" for r in runs)
        print(f"{c:>11}  {med:>8.1f}  {ideal:>7.0f}  {med / ideal:>8.2f}  {shown}")
    print("\nzero latency (framework overhead)")
    print(f"{'setting':>28}  {'turns/s':>8}  {'µs/turn':>8}  runs")
    items = 1500 if args.quick else 4000
    rows = [
        ("1 process, 1 core, c=1", {"pin": True}, 1, 1),
        ("1 process, 1 core, c=8", {"pin": True}, 8, 1),
        ("1 process, c=8", {}, 8, 1),
        ("4 processes, c=8 each", {}, 8, 4),
    ]
    for label, extra, c, processes in rows:
        med, runs = median_of(repeat, items, c, 0.0, processes=processes, **extra)
        shown = " ".join(f"{r:.0f}" for r in runs)
        print(f"{label:>28}  {med:>8.0f}  {1e6 / med:>8.0f}  {shown}")
    print(f"\n4 processes on one ledger, latency {LATENCY * 1000:.0f} ms")
    print(f"{'concurrency each':>16}  {'turns/s':>8}  {'ideal':>7}  {'of ideal':>8}  runs")
    for c in (8, 32):
        ideal = 4 * c / LATENCY
        items = max(40, int(ideal * seconds / 2))
        med, runs = median_of(repeat, items, c, LATENCY, processes=4)
        shown = " ".join(f"{r:.0f}" for r in runs)
        print(f"{c:>16}  {med:>8.1f}  {ideal:>7.0f}  {med / ideal:>8.2f}  {shown}")


if __name__ == "__main__":
    main()
