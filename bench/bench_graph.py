"""Graph gate cost per submission for 5, 50 and 500 counters (issue 5).

Usage (from the repository root)::

    .venv/bin/python bench/bench_graph.py                    # 5, 50, 500 counters; 7 runs each
    .venv/bin/python bench/bench_graph.py --sizes 5,5000 --repeat 9

Each graph has N cheap counters (a set lookup, so the figures are the gate's own cost, not the
rules'): about 70 % at FAIL level and 30 % at REVIEW, and about 0.6 N ``supersedes`` edges, each
from a counter to a later one (a random DAG, fixed seed). Submissions fire a random fifth of the
counters (64 fixed patterns, cycled), plus one pattern that fires none (PASS). For each size
the script times, per submission: the graph's ``evaluate`` (tally, root cause and walkthrough
text), the flat gate over the same rules, ``judge`` + ``acceptability`` (h-Categoriser), and
a staged graph where a tenth of the counters read one ground through an in-memory resolver.
Each figure is the median over ``--repeat`` runs (interleaved round-robin across all cases) of
the mean over one run's submissions.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO / "src") not in sys.path:
    sys.path.insert(0, str(REPO / "src"))

from machine import cpu_model  # noqa: E402  (bench/ is on sys.path when run as a script)
from reins.gate import (  # noqa: E402
    Context,
    Counter,
    Fact,
    Graph,
    Level,
    Rule,
    evaluate,
)

DEFAULT_SIZES = (5, 50, 500)
PATTERNS = 64
URL = "https://example.org/page"


class StaticResolver:
    """Answers at once and keeps no record (a FakeResolver's call log would grow for hours)."""

    def fetch(self, url: str) -> str:
        return "text"

    def mx(self, domain: str) -> bool:
        return True


def make_rule(i: int, level: Level) -> Rule:
    name = f"r{i}"

    def check(ctx: Context) -> Fact | None:
        if name in ctx.submission:
            return Fact(where=f"item[{i}]", expected="nothing", actual=name)
        return None

    return Rule(name, level, f"rule {i}", check)


def build(n: int, seed: int, *, staged: bool = False) -> tuple[list[Rule], Graph]:
    rng = random.Random(seed)
    rules = [make_rule(i, Level.FAIL if rng.random() < 0.7 else Level.REVIEW) for i in range(n)]
    edges: dict[int, list[int]] = {}
    for _ in range(int(0.6 * n)):
        if n < 2:
            break
        up = rng.randrange(n - 1)
        edges.setdefault(up, []).append(rng.randrange(up + 1, n))
    readers = set(rng.sample(range(n), max(1, n // 10))) if staged else set()
    counters = [
        Counter(
            r,
            supersedes=tuple(f"r{d}" for d in edges.get(i, [])),
            needs=("page",) if i in readers else (),
        )
        for i, r in enumerate(rules)
    ]
    grounds = {"page": lambda ctx, snap: snap.fetch(URL)} if staged else {}
    return rules, Graph(counters, grounds=grounds, resolver=StaticResolver())


def contexts(n: int, seed: int) -> list[Context]:
    rng = random.Random(seed + 1)
    out = [Context(key="k", submission=frozenset())]
    for _ in range(PATTERNS):
        firing = frozenset(f"r{i}" for i in range(n) if rng.random() < 0.2)
        out.append(Context(key="k", submission=firing))
    return out


def calibrate(fn: Callable[[Context], object], ctxs: Sequence[Context]) -> int:
    """How many passes over ``ctxs`` take at least ~0.1 s."""
    loops = 1
    while True:
        started = time.perf_counter()
        for _ in range(loops):
            for c in ctxs:
                fn(c)
        if time.perf_counter() - started >= 0.1:
            return loops
        loops *= 2


def one_run(fn: Callable[[Context], object], ctxs: Sequence[Context], loops: int) -> float:
    """Mean seconds per submission over ``loops`` passes."""
    started = time.perf_counter()
    for _ in range(loops):
        for c in ctxs:
            fn(c)
    return (time.perf_counter() - started) / (loops * len(ctxs))


def measure(
    cases: dict[tuple[int, str], tuple[Callable[[Context], object], Sequence[Context]]],
    repeat: int,
) -> dict[tuple[int, str], float]:
    """Median per-submission seconds of every case, runs interleaved round-robin.

    Interleaving makes noise from a shared machine fall on every case alike, so the ratios
    between columns and sizes stay meaningful even when the absolute figures wobble.
    """
    loops = {key: calibrate(fn, ctxs) for key, (fn, ctxs) in cases.items()}
    runs: dict[tuple[int, str], list[float]] = {key: [] for key in cases}
    for _ in range(repeat):
        for key, (fn, ctxs) in cases.items():
            runs[key].append(one_run(fn, ctxs, loops[key]))
    return {key: statistics.median(values) for key, values in runs.items()}


def acceptability(graph: Graph, ctx: Context) -> dict[str, float]:
    return graph.judge(ctx).acceptability()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)))
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]

    print(
        f"Python {platform.python_version()} on {platform.system()} {platform.machine()}, "
        f"{cpu_model()}, nproc {os.cpu_count()}; median of {args.repeat} runs; µs per submission"
    )
    print()
    print(
        "| counters | edges | graph evaluate | flat evaluate | graph / flat "
        "| judge + acceptability | staged (in-memory ground) | build rules + graph |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    cases: dict[tuple[int, str], tuple[Callable[[Context], object], Sequence[Context]]] = {}
    edges: dict[int, int] = {}
    builds: dict[int, float] = {}
    for n in sizes:
        rules, graph = build(n, args.seed)
        _, staged = build(n, args.seed, staged=True)
        ctxs = contexts(n, args.seed)
        edges[n] = sum(len(c.supersedes) for c in graph.counters)
        cases[n, "graph"] = (graph.evaluate, ctxs)
        cases[n, "flat"] = (partial(evaluate, rules), ctxs)
        cases[n, "accept"] = (partial(acceptability, graph), ctxs)
        cases[n, "staged"] = (staged.evaluate, ctxs)
        times = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            build(n, args.seed)
            times.append(time.perf_counter() - started)
        builds[n] = statistics.median(times)
    t = measure(cases, args.repeat)
    us = 1e6
    for n in sizes:
        g, f = t[n, "graph"], t[n, "flat"]
        print(
            f"| {n} | {edges[n]} | {g * us:,.1f} | {f * us:,.1f} | {g / f:.1f}× "
            f"| {t[n, 'accept'] * us:,.1f} | {t[n, 'staged'] * us:,.1f} | {builds[n] * us:,.0f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
