"""Web benchmarks of issue 13: the dashboard's pages at 1M items, SQLite beside PostgreSQL.

Usage (from the repository root)::

    .venv/bin/python bench/bench_web.py            # 1M items; writes bench/WEB.md
    .venv/bin/python bench/bench_web.py --quick    # 100k items, fewer runs

A ledger of N ``bench.quests:counter`` items is written through ``Store.load`` (as ``reins
ledger copy`` writes): 70 % PASS after one turn, 10 % PASS after a FAIL, 5 % REVIEW, 5 % DONE
after three FAILs, 10 % TODO (half of them with a FAIL), about 1.3 attempts per item. Each page
is then requested through the app (Starlette's TestClient, in process: no socket) and timed
from request to the whole body: that is the server's time. Median and p90 of the runs after
one warm-up. The goal: the board and a page of 50 items each within 150 ms at 1M on SQLite;
the PostgreSQL figures (a throwaway server on 127.0.0.1, ``reins.testing.postgres``) beside.
"""

from __future__ import annotations

import argparse
import os
import platform
import sqlite3
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.machine import cpu_model  # noqa: E402
from bench.quests import counter, key_of  # noqa: E402
from reins.store.model import Attempt, AttemptKind, Item, State  # noqa: E402
from reins.store.protocol import Store  # noqa: E402
from reins.store.query import PageQuery  # noqa: E402
from reins.values import Fact  # noqa: E402

GOAL_MS = 150.0
STAMP = "2026-01-01T00:00:00.000Z"
PAGES = (
    ("board", "/"),
    ("items: first page of 50", "/items"),
    ("items: page of 50 deep in the ledger", "/items?after={deep}"),
    ("items: 50 newest first", "/items?sort=newest"),
    ("items: 50 REVIEW", "/items?state=REVIEW"),
    ("items: 50 by root cause", "/items?rule=answer"),
    ("items: round 1, TODO", "/items?state=TODO&round=1"),
    ("items: key contains (common text)", "/items?q=c00"),
    ("items: key contains (one match, a scan)", "/items?q={last}"),
    ("item: timeline of 4 turns", "/item?key={done}"),
    ("review queue (20 items)", "/review"),
    ("pulse (live change counter)", "/api/pulse"),
)
GOAL_PAGES = ("board", "items: first page of 50", "items: page of 50 deep in the ledger")


def entries(n: int) -> Iterator[tuple[Item, Sequence[Attempt]]]:
    """N items with their logs, in a fixed mix of outcomes (see the module docstring)."""
    fail = (Fact(rule="answer", where="submission", expected="the number", actual="-1"),)
    minute = 60_000 // max(1, n // 600)  # spread over ten hours

    def at(i: int, turn: int) -> str:
        ms = i * minute // 1000 + turn
        hms = f"{ms // 3_600_000 % 24:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d}"
        return f"2026-01-01T{hms}.{ms % 1000:03d}Z"

    def attempt(i: int, key: str, turn: int, ok: bool | None, state: State, tries: int) -> Attempt:
        outcome = "PASS" if ok else "REVIEW" if ok is None else "FAIL"
        return Attempt(
            key=key,
            turn=turn,
            kind=AttemptKind.JUDGED,
            driver="loop",
            state_after=state,
            tries_after=tries,
            recorded_at=at(i, turn),
            outcome=outcome,
            root_cause=None if ok else "answer",
            facts=() if ok else fail,
            feedback="" if ok else f"{key} -> {outcome}",
            submission=str(i) if ok else "-1",
        )

    for i in range(n):
        key, mix = key_of(i), i % 20
        log: list[Attempt]
        if mix < 14:
            log = [attempt(i, key, 1, True, State.PASS, 0)]
        elif mix < 16:
            log = [
                attempt(i, key, 1, False, State.TODO, 1),
                attempt(i, key, 2, True, State.PASS, 1),
            ]
        elif mix == 16:
            log = [attempt(i, key, 1, None, State.REVIEW, 0)]
        elif mix == 17:
            log = [
                attempt(i, key, t, False, State.DONE if t == 3 else State.TODO, t)
                for t in (1, 2, 3)
            ]
        elif mix == 18:
            log = [attempt(i, key, 1, False, State.TODO, 1)]
        else:
            log = []
        last = log[-1] if log else None
        item = Item(
            key=key,
            state=last.state_after if last else State.TODO,
            tries=last.tries_after if last else 0,
            payload={"n": i},
            turns=len(log),
            created_at=STAMP,
            updated_at=last.recorded_at if last else STAMP,
            locked_at=last.recorded_at if last and last.state_after.terminal else None,
            root_cause=next((a.root_cause for a in reversed(log)), None),
        )
        yield item, log


