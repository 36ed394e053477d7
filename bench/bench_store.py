"""Store benchmarks of issue 8: the SQLite engine against the PostgreSQL engine.

Usage (from the repository root)::

    .venv/bin/python bench/bench_store.py            # full: 3 runs per figure; writes STORE.md
    .venv/bin/python bench/bench_store.py --quick    # 1 run each, fewer items

Throughput: 1, 4 and 8 loop processes (``reins.loop.run``, concurrency 8 each) on one fresh
ledger of ``bench.quests:counter`` items, zero-latency FakeBackend answering each item wrong once
and right the next time (two turns per item). The processes start at one instant after they
have imported and connected; the rate is all turns over the time from that instant to the last
loop's end. Latency: one turn in-process through ``reins.turn.submit`` (read the item, judge,
record: the path of ``reins submit`` and of the loop's ledger thread), PASS and FAIL, p50 and
p99, on a ledger of 2,000 items.

PostgreSQL runs on a throwaway server of its own (``reins.testing.postgres.TempCluster``) on
127.0.0.1 over TCP, durable as shipped (``fsync=on``, ``synchronous_commit=on``); one latency
row repeats the turn with ``synchronous_commit=off`` set in the URL (``options=-c ...``), which
is what SQLite's ``synchronous=NORMAL`` gives (a crash keeps the ledger whole but may lose the
last commits). The goals: 8 processes record at least twice what one records on PostgreSQL,
and the in-process turn stays within 2 ms there.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.machine import cpu_model  # noqa: E402

PROCESSES = (1, 4, 8)
CONCURRENCY = 8
GOAL_SCALE = 2.0
GOAL_TURN_MS = 2.0
LATENCY_ITEMS = 2_000


def child(args: argparse.Namespace) -> None:
    """One loop process: waits for the common start, runs, prints a JSON line."""
    from bench.quests import counter
    from reins.loop import LoopOptions, TextGenerator, run
    from reins.store.engines import open_store
    from reins.testing import FakeBackend, FakeCall

    def answer(call: FakeCall) -> str:
        return str(int(call.key[1:])) if call.turn > 1 else "-1"

    fake = FakeBackend(answer, latency=0.0)
    options = LoopOptions(concurrency=CONCURRENCY, error_backoff=0.0, breaker=None)
    with open_store(args.location) as store:
        store.stats()  # connected and warm before the start
        time.sleep(max(0.0, args.start_at - time.time()))
        started, cpu = time.time(), time.process_time()
        summary = run(store, counter, TextGenerator(fake), options=options, handle_signals=False)
        ended = time.time()
    out = {"turns": summary.turns, "started": started, "ended": ended}
    print(json.dumps({**out, "cpu": time.process_time() - cpu}))


def seed(location: str, items: int) -> None:
    from bench.quests import counter
    from reins.store.engines import open_store

    with open_store(location, create=True) as store:
        store.add((s.key, s.payload) for s in counter.seed([str(items)]))


def throughput(
    location: str, items: int, processes: int, *, seeded: bool = False
) -> tuple[float, float]:
    """Turns per second of ``processes`` loops on a fresh ledger (``seeded``: made already);
    and client CPU ms per turn."""
    if not seeded:
        seed(location, items)
    start_at = time.time() + 2.0 + 0.4 * processes
    argv = [sys.executable, str(Path(__file__).resolve()), "--child", "--location", location]
    procs = [
        subprocess.Popen([*argv, "--start-at", str(start_at)], stdout=subprocess.PIPE, cwd=REPO)
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
    if min(r["started"] for r in results) < start_at - 0.05:
        raise SystemExit("a loop started before the common start: raise the start delay")
    elapsed = max(r["ended"] for r in results) - start_at
    return turns / elapsed, 1000 * sum(r["cpu"] for r in results) / turns


def latency(location: str, turns: int) -> dict[str, list[float]]:
    """Milliseconds of ``turns`` in-process turns of each kind (after a warm-up)."""
    from bench.quests import counter, key_of
    from reins.store.engines import open_store
    from reins.turn import submit

    seed(location, LATENCY_ITEMS)
    times: dict[str, list[float]] = {"PASS": [], "FAIL": []}
    with open_store(location) as store:
        for i in range(turns + 50):
            n = i % LATENCY_ITEMS
            for kind in ("FAIL", "PASS"):  # a FAIL leaves the item TODO for the PASS
                raw = f"{n if kind == 'PASS' else -1}\n"
                started = time.perf_counter()
                submit(store, counter, key_of(n), raw, driver="bench")
                if i >= 50:
                    times[kind].append(1000 * (time.perf_counter() - started))
    return times


def postgres_version() -> str:
    from reins.testing.postgres import postgres_bin

    found = postgres_bin("postgres")
    if found is None:
        return "PostgreSQL (not found)"
    out = subprocess.run([str(found), "--version"], capture_output=True, text=True, check=False)
    return out.stdout.strip().replace("postgres (PostgreSQL) ", "PostgreSQL ")


def psycopg_version() -> str:
    import psycopg

    return f"{psycopg.__version__} (libpq {psycopg.pq.version()})"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1 run each, fewer items")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (median)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--location", help=argparse.SUPPRESS)
    parser.add_argument("--start-at", type=float, default=0.0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return 0
    from reins.testing.postgres import TempCluster

    repeat = 1 if args.quick else args.repeat
    items = 600 if args.quick else 1500
    turns = 300 if args.quick else 1000
    load = os.getloadavg()
    lines = [
        f"# bench_store · {os.cpu_count()} CPU · {cpu_model()} · Python "
        f"{platform.python_version()} · load {load[0]:.1f} at the start",
        f"# {postgres_version()} over TCP on 127.0.0.1 · psycopg {psycopg_version()} · "
        f"SQLite {sqlite3.sqlite_version}",
        f"# medians of {repeat} run(s); zero-latency FakeBackend, concurrency {CONCURRENCY} "
        f"per process, {items} items (2 turns each)",
    ]
    print("\n".join(lines), flush=True)
    rates: dict[tuple[str, int], float] = {}
    with TempCluster(settings={"fsync": "on", "full_page_writes": "on"}) as cluster, \
            tempfile.TemporaryDirectory() as folder:  # fmt: skip
        names = iter(range(1_000_000))

        def location(engine: str, options: str = "") -> str:
            n = next(names)
            if engine == "sqlite":
                return str(Path(folder) / f"b{n}.reins.db")
            return f"{cluster.url}?schema=bench_{n}{options}"

        table = [
            "",
            "| engine | processes | turns/s | client CPU ms/turn | runs |",
            "|---|---:|---:|---:|---|",
        ]
        for engine in ("sqlite", "postgres"):
            for processes in PROCESSES:
                runs = [throughput(location(engine), items, processes) for _ in range(repeat)]
                rate = statistics.median(r for r, _ in runs)
                cpu = statistics.median(c for _, c in runs)
                rates[engine, processes] = rate
                shown = " ".join(f"{r:.0f}" for r, _ in runs)
                row = f"| {engine} | {processes} | {rate:.0f} | {cpu:.2f} | {shown} |"
                table.append(row)
                print(row, flush=True)
        lat = ["", "| engine | turn | p50 ms | p99 ms | turns |", "|---|---|---:|---:|---:|"]
        settings = [
            ("sqlite", location("sqlite")),
            ("postgres", location("postgres")),
            ("postgres, synchronous_commit=off", location(
                "postgres", "&options=-c%20synchronous_commit%3Doff"
            )),
        ]  # fmt: skip
        p50: dict[str, float] = {}
        for label, where in settings:
            for kind, values in latency(where, turns).items():
                p50[f"{label} {kind}"] = pct(values, 0.5)
                row = (
                    f"| {label} | {kind} | {pct(values, 0.5):.2f} | {pct(values, 0.99):.2f} "
                    f"| {len(values)} |"
                )
                lat.append(row)
                print(row, flush=True)
    scale = rates["postgres", 8] / rates["postgres", 1]
    turn = max(p50["postgres PASS"], p50["postgres FAIL"])
    goals = [
        "",
        f"- PostgreSQL, 8 processes / 1 process: {scale:.2f}× (goal ≥ {GOAL_SCALE:g}×: "
        f"{'met' if scale >= GOAL_SCALE else 'missed'})",
        f"- PostgreSQL, in-process turn p50: {turn:.2f} ms (goal ≤ {GOAL_TURN_MS:g} ms: "
        f"{'met' if turn <= GOAL_TURN_MS else 'missed'})",
        f"- load average at the end: {os.getloadavg()[0]:.1f}",
    ]
    print("\n".join(goals))
    report = "\n".join(
        ["# Store benchmarks (bench_store.py)", "", "```", *lines, "```", *table, *lat, *goals]
    )
    if not args.quick:
        (HERE / "STORE.md").write_text(report + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
