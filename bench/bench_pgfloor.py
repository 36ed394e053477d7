"""PostgreSQL against its floor (issue 22): the loop's turns/s beside pgbench's TPC-B tps.

Usage (from the repository root)::

    .venv/bin/python bench/bench_pgfloor.py            # 3 rounds; writes PGFLOOR.md
    .venv/bin/python bench/bench_pgfloor.py --quick    # 1 round, shorter runs

One throwaway server (``reins.testing.postgres.TempCluster``) on 127.0.0.1 over TCP with its
default durability (``fsync=on``, ``synchronous_commit=on``, ``full_page_writes=on``) and
``pg_stat_statements`` loaded. Each round runs, one after the other on that server: pgbench's
built-in TPC-B-like script (scale 8, so that 8 clients do not all queue on one branch row;
simple query protocol, ``-T`` seconds) at 1 client, one loop process, pgbench at 8 clients
(``-j 2``), and 8 loop processes on one ledger. The loop is ``bench/bench_store.py``'s: a
zero-latency FakeBackend, concurrency 8 per process, ``bench.quests:counter`` items answered
wrong once and right the next time (two turns each), every process starting at one instant.
The figures are medians over the rounds; the load average is noted at every step.

What a turn costs the server is read from the server's own statistics around one more run of
each loop setting: ``pg_stat_database`` (``xact_commit``, ``xact_rollback``: every call the
engine makes is one transaction and one round trip since schema v5), ``pg_stat_statements``
(the calls of every statement: a lease's statement is the one calling ``set_config``, which
turns ``synchronous_commit`` off for its transaction, so its commit does not wait for the
disk; a statement that writes (a turn, a heartbeat, a release) waits for the WAL flush; reads
wait for nothing) and
``pg_stat_wal`` (``wal_sync``: the flushes the server made, fewer than the commits that waited
when several commits share one flush).
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.bench_store import postgres_version, psycopg_version, seed, throughput  # noqa: E402
from bench.machine import cpu_model  # noqa: E402

SCALE = 8
GOALS = {1: 0.6, 8: 0.3}
# Statements that write (a turn, a heartbeat, a release, ...): in autocommit, so each commit
# waits for the WAL flush, unless it is a lease's (set_config). Reads, and the BEGIN and COMMIT
# around a read-only snapshot, wait for nothing.
_WRITES = re.compile(
    r"reins_turn|^\s*(UPDATE|INSERT|DELETE)\b|^\s*WITH\b.*\b(UPDATE|INSERT)\b", re.S
)


def pgbench(cluster: Any, clients: int, seconds: int) -> float:
    """TPC-B tps of ``clients`` pgbench clients for ``seconds`` on the cluster."""
    from reins.testing.postgres import postgres_bin

    exe = postgres_bin("pgbench")
    if exe is None:
        raise SystemExit("pgbench not found")
    jobs = min(clients, 2)
    argv = [str(exe), "-h", "127.0.0.1", "-p", str(cluster.port), "-U", "postgres", "-n"]
    argv += ["-c", str(clients), "-j", str(jobs), "-T", str(seconds), "postgres"]
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    found = re.search(r"tps = ([\d.]+) \(without initial connection time\)", out)
    if found is None:
        raise SystemExit(f"pgbench said: {out}")
    return float(found.group(1))


def server_counts(url: str) -> dict[str, float]:
    """The server's counters this benchmark reads, now."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        xacts = conn.execute(
            "SELECT xact_commit + xact_rollback FROM pg_stat_database "
            "WHERE datname = current_database()"
        ).fetchone()
        wal = conn.execute("SELECT wal_sync FROM pg_stat_wal").fetchone()
        rows = conn.execute(
            "SELECT query, calls FROM pg_stat_statements WHERE dbid = "
            "(SELECT oid FROM pg_database WHERE datname = current_database())"
        ).fetchall()
    # pg_stat_statements shows constants as $N: the lease's statement is the one calling
    # set_config (no other statement of the engine does).
    leases = sum(c for q, c in rows if "set_config(" in q)
    writes = sum(c for q, c in rows if "set_config(" not in q and _WRITES.search(q))
    top = sorted(rows, key=lambda r: -r[1])[:12]
    print("\n".join(f"   {c:>7} {' '.join(q.split())[:110]}" for q, c in top), flush=True)
    statements = sum(c for q, c in rows if not q.startswith("SELECT pg_stat_statements_reset"))
    return {
        "xacts": float(xacts[0]) if xacts else 0.0,
        "wal_sync": float(wal[0]) if wal else 0.0,
        "statements": float(statements),
        "async": float(leases),
        "durable": float(writes),
    }