def timed(client: object, path: str, runs: int) -> list[float]:
    get = client.get  # type: ignore[attr-defined]
    assert get(path).status_code == 200, path  # warm-up, and a page that works
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        response = get(path)
        response.content  # noqa: B018 - the whole body
        out.append((time.perf_counter() - start) * 1000)
    return out


def measure(store: Store, n: int, runs: int) -> dict[str, list[float]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

    from reins.web.app import create_app
    from reins.web.security import Guard

    app = create_app(store, counter, Guard.for_host("127.0.0.1"))
    client = TestClient(app, base_url="http://127.0.0.1:8765")
    deep = store.page(PageQuery(limit=1, descending=True)).items  # warm the cursor lookups
    assert deep
    fill = {"deep": n * 9 // 10, "last": key_of(n - 1), "done": key_of(17)}
    return {label: timed(client, path.format(**fill), runs) for label, path in PAGES}


def build(store: Store, n: int) -> float:
    start = time.perf_counter()
    assert store.load(entries(n)) == n
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="100k items, 5 runs per page")
    parser.add_argument("--items", type=int, help="items in the ledger [1M; --quick 100k]")
    parser.add_argument("--runs", type=int, help="timed requests per page [15; --quick 5]")
    parser.add_argument("--engines", default="sqlite,postgres", help="sqlite,postgres")
    parser.add_argument(
        "--pg-items",
        type=int,
        help="items in the PostgreSQL ledger [100k; --quick 20k]: Store.load writes about "
        "1,300 items a second there, so 1M takes a quarter of an hour to build",
    )
    args = parser.parse_args()
    n = args.items or (100_000 if args.quick else 1_000_000)
    runs = args.runs or (5 if args.quick else 15)
    engines = args.engines.split(",")
    pg_n = args.pg_items or (20_000 if args.quick else 100_000)
    lines = [
        f"# bench_web · {os.cpu_count()} CPU · {cpu_model()} · Python "
        f"{platform.python_version()} · SQLite {sqlite3.sqlite_version} · load "
        f"{os.getloadavg()[0]:.1f} at the start",
        f"# {n:,} items; each page: 1 warm-up, then median (p90) of {runs} requests, in ms",
    ]
    print("\n".join(lines), flush=True)
    figures: dict[str, dict[str, list[float]]] = {}
    builds: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as folder:
        if "sqlite" in engines:
            from reins.store.sqlite import SQLiteStore

            with SQLiteStore.open(Path(folder) / "web.reins.db", create=True) as store:
                builds["sqlite"] = build(store, n)
                print(f"  sqlite: loaded in {builds['sqlite']:.0f} s", flush=True)
                figures["sqlite"] = measure(store, n, runs)
        if "postgres" in engines:
            from reins.store.postgres import PostgresStore
            from reins.testing.postgres import TempCluster

            with TempCluster() as cluster:
                url = f"{cluster.url}?schema=web"
                with PostgresStore.open(url, create=True) as store:
                    builds["postgres"] = build(store, pg_n)
                    print(f"  postgres: loaded in {builds['postgres']:.0f} s", flush=True)
                    figures["postgres"] = measure(store, pg_n, runs)
    shown = list(figures)
    table = [
        "",
        "| page | "
        + " | ".join(f"{e} at {n if e == 'sqlite' else pg_n:,}: ms (p90)" for e in shown)
        + " |",
        "|---|" + "---:|" * len(shown),
    ]
    for label, _ in PAGES:
        cells = []
        for engine in shown:
            values = sorted(figures[engine][label])
            p90 = values[min(len(values) - 1, int(len(values) * 0.9))]
            cells.append(f"{statistics.median(values):.1f} ({p90:.1f})")
        table.append(f"| {label} | " + " | ".join(cells) + " |")
    goals = [""]
    if "sqlite" in figures:
        worst = max(statistics.median(figures["sqlite"][p]) for p in GOAL_PAGES)
        met = "met" if worst <= GOAL_MS else "missed"
        goals.append(
            f"- SQLite, board and a page of 50 at {n:,} items: slowest median {worst:.1f} ms "
            f"(goal ≤ {GOAL_MS:g} ms: {met})"
        )
    if "postgres" in figures:
        worst = max(statistics.median(figures["postgres"][p]) for p in GOAL_PAGES)
        goals.append(
            f"- PostgreSQL, the same pages at {pg_n:,} items: slowest median {worst:.1f} ms"
        )
    goals.append(
        "- ledgers written by Store.load in "
        + ", ".join(f"{e} {s:.0f} s" for e, s in builds.items())
    )
    goals.append(f"- load average at the end: {os.getloadavg()[0]:.1f}")
    print("\n".join(table + goals))
    if not args.quick and not args.items and not args.pg_items:
        report = ["# Web benchmarks (bench_web.py)", "", "```", *lines, "```", *table, *goals]
        (HERE / "WEB.md").write_text("\n".join(report) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
