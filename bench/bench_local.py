"""Benchmark: the unattended loop on ``local:smollm2`` over the example quest's sample texts.

Prints, for each retry policy, the loop's turns per second and how many items lock PASS at
try 1, 2 and 3, as medians over several runs. Each run is a fresh ledger whose item keys carry
the run number, so each run samples with its own seeds (the same run repeated gives the same
bytes). ``facts`` feeds the gate's facts back into the next prompt, ``fresh`` only samples
anew: the difference between the two is what fact feedback does for this model.

    .venv/bin/python bench/bench_local.py --runs 3 --policies facts,fresh
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import platform
import statistics
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from machine import cpu_model  # bench/ is on sys.path when run as a script
from reins.backends.base import Backend
from reins.backends.registry import resolve
from reins.loop import LoopOptions, NullReporter, TextGenerator, run
from reins.quests.emails import quest
from reins.store.sqlite import SQLiteStore
from reins.store.walk import iter_items

# the answer's shape held by a grammar; what goes in it is the model's (as in examples/demo.sh)
SHAPE = (
    '{"type":"object","required":["addresses"],'
    '"properties":{"addresses":{"type":"array","maxItems":8,"items":{"type":"string"}}}}'
)
MODELS = {
    "plain": "local:smollm2?max_output_tokens=160",
    "shape": f"local:smollm2?max_output_tokens=160&json_schema={SHAPE}",
}


@dataclass
class Run:
    config: str
    turns: int
    elapsed: float
    input_tokens: int
    output_tokens: int
    generation_errors: int
    # (final state, judged tries when it locked) → items
    locked: Counter[tuple[str, int]] = field(default_factory=Counter)

    @property
    def turns_per_second(self) -> float:
        return self.turns / self.elapsed

    def count(self, state: str, tries: int | None = None) -> int:
        return sum(n for (s, t), n in self.locked.items() if s == state and tries in (None, t))


def one_run(backend: Backend, config: str, policy: str, run_no: int, concurrency: int) -> Run:
    with tempfile.TemporaryDirectory() as tmp:
        ledger = SQLiteStore.open(Path(tmp) / "bench.reins.db", create=True)
        ledger.add((f"{key}#r{run_no}", payload) for key, payload in quest.seed([]))
        options = LoopOptions(concurrency=concurrency, retry=policy, breaker=None)
        summary = run(
            ledger,
            quest,
            TextGenerator(backend),
            options=options,
            reporter=NullReporter(),
            handle_signals=False,
        )
        result = Run(
            config=config,
            turns=summary.turns,
            elapsed=summary.elapsed,
            input_tokens=summary.input_tokens,
            output_tokens=summary.output_tokens,
            generation_errors=summary.generation_errors,
        )
        for item in list(iter_items(ledger)):
            judged = sum(1 for a in ledger.snapshot(item.key)[1] if a.judged)
            result.locked[(item.state.value, judged)] += 1
        ledger.close()
    return result


def spread(values: list[float], digits: int = 3) -> str:
    m, lo, hi = statistics.median(values), min(values), max(values)
    return f"{m:.{digits}f} ({lo:.{digits}f}–{hi:.{digits}f})"


def report(runs: list[Run], *, models: dict[str, str], loads: dict[str, float], n: int) -> str:
    n_items = sum(runs[0].locked.values())
    lines = [
        f"Example quest `emails`: {n_items} sample texts, 3 tries at most; {n} run(s) per row,"
        " concurrency 1.",
        f"Machine: `nproc` {os.cpu_count()}, {cpu_model()}; Python {platform.python_version()},"
        f" llama-cpp-python {importlib.metadata.version('llama-cpp-python')}.",
        "",
        "| model, retry policy | turns/s median (min–max) | s/turn | tokens in / out per turn"
        " | PASS@1 | PASS@2 | PASS@3 | REVIEW | DONE (3 FAILs) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for config in dict.fromkeys(r.config for r in runs):
        rs = [r for r in runs if r.config == config]
        turns = sum(r.turns for r in rs)

        def cell(state: str, tries: int | None = None, rs: list[Run] = rs) -> str:
            counts = [r.count(state, tries) for r in rs]
            return f"{statistics.median(counts):g} (Σ {sum(counts)})"

        lines.append(
            f"| {config} | {spread([r.turns_per_second for r in rs])}"
            f" | {statistics.median([r.elapsed / r.turns for r in rs]):.2f}"
            f" | {sum(r.input_tokens for r in rs) / turns:.0f}"
            f" / {sum(r.output_tokens for r in rs) / turns:.0f}"
            f" | {cell('PASS', 1)} | {cell('PASS', 2)} | {cell('PASS', 3)}"
            f" | {cell('REVIEW')} | {cell('DONE')} |"
        )
    errors = sum(r.generation_errors for r in runs)
    lines += ["", "Cells: median per run (Σ: sum over all runs). Models:"]
    lines += [
        f"- {label}: `{spec}` (loaded in {loads[label]:.2f} s)" for label, spec in models.items()
    ]
    lines += [f"- generation errors: {errors}"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--models", default="plain,shape", help=f"of {', '.join(MODELS)} [%(default)s]"
    )
    parser.add_argument("--model", help="one model spec instead of --models")
    parser.add_argument("--runs", type=int, default=3, help="runs per row [%(default)s]")
    parser.add_argument(
        "--policies", default="facts,fresh", help="retry policies, comma-separated [%(default)s]"
    )
    args = parser.parse_args(argv)
    models = {"model": args.model} if args.model else {m: MODELS[m] for m in args.models.split(",")}

    runs: list[Run] = []
    loads: dict[str, float] = {}
    for label, spec in models.items():
        start = time.perf_counter()
        backend = resolve(spec)
        loads[label] = time.perf_counter() - start
        for policy in args.policies.split(","):
            for run_no in range(1, args.runs + 1):
                r = one_run(backend, f"{label}, {policy}", policy, run_no, 1)
                runs.append(r)
                print(
                    f"{r.config} run {run_no}: {r.turns} turns in {r.elapsed:.1f} s"
                    f" ({r.turns_per_second:.3f}/s); PASS@1..3"
                    f" {r.count('PASS', 1)}/{r.count('PASS', 2)}/{r.count('PASS', 3)},"
                    f" REVIEW {r.count('REVIEW')}, DONE {r.count('DONE')};"
                    f" load average {os.getloadavg()[0]:.2f}",
                    file=sys.stderr,
                    flush=True,
                )
        del backend
    print(report(runs, models=models, loads=loads, n=args.runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
