"""``make bench``: run every ``bench/bench_*.py`` in turn; exit non-zero if any of them fails.

Usage::

    .venv/bin/python bench/run.py             # every benchmark, full size
    .venv/bin/python bench/run.py --quick     # every benchmark, passing --quick to each
    .venv/bin/python bench/run.py core loop   # only bench_core.py and bench_loop.py

Each script runs as its own process, from the repository root, with this interpreter; it
prints its own table and writes its own figures file.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def scripts(names: Sequence[str]) -> list[Path]:
    found = sorted(HERE.glob("bench_*.py"))
    if not names:
        return found
    by_name = {p.stem.removeprefix("bench_"): p for p in found}
    unknown = [n for n in names if n.removeprefix("bench_").removesuffix(".py") not in by_name]
    if unknown:
        known = ", ".join(sorted(by_name)) or "none"
        raise SystemExit(f"run.py: no benchmark named {', '.join(unknown)}. Known: {known}")
    return [by_name[n.removeprefix("bench_").removesuffix(".py")] for n in names]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run the reins benchmarks (bench/bench_*.py).")
    parser.add_argument("names", nargs="*", help="benchmarks to run, e.g. core loop [default: all]")
    parser.add_argument("--quick", action="store_true", help="pass --quick to every benchmark")
    args = parser.parse_args(argv)
    todo = scripts(args.names)
    if not todo:
        print("run.py: no bench/bench_*.py found", file=sys.stderr)
        return 1
    results: list[tuple[str, int, float]] = []
    for script in todo:
        cmd = [sys.executable, str(script), *(["--quick"] if args.quick else [])]
        print(f"\n=== {script.name} {'--quick ' if args.quick else ''}===", flush=True)
        start = time.perf_counter()
        try:
            code = subprocess.call(cmd, cwd=REPO)
        except KeyboardInterrupt:
            print(f"\nrun.py: interrupted during {script.name}", file=sys.stderr)
            return 130
        results.append((script.name, code, time.perf_counter() - start))
    print("\n=== summary ===")
    width = max(len(name) for name, _, _ in results)
    for name, code, seconds in results:
        outcome = "ok" if code == 0 else f"FAILED (exit {code})"
        print(f"{name:<{width}}  {seconds:7.1f} s  {outcome}")
    failed = [name for name, code, _ in results if code != 0]
    if failed:
        print(f"run.py: {len(failed)} benchmark(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
