"""Batch rounds of issue 20: the ledger overhead of a round of 10,000 items (compose + record).

Usage (from the repository root)::

    .venv/bin/python bench/bench_batch.py            # 3 rounds of 10,000 items; writes BATCH.md
    .venv/bin/python bench/bench_batch.py --quick    # 1 round of 2,000 items

In one process, on fresh SQLite ledgers of ``bench.quests:counter`` items, it measures:

- the **in-process turn**: ``reins.turn.submit`` of a right answer (read, judge, record one
  turn), as bench_core.py's "turn in-process: PASS (record only)", on a ledger of the same size;
- a **batch round** through the code ``reins loop --batch`` runs, the provider aside: the job
  opened with its items leased (``Store.open_job``), the round composed
  (``reins.loop.rounds.compose_round``: each item's snapshot, prompt and OpenAI request line),
  its requests recorded (``fill_job``), the job moved to ``uploaded`` and ``sent``, every result
  judged and recorded as one turn (``JobRecorder``'s own recording, the answers made in
  process, every other one wrong: a FAIL keeps its lease), and the job closed, which gives the
  leases of the FAILs back; and apart, reading its requests
  back, which only a round carried on after a crash does.

The round's *ledger overhead* is what a round adds to the turns themselves: opening the job
(leasing its items in one transaction), recording its requests, its moves and its closing.
Goal: under 5 % of the in-process turn times the round size. Both are timed in this run.
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.machine import cpu_model  # noqa: E402

GOAL = 0.05
WARMUP = 20  # in-process turns before the timed ones


class Bench:
    """What a round needs of its run (reins.loop.collect.Run), in process."""

    def __init__(self, store: Any, quest: Any) -> None:
        self.store, self.quest = store, quest
        self.policy, self.driver, self.poll = "facts", "bench", 1.0

    def scrub(self, text: str) -> str:
        return text


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def in_process_turn(path: Path, items: int) -> float:
    """Seconds per turn of ``items`` submits in a row (read, judge, record a PASS) on the ledger
    at ``path``: their total over their number, as a round's steps are timed."""
    from bench.quests import counter, key_of
    from reins import SQLiteStore
    from reins.turn.submit import submit

    with SQLiteStore.open(path) as led:
        for n in range(WARMUP):
            submit(led, counter, key_of(n), f"{n}\n".encode(), driver="bench")
        start = time.perf_counter()
        for n in range(WARMUP, items):
            submit(led, counter, key_of(n), f"{n}\n".encode(), driver="bench")
        return (time.perf_counter() - start) / (items - WARMUP)


def batch_round(path: Path, items: int) -> dict[str, float]:
    """One round of ``items`` items: the seconds of each step."""
    from bench.quests import counter
    from reins import SQLiteStore
    from reins.backends import registry
    from reins.backends.batch import batch_api
    from reins.loop.collect import JobRecorder
    from reins.loop.rounds import compose_round
    from reins.store.jobs import JobDraft, JobState
    from reins.values import Completion

    api = batch_api(registry.resolve("openai:gpt-bench?base_url=http://127.0.0.1:9/v1"))
    assert api is not None
    t: dict[str, float] = {}
    with SQLiteStore.open(path) as led:
        draft = JobDraft("openai", "gpt-bench", "bench", "bench@here")
        opened, t["open"] = timed(lambda: led.open_job(draft, limit=items, hold=60))
        assert opened is not None and len(opened[1]) == items
        job, keys = opened
        (_, requests), t["compose"] = timed(
            lambda: compose_round(led, counter, api, "facts", job, keys)
        )
        job, t["fill"] = timed(lambda: led.fill_job(job.id, requests))
        _, t["moves"] = timed(
            lambda: (
                led.advance_job(job.id, JobState.UPLOADED, file_id="file-bench"),
                led.advance_job(job.id, JobState.SENT, batch_id="batch_bench"),
            )
        )
        got, t["read"] = timed(lambda: led.job_requests(job.id))
        assert len(got) == items
        recorder = JobRecorder(Bench(led, counter), api, job)  # type: ignore[arg-type]

        def record_all() -> None:
            for r in got:
                n = int(r.key[1:])
                answer = str(n if n % 2 else n + 1)  # every other one a FAIL, kept leased
                done = Completion(text=answer, model="gpt-bench", input_tokens=20,
                                  output_tokens=2, batch=True)  # fmt: skip
                assert recorder._record_now(r, done, None, "batch_bench") is not None

        _, t["record"] = timed(record_all)
        assert led.stats().leased == items // 2  # the FAILs, still the job's
        _, t["close"] = timed(lambda: led.advance_job(job.id, JobState.COLLECTED))
        assert led.stats().leased == 0
    # A round this process composed keeps its requests; one carried on after a crash reads
    # them back (``read``), once.
    t["overhead"] = t["open"] + t["fill"] + t["moves"] + t["close"]
    t["total"] = t["overhead"] + t["compose"] + t["record"]
    return t