def reset(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_statements_reset()")
        conn.execute("SELECT pg_stat_reset_shared('wal')")


def per_turn(url: str, location: str, items: int, processes: int) -> dict[str, float]:
    """The server's counts per turn over one loop run of ``processes`` processes."""
    from reins.store.engines import open_store

    seed(location, items)  # made and seeded before the counts start
    with open_store(location) as store:
        store.stats()
    reset(url)
    time.sleep(1.2)  # backends report their counts at most once a second
    before = server_counts(url)
    rate, _ = throughput(location, items, processes, seeded=True)
    time.sleep(1.2)
    after = server_counts(url)
    turns = 2 * items
    out = {k: (after[k] - before[k]) / turns for k in before}
    out["turns/s"] = rate
    return out


SETTINGS = {
    "fsync": "on",
    "full_page_writes": "on",
    "synchronous_commit": "on",
    "shared_preload_libraries": "pg_stat_statements",
    "max_connections": "100",
}


def measure(
    cluster: Any, rounds: int, seconds: int, items: int
) -> tuple[dict[str, list[float]], list[str], dict[int, dict[str, float]]]:
    """Each round's four runs side by side, the table of them, and the per-turn counts."""
    url = cluster.url
    with __import__("psycopg").connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
    init = [str(Path(str(cluster.bin)) / "pgbench"), "-h", "127.0.0.1", "-p", str(cluster.port)]
    subprocess.run([*init, "-U", "postgres", "-i", "-q", "-s", str(SCALE), "postgres"],
                   check=True, capture_output=True)  # fmt: skip
    runs: dict[str, list[float]] = {"pg1": [], "loop1": [], "pg8": [], "loop8": []}
    table = ["", "| round | pgbench 1 | loop 1 | ratio | pgbench 8 | loop 8 | ratio | load |"]
    table.append("|---:|---:|---:|---:|---:|---:|---:|---:|")
    names = iter(range(1000))
    for r in range(rounds):
        runs["pg1"].append(pgbench(cluster, 1, seconds))
        runs["loop1"].append(throughput(f"{url}?schema=floor_{next(names)}", items, 1)[0])
        runs["pg8"].append(pgbench(cluster, 8, seconds))
        runs["loop8"].append(throughput(f"{url}?schema=floor_{next(names)}", items, 8)[0])
        p1, l1, p8, l8 = (runs[k][-1] for k in ("pg1", "loop1", "pg8", "loop8"))
        row = (
            f"| {r + 1} | {p1:.0f} | {l1:.0f} | {l1 / p1:.2f} | {p8:.0f} | {l8:.0f} | "
            f"{l8 / p8:.2f} | {os.getloadavg()[0]:.1f} |"
        )
        table.append(row)
        print(row, flush=True)
    counts = {n: per_turn(url, f"{url}?schema=floor_{next(names)}", items, n) for n in (1, 8)}
    return runs, table, counts


def summary(
    runs: dict[str, list[float]], counts: dict[int, dict[str, float]]
) -> tuple[list[str], list[str], list[str]]:
    """The medians' row, the per-turn table and the goals."""
    med = {k: statistics.median(v) for k, v in runs.items()}
    # Each round's ratio is of two runs side by side on the same server: the median of those.
    ratio = {
        n: statistics.median(
            lp / pg for lp, pg in zip(runs[f"loop{n}"], runs[f"pg{n}"], strict=True)
        )
        for n in (1, 8)
    }
    medians = [
        f"| median | {med['pg1']:.0f} | {med['loop1']:.0f} | **{ratio[1]:.2f}** | "
        f"{med['pg8']:.0f} | {med['loop8']:.0f} | **{ratio[8]:.2f}** | |"
    ]
    cost = ["", "| per turn | 1 process | 8 processes |", "|---|---:|---:|"]
    for key, label in (
        ("xacts", "transactions (= round trips)"),
        ("statements", "statements"),
        ("durable", "commits that wait for the disk"),
        ("async", "lease commits that do not wait"),
        ("wal_sync", "WAL flushes (fsync)"),
    ):
        cost.append(f"| {label} | {counts[1][key]:.3f} | {counts[8][key]:.3f} |")
    goals = [""] + [
        f"- {n} process(es) ÷ pgbench at {n} client(s): {ratio[n]:.2f} (goal ≥ {GOALS[n]}: "
        f"{'met' if ratio[n] >= GOALS[n] else 'missed'})"
        for n in (8, 1)
    ]
    goals.append(f"- load average at the end: {os.getloadavg()[0]:.1f}")
    return medians, cost, goals


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1 round, shorter runs")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (median)")
    args = parser.parse_args()
    from reins.testing.postgres import TempCluster

    rounds, seconds, items = (1, 5, 600) if args.quick else (args.rounds, 10, 1500)
    lines = [
        f"# bench_pgfloor · {os.cpu_count()} CPU · {cpu_model()} · Python "
        f"{platform.python_version()} · load {os.getloadavg()[0]:.1f} at the start",
        f"# {postgres_version()} over TCP on 127.0.0.1 · psycopg {psycopg_version()}",
        f"# {rounds} round(s); pgbench TPC-B scale {SCALE}, {seconds} s per run; loops of "
        f"{items} items (2 turns each), concurrency 8 per process",
    ]
    print("\n".join(lines), flush=True)
    with TempCluster(settings=SETTINGS) as cluster:
        runs, table, counts = measure(cluster, rounds, seconds, items)
    medians, cost, goals = summary(runs, counts)
    print("\n".join(medians + cost + goals))
    report = ["# PostgreSQL against pgbench (bench_pgfloor.py)", "", "```", *lines, "```"]
    if not args.quick:
        (HERE / "PGFLOOR.md").write_text("\n".join(report + table + medians + cost + goals) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
