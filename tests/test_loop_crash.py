"""Loops killed with SIGKILL at random moments, restarted until done: every invariant holds.

Two loop processes share one ledger; each round kills one or both at a random moment (before,
during or after a turn is generated, judged, recorded or exported), and new ones start. When
no TODO item is left, the ledger is checked against every invariant of DESIGN.md, and the
results file must hold every locked item exactly once.
"""

from __future__ import annotations

import dataclasses
import json
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from reins import SQLiteStore, State
from reins.gate import Verdict, render
from reins.store import AttemptKind
from reins.store.export import export
from reins.store.walk import iter_items
from reins.turn import JudgeFailure, call_seed, choose, compose, judge
from tests.kit import ESCALATING
from tests.kit.loopkit import make_ledger

pytestmark = pytest.mark.slow

ITEMS = 300
WORKER = """
import sys
from pathlib import Path
from reins import SQLiteStore
from reins.loop import LoopOptions, TextGenerator, run
from reins.testing import FakeBackend
from tests.kit import ESCALATING

path, results = sys.argv[1], sys.argv[2]
answers = ["good", "bad", "meh", "bad", "explode", "good", "skip", "bad"]  # explode: judge error
weak = FakeBackend(
    lambda c: answers[c.seed % len(answers)],
    name="weak",
    latency=lambda c: (c.seed % 7) * 0.01,
    failure_rate=0.15,
    rng_seed=1,
)
strong = FakeBackend(lambda c: ["good", "meh", "bad"][c.seed % 3], name="strong", latency=0.003)
options = LoopOptions(
    concurrency=3, breaker=None, judge_breaker=None, lease_ttl=0.6, heartbeat=0.15,
    error_backoff=0.0, results=results, export_every=0.05,
)
with SQLiteStore.open(path) as led:
    weak, strong = TextGenerator(weak), TextGenerator(strong)
    run(led, ESCALATING, weak, strong=strong, options=options, handle_signals=False)
"""


def start(path: Path, results: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", WORKER, str(path), str(results)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def remaining(path: Path) -> int:
    with SQLiteStore.open(path) as led:
        return led.stats().remaining


def test_sigkilled_loops_restarted_until_done_keep_every_invariant(tmp_path: Path) -> None:
    path = make_ledger(tmp_path / "crash.reins.db", [f"k{i:03d}" for i in range(ITEMS)])
    results = tmp_path / "results.jsonl"
    rng = random.Random(2026)
    seen = [remaining(path)]
    kills = rounds = 0
    procs = [start(path, results), start(path, results)]
    deadline = time.monotonic() + 90
    while seen[-1] > 0:
        assert time.monotonic() < deadline, f"no progress: remaining {seen[-5:]}"
        rounds += 1
        time.sleep(rng.uniform(0.15, 0.9))
        for i, proc in enumerate(procs):
            if proc.poll() is None and rounds <= 40 and rng.random() < 0.7:
                proc.kill()
                proc.wait()
                kills += 1
            if proc.poll() is not None:
                stderr = proc.stderr.read().decode() if proc.stderr else ""
                assert proc.returncode in (0, -signal.SIGKILL), stderr
                if proc.stderr:
                    proc.stderr.close()
                procs[i] = start(path, results)
        seen.append(remaining(path))
    for proc in procs:
        proc.kill()
        proc.wait()
        if proc.stderr:
            proc.stderr.close()
    print(f"rounds {rounds}, kills {kills}, remaining {seen}")
    assert kills >= 5, "the test killed too few loops to mean anything"
    assert seen == sorted(seen, reverse=True), "remaining work grew"  # invariant 3
    with SQLiteStore.open(path) as led:
        export(led, results)  # finishes a batch a killed loop left open
    check_ledger(path)
    check_export_exactly_once(path, results)


def check_ledger(path: Path) -> None:
    quest = ESCALATING
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    with SQLiteStore.open(path) as led:
        items = list(iter_items(led))
        stats = led.stats()
        assert stats.counts == {s: Counter(i.state for i in items).get(s, 0) for s in State}
        assert stats.remaining == 0 and stats.leased == 0
        kinds: Counter[AttemptKind] = Counter()
        for item in items:
            log = led.snapshot(item.key)[1]
            # 4: a turn exists iff recorded: turns 1..n, the item agrees with its last attempt.
            assert [a.turn for a in log] == list(range(1, item.turns + 1))
            assert log[-1].state_after is item.state and log[-1].tries_after == item.tries
            # 2: terminal is final: nothing recorded after a lock.
            assert not any(a.state_after.terminal for a in log[:-1])
            tries = 0
            for n, a in enumerate(log):
                kinds[a.kind] += 1
                before = dataclasses.replace(item, state=State.TODO, tries=tries, turns=n)
                # 5: the prompt each turn was composed from is the log before it.
                assert a.prompt_digest == compose(quest, before, log[:n]).digest()
                assert a.notes.seed == call_seed(item.key, a.turn)
                # 7: the backend was chosen from the log on every turn.
                backend, cause = choose(log[:n], quest.escalate_on, "weak", "strong")
                assert a.usage.backend == backend and a.notes.escalated_by == cause
                if a.kind is AttemptKind.GENERATION_ERROR:
                    # 6: no try used, nothing locked.
                    assert a.tries_after == tries and a.state_after is State.TODO
                elif a.kind is AttemptKind.JUDGE_ERROR:
                    # 10: no try used, nothing locked; the same submission fails the same way.
                    assert a.tries_after == tries and a.state_after is State.TODO
                    failure, _ = judge(quest, before, a.submission or "")
                    assert isinstance(failure, JudgeFailure) and a.error == failure.error
                    assert a.outcome is None and a.feedback == ""
                else:
                    # 1 and 10: the same submission through the same gate, the same verdict;
                    # 8: the recorded text is that verdict as submit prints it.
                    verdict, _ = judge(quest, before, a.submission or "")
                    assert isinstance(verdict, Verdict)
                    assert a.outcome == verdict.outcome.value
                    assert a.root_cause == verdict.root_cause
                    assert a.facts == verdict.facts
                    text = render(
                        item.key, verdict, state=a.state_after, tries=a.tries_after, max_tries=3
                    )
                    assert a.feedback == text
                    assert (a.state_after is State.PASS) == (a.outcome == "PASS")
                tries = a.tries_after
            assert item.tries == sum(a.outcome == "FAIL" for a in log) <= quest.max_tries
    assert kinds[AttemptKind.GENERATION_ERROR] > 0 and kinds[AttemptKind.JUDGED] >= ITEMS
    assert kinds[AttemptKind.JUDGE_ERROR] > 0


def check_export_exactly_once(path: Path, results: Path) -> None:
    records = [json.loads(line) for line in results.read_text().splitlines()]  # no torn line
    keys = Counter(r["key"] for r in records)
    assert set(keys.values()) == {1}, [k for k, n in keys.items() if n > 1]
    with SQLiteStore.open(path) as led:
        terminal = {i.key: i for i in iter_items(led) if i.state.terminal}
    assert set(keys) == set(terminal) and len(terminal) == ITEMS
    for record in records:
        assert record["state"] == terminal[record["key"]].state.value
