"""The ifeval pack's judging cost next to the official checker alone, on Google's GPT-4 file.

Usage (from the repository root; needs ``pip install -e '.[ifeval]'``)::

    .venv/bin/python bench/bench_ifeval.py              # 5 runs of each, interleaved
    .venv/bin/python bench/bench_ifeval.py --repeat 3

Both sides judge the 541 archived GPT-4 responses (``tests/data/ifeval/``):

- **official**: ``lm_eval``'s own ``test_instruction_following_strict`` and ``_loose`` on each
  prompt, as upstream's ``evaluation_main`` does;
- **pack**: the pack's 25 rules (``reins.packs.ifeval.checks.instruction``) on each prompt, with
  the checker cache emptied first: strict and loose per instruction, the random-checker probe
  and langdetect's extra seeds included.

Each figure is the median over ``--repeat`` interleaved runs, after one warm-up that loads the
official code. The one-time load (NLTK, ``lm_eval``, the Punkt model) is timed in a fresh
process and reported apart: both sides pay it once.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO / "src") not in sys.path:
    sys.path.insert(0, str(REPO / "src"))

from machine import cpu_model  # noqa: E402  (bench/ is on sys.path when run as a script)

DATA = REPO / "tests" / "data" / "ifeval"
INPUTS = DATA / "input_data_gpt4_20231107_145030.jsonl"
RESPONSES = DATA / "input_response_data_gpt4_20231107_145030.jsonl"
PACK = REPO / "src" / "reins" / "packs" / "ifeval"


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def official_run(items: list[dict[str, Any]], responses: dict[str, str]) -> float:
    from reins.packs.ifeval.official import load

    evaluation = load().evaluation
    start = time.perf_counter()
    for item in items:
        example = evaluation.InputExample(
            key=item["key"],
            instruction_id_list=item["instruction_id_list"],
            prompt=item["prompt"],
            kwargs=item["kwargs"],
        )
        evaluation.test_instruction_following_strict(example, responses[item["prompt"]])
        evaluation.test_instruction_following_loose(example, responses[item["prompt"]])
    return time.perf_counter() - start


def pack_run(items: list[dict[str, Any]], responses: dict[str, str], ids: list[str]) -> float:
    from reins.gate.rule import Context
    from reins.packs.ifeval import checks

    checks._build.cache_clear()
    start = time.perf_counter()
    for item in items:
        text = responses[item["prompt"]]
        ctx = Context(key=str(item["key"]), submission=text, payload=item, raw=text)
        for instruction_id in ids:
            checks.instruction(ctx, {"id": instruction_id})
    return time.perf_counter() - start


def load_time() -> float:
    code = (
        "import time; t = time.perf_counter()\n"
        "from reins.packs.ifeval.official import load; load()\n"
        "print(time.perf_counter() - t)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    return float(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    items = _jsonl(INPUTS)
    responses = {r["prompt"]: r["response"] for r in _jsonl(RESPONSES)}
    ids = sorted({i for item in items for i in item["instruction_id_list"]})
    loads = [load_time() for _ in range(3)]
    official_run(items, responses)  # warm-up: loads the official code in this process
    official, pack = [], []
    for _ in range(args.repeat):
        official.append(official_run(items, responses))
        pack.append(pack_run(items, responses, ids))
    o, p = statistics.median(official), statistics.median(pack)
    print(f"machine: {cpu_model()}")
    print(f"one-time load (fresh process, median of 3): {statistics.median(loads):.2f} s")
    print("| 541 GPT-4 responses | seconds | per prompt |")
    print("|---|---:|---:|")
    print(f"| official checker alone (strict + loose) | {o:.2f} | {1000 * o / 541:.1f} ms |")
    print(f"| the pack's 25 rules | {p:.2f} | {1000 * p / 541:.1f} ms |")
    print(f"| pack / official | {p / o:.2f}× | |")


if __name__ == "__main__":
    main()
