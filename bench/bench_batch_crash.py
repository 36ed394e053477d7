"""Batch rounds SIGKILLed at random steps: how many requests a provider gets twice (issue 29).

Usage (from the repository root)::

    .venv/bin/python bench/bench_batch_crash.py             # 30+ kills per protocol
    .venv/bin/python bench/bench_batch_crash.py --quick     # 8+ kills per protocol
    .venv/bin/python bench/bench_batch_crash.py --kills 60 --seed 7

For each protocol (OpenAI Batch, Anthropic Message Batches), against the fake provider of
tests/kit/batchserver.py in this process, one ledger of ``--items`` items of the tiny quest
(b-like items fail once, c-like ones go to REVIEW, so rounds follow rounds) is worked by
``reins loop --batch --round-size 5`` processes, one or two at a time, each capped at a few
rounds (``--max-turns``) and killed with SIGKILL in one of three ways, chosen at random:

- at a crash point (``REINS_CRASH_AT``: a random step of a round, its N-th time);
- by a timer, at a random moment of its run;
- by the provider's side: the provider makes the batch and holds back its answer, and every
  run waiting for an answer is killed (issue 29's case: a batch made, its id never recorded).

Some runs are left to finish. Once ``--kills`` SIGKILLs have landed, runs go on unkilled until
no item is left. Then the provider's own record is read: every request each batch held (what
it bills), by item and turn (from the custom ids). Goal: 0 requests sent twice for one item and
turn. Also counted: requests never recorded as a turn (paid for, unused), and the ledger's
check. Figures go to BATCH_CRASH.md.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.machine import cpu_model  # noqa: E402

STEPS = {
    "openai": ["leased", "composed", "uploaded", "upload-recorded", "created", "sent",
               "downloaded", "result", "collected"],
    "anthropic": ["leased", "composed", "created", "sent", "downloaded", "result",
                  "collected"],
}  # fmt: skip
OPTIONS = ("--round-size", "5", "--poll", "0.01", "--lease", "60")


def keys(n: int) -> list[str]:
    """Item keys: every third ends in b (fails once), every fifth in c (REVIEW)."""
    return [f"k{i:03d}" + ("b" if i % 3 == 1 else "c" if i % 5 == 2 else "") for i in range(n)]


def answer(ask: object) -> str:
    from tests.kit.batchkit import FEEDBACK

    user = getattr(ask, "user", "")
    if FEEDBACK in user:
        return "good"
    return "bad" if "b." in user else "meh" if "c." in user else "good"


class Runs:
    """The loop processes of one protocol, with what killed each."""

    def __init__(self, provider: str, ledger: Path, rng: random.Random) -> None:
        from tests.kit.batchserver import BatchServer, FakeProvider

        self.provider, self.ledger, self.rng = provider, ledger, rng
        self.server = BatchServer(FakeProvider(answer))  # type: ignore[arg-type]
        self.kills: Counter[str] = Counter()
        self.runs = 0

    def start(self, crash: str | None, *, capped: bool = True) -> subprocess.Popen[bytes]:
        from tests.kit.batchkit import loop_command

        cap = ("--max-turns", str(self.rng.randint(3, 12))) if capped else ()
        argv, env = loop_command(self.server, self.provider, self.ledger, crash, *OPTIONS, *cap)
        env = {**env, "PYTHONPATH": f"{REPO / 'src'}:{REPO}"}
        self.runs += 1
        return subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)  # fmt: skip

    def round(self) -> None:
        """One or two runs at once, each killed one way or left to finish."""
        plan = self.rng.choice(["crash", "crash", "timer", "timer", "provider", "none"])
        count = self.rng.choice([1, 2])
        if plan == "provider":
            self._at_the_provider(count)
            return
        procs, timers = [], []
        for _ in range(count):
            crash = None
            if plan == "crash":
                step = self.rng.choice(STEPS[self.provider])
                crash = f"{step}:{self.rng.randint(1, 3)}"
            procs.append((self.start(crash), crash))
            if plan == "timer":
                timers.append(time.monotonic() + self.rng.uniform(0.3, 3.0))
        for n, (proc, crash) in enumerate(procs):
            deadline = timers[n] if timers else time.monotonic() + 120
            while proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.01)
            if proc.poll() is None and timers:
                proc.send_signal(signal.SIGKILL)
            proc.wait(120)
            if proc.returncode == -signal.SIGKILL:
                how = f"crash point {crash.split(':')[0]}" if crash else "timer"
                self.kills[how] += 1

    def _at_the_provider(self, count: int) -> None:
        fake = self.server.fake
        made = len(fake.batches)
        fake.stall = threading.Event()
        procs = [self.start(None) for _ in range(count)]
        deadline = time.monotonic() + 30
        while len(fake.batches) == made and any(p.poll() is None for p in procs):
            if time.monotonic() > deadline:
                break
            time.sleep(0.005)
        time.sleep(self.rng.uniform(0.0, 0.3))  # the other run may make its batch too
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
        fake.stall.set()
        fake.stall = None
        for proc in procs:
            proc.wait(120)
            if proc.returncode == -signal.SIGKILL:
                self.kills["as the provider made a batch"] += 1


def remaining(ledger: Path) -> int:
    from reins import SQLiteStore

    with SQLiteStore.open(ledger) as led:
        return led.stats().remaining


def one_protocol(provider: str, items: int, kills: int, seed: int) -> dict[str, object]:
    from tests.kit.batchkit import item_turns
    from tests.kit.loopkit import make_ledger

    from reins import SQLiteStore
    from reins.store.walk import iter_items

    with tempfile.TemporaryDirectory() as tmp:
        ledger = make_ledger(Path(tmp) / "crash.reins.db", keys(items))
        runs = Runs(provider, ledger, random.Random(seed))
        started = time.monotonic()
        try:
            while sum(runs.kills.values()) < kills:
                if remaining(ledger) == 0:
                    done = sum(runs.kills.values())
                    raise SystemExit(f"{provider}: no item left after {done} kills: more --items")
                runs.round()
            finals = 0
            while remaining(ledger) and finals < 20:
                finals += 1
                runs.start(None, capped=False).wait(300)
            billed = item_turns(runs.server.fake.requested())
        finally:
            runs.server.close()
        with SQLiteStore.open(ledger) as led:
            turns = {(i.key, a.turn) for i in iter_items(led) for a in led.snapshot(i.key)[1]}
            stats, problems = led.stats(), led.check()
            open_jobs = len(led.jobs())
    return {
        "provider": provider,
        "kills": dict(runs.kills),
        "runs": runs.runs,
        "seconds": time.monotonic() - started,
        "requests": sum(billed.values()),
        "item_turns": len(billed),
        "twice": sum(1 for n in billed.values() if n > 1),
        "extra": sum(n - 1 for n in billed.values() if n > 1),
        "unrecorded": len(set(billed) - turns),
        "turns": stats.attempts,
        "remaining": stats.remaining,
        "leased": stats.leased,
        "open_jobs": open_jobs,
        "check": problems,
    }


def report(results: list[dict[str, object]], seed: int, items: int) -> str:
    load = os.getloadavg()
    lines = [
        "# Batch rounds under SIGKILL at random steps (`bench_batch_crash.py`, issue 29)",
        "",
        f"Machine: {cpu_model()}, {os.cpu_count()} CPUs, Python {sys.version.split()[0]}; load "
        f"average {load[0]:.1f} (1 min), {load[1]:.1f} (5 min) at the end. {items} items per "
        f"protocol, `--round-size 5`, one or two runs at once; seed {seed}.",
        "",
        "| protocol | SIGKILLs | runs | requests at the provider | item+turns | sent twice "
        "| never recorded | turns recorded | left | `ledger check` |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in results:
        kills = r["kills"]
        assert isinstance(kills, dict)
        check = "sound" if not r["check"] else f"{r['check']}"
        lines.append(
            f"| {r['provider']} | {sum(kills.values())} | {r['runs']} | {r['requests']} | "
            f"{r['item_turns']} | **{r['twice']}** | {r['unrecorded']} | {r['turns']} | "
            f"{r['remaining']} TODO, {r['leased']} leased, {r['open_jobs']} jobs open | {check} |"
        )
    lines.append("")
    for r in results:
        kills = r["kills"]
        assert isinstance(kills, dict)
        how = ", ".join(f"{n} {k}" for k, n in sorted(kills.items()))
        lines.append(f"- {r['provider']}: {how}; {float(r['seconds']):.0f} s")  # type: ignore[arg-type]
    return "\n".join([*lines, ""])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="8 kills per protocol")
    parser.add_argument("--kills", type=int, default=30)
    parser.add_argument("--items", type=int, default=400)
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--out", default=str(HERE / "BATCH_CRASH.md"))
    args = parser.parse_args()
    kills = 8 if args.quick else args.kills
    results = []
    for n, provider in enumerate(("openai", "anthropic")):
        results.append(one_protocol(provider, args.items, kills, args.seed + n))
        print(results[-1], flush=True)
    text = report(results, args.seed, args.items)
    Path(args.out).write_text(text, encoding="utf-8")
    print(text)
    if any(r["twice"] for r in results):
        raise SystemExit("bench_batch_crash: a request was sent twice for one item and turn")


if __name__ == "__main__":
    main()