def fresh(folder: Path, name: str, items: int) -> Path:
    from bench.quests import counter
    from reins import SQLiteStore

    path = folder / f"{name}.reins.db"
    with SQLiteStore.open(path, create=True) as led:
        led.add((s.key, s.payload) for s in counter.seed([str(items)]))
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 round of 2,000 items")
    parser.add_argument("--items", type=int, help="items per round [10,000; quick: 2,000]")
    parser.add_argument("--repeat", type=int, help="rounds measured [3; quick: 1]")
    parser.add_argument("--out", default=str(HERE / "BATCH.md"), help="figures file")
    args = parser.parse_args()
    items = args.items or (2_000 if args.quick else 10_000)
    repeat = args.repeat or (1 if args.quick else 3)
    turns, rounds = [], []
    with tempfile.TemporaryDirectory(prefix="reins-bench-batch-") as tmp:
        folder = Path(tmp)
        for i in range(repeat):
            rounds.append(batch_round(fresh(folder, f"round{i}", items), items))
            turns.append(in_process_turn(fresh(folder, f"turns{i}", items), items))
    report = render(items, repeat, statistics.median(turns), rounds)
    print(report)
    if not args.quick:
        Path(args.out).write_text(report, encoding="utf-8")
    return 0


def render(items: int, repeat: int, turn: float, rounds: list[dict[str, float]]) -> str:
    med = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
    budget = GOAL * turn * items
    met = "met" if med["overhead"] < budget else "**MISSED**"
    rows = [
        ("open the job: lease its items (one transaction)", med["open"]),
        ("record its requests (`fill_job`)", med["fill"]),
        ("move it to uploaded, then sent", med["moves"]),
        ("close it: give the FAILs' leases back", med["close"]),
        ("**ledger overhead of the round**", med["overhead"]),
        ("compose the round (snapshot, prompt, request line per item)", med["compose"]),
        ("judge and record every result, one turn each (half PASS, half FAIL)", med["record"]),
        ("the whole round", med["total"]),
    ]
    lines = [
        "# Batch rounds (`bench_batch.py`, issue 20)",
        "",
        f"Machine: {cpu_model()}, Python {platform.python_version()}, SQLite "
        f"{sqlite3.sqlite_version}, load average {os.getloadavg()[0]:.1f} at the end; {repeat} "
        f"round(s) of {items:,} `counter` items, each on a fresh ledger; medians.",
        "",
        "| step of a round | seconds | per item |",
        "|---|---:|---:|",
        *(f"| {label} | {s:.3f} | {1000 * s / items:.3f} ms |" for label, s in rows),
        "",
        f"- in-process turn (`submit`: read, judge, record a PASS; {items - WARMUP:,} in a row, "
        f"total over their number): {1000 * turn:.3f} ms; times the round size: "
        f"{turn * items:.2f} s",
        f"- goal: ledger overhead < {GOAL:.0%} of that = {budget:.3f} s; measured "
        f"{med['overhead']:.3f} s ({100 * med['overhead'] / (turn * items):.2f} %): {met}",
        f"- a round carried on after a crash reads its requests back once: "
        f"{med['read']:.3f} s more ({100 * med['read'] / (turn * items):.2f} %)",
        f"- a round's turn costs {1000 * med['total'] / items:.3f} ms per item (compose, "
        f"judge, record and the round's own work), the in-process turn {1000 * turn:.3f} ms",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
