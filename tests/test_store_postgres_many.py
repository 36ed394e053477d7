"""Many hosts, one PostgreSQL ledger: 8 loop processes, concurrency 16 each, on 2,000 items.

Each process runs ``reins.loop.run`` on a FakeBackend with 50 ms latency, under its own driver
name, exporting to its own results file. The fake answers an item's first turn wrong and its
second right, so every item takes two turns (4,000 turns in all).

What proves that no item was worked by two at once: every generation runs holding a
PostgreSQL advisory lock on its item's key, taken with ``pg_try_advisory_lock`` on a connection
of the worker's own. A lock already held elsewhere means another slot or process is generating
for the same item at that moment, and is written down as a collision (at once, to a file, so a
killed worker's findings survive it). A killed worker's locks go with its connection. Besides:
without kills every item's log comes from one process; with kills, the [started, recorded]
spans of attempts by different processes never overlap on an item. No lost update: every
item's turn count is its log's length and ``check()`` is clean. Exactly-once export: each
process's results file holds every item once (issue 40: a file gets every lock it lacks).
"""

from __future__ import annotations

import itertools
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from reins import State
from reins.store.export import export
from reins.store.postgres import PostgresStore
from reins.store.walk import iter_items

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

PROCESSES = 8
CONCURRENCY = 16
ITEMS = 2_000
LATENCY = 0.05

WORKER = """
import sys
import psycopg
from reins.loop import LoopOptions, TextGenerator, run
from reins.store.postgres import PostgresStore
from reins.testing import FakeBackend
from tests.kit import TINY

url, driver, results, collisions, calls, ttl = sys.argv[1:7]
probe = psycopg.connect(url.partition("?")[0], autocommit=True)
log = open(collisions, "a")


class Probed(FakeBackend):
    async def complete(self, prompt, *, seed, timeout):
        got = probe.execute("SELECT pg_try_advisory_lock(hashtext(%s))", (prompt.key,))
        if not got.fetchone()[0]:
            log.write(f"{driver} {prompt.key} {prompt.turn}\\n")
            log.flush()
        try:
            return await super().complete(prompt, seed=seed, timeout=timeout)
        finally:
            probe.execute("SELECT pg_advisory_unlock(hashtext(%s))", (prompt.key,))


fake = Probed(lambda c: "bad" if c.turn == 1 else "good", name="fake", latency=LATENCY)
options = LoopOptions(
    concurrency=CONCURRENCY, driver=driver, lease_ttl=float(ttl), heartbeat=float(ttl) / 4,
    error_backoff=0.0, results=results, export_every=0.5, breaker=None,
)
with PostgresStore.open(url) as store:
    run(store, TINY, TextGenerator(fake), options=options, handle_signals=False)
with open(calls, "w") as f:
    f.write("\\n".join(sorted({c.key for c in fake.calls})))
""".replace("LATENCY", repr(LATENCY)).replace("CONCURRENCY", str(CONCURRENCY))


class Fleet:
    """The worker processes of one run, each with its driver name and files."""

    def __init__(self, url: str, folder: Path, ttl: float) -> None:
        self.url, self.folder, self.ttl = url, folder, ttl
        self.collisions = folder / "collisions.txt"
        self.collisions.touch()
        self.started = 0
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def start(self) -> str:
        driver = f"p{self.started}"
        self.started += 1
        argv = [
            sys.executable, "-c", WORKER, self.url, driver,
            str(self.folder / f"{driver}.jsonl"), str(self.collisions),
            str(self.folder / f"{driver}.calls"), str(self.ttl),
        ]  # fmt: skip
        self.procs[driver] = subprocess.Popen(
            argv,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        return driver

    def reap(self, driver: str) -> int:
        proc = self.procs[driver]
        _, err = proc.communicate()
        assert proc.returncode in (0, -signal.SIGKILL), err.decode()[-3000:]
        return proc.returncode

    def results(self) -> list[Path]:
        return sorted(self.folder.glob("p*.jsonl"))


def seeded(postgres_url: str) -> str:
    url = f"{postgres_url}?schema=many_{os.urandom(4).hex()}"
    with PostgresStore.open(url, create=True) as store:
        assert store.add((f"k{i:04d}", {"word": f"k{i:04d}"}) for i in range(ITEMS)) == (ITEMS, 0)
    return url


def check_ledger(url: str, fleet: Fleet, *, killed: bool) -> dict[str, set[str]]:
    """Every invariant of the run; returns the drivers that recorded each item's turns."""
    assert fleet.collisions.read_text() == "", "two workers generated for one item at once"
    with PostgresStore.open(url) as store:
        for results in fleet.results():
            export(store, results)  # finishes any batch a killed worker left open
        assert store.check() == []
        stats = store.stats()
        assert stats.remaining == 0 and stats.total == ITEMS and stats.leased == 0
        drivers: dict[str, set[str]] = {}
        turns = 0
        for item in iter_items(store):
            log = store.snapshot(item.key)[1]
            assert item.state is State.PASS and len(log) == item.turns == 2, item
            assert [a.turn for a in log] == [1, 2] and log[0].outcome == "FAIL"
            turns += item.turns
            drivers[item.key] = {a.driver for a in log}
            if killed:
                for a, b in itertools.pairwise(log):
                    if a.driver != b.driver:  # handed over: the second started after the first
                        assert b.started_at is not None and a.recorded_at <= b.started_at
        assert stats.attempts == turns == 2 * ITEMS
        for path in fleet.results():  # each worker's file holds every lock, once
            keys = Counter(json.loads(line)["key"] for line in path.read_text().splitlines())
            assert len(keys) == ITEMS and set(keys.values()) == {1}, (path, keys.most_common(3))
        assert store.exported_count() == ITEMS
    return drivers


def test_eight_loop_processes_share_one_ledger(postgres_url: str, tmp_path: Path) -> None:
    url = seeded(postgres_url)
    fleet = Fleet(url, tmp_path, ttl=30.0)
    started = time.monotonic()
    for _ in range(PROCESSES):
        fleet.start()
    for driver in list(fleet.procs):
        assert fleet.reap(driver) == 0
    elapsed = time.monotonic() - started
    drivers = check_ledger(url, fleet, killed=False)
    # No item was worked by two processes: its log has one driver, and only that process
    # ever asked its backend about it.
    assert all(len(d) == 1 for d in drivers.values())
    generated: Counter[str] = Counter()
    for driver in fleet.procs:
        keys = set((tmp_path / f"{driver}.calls").read_text().split())
        assert keys == {k for k, d in drivers.items() if d == {driver}}
        generated.update(keys)
    assert set(generated.values()) == {1} and len(generated) == ITEMS
    busy = sum(1 for k in fleet.procs if (tmp_path / f"{k}.calls").read_text())
    print(f"{2 * ITEMS} turns by {busy} of {PROCESSES} processes in {elapsed:.1f}s")
    assert busy >= 2, "the work was not shared"


def test_sigkilled_processes_restarted_until_done_keep_every_invariant(
    postgres_url: str, tmp_path: Path
) -> None:
    url = seeded(postgres_url)
    fleet = Fleet(url, tmp_path, ttl=4.0)
    rng = random.Random(8)
    live = [fleet.start() for _ in range(PROCESSES)]
    kills = rounds = 0
    remaining = [ITEMS]
    deadline = time.monotonic() + 240
    with PostgresStore.open(url) as store:
        while remaining[-1] > 0:
            assert time.monotonic() < deadline, f"no progress: remaining {remaining[-5:]}"
            rounds += 1
            time.sleep(rng.uniform(0.3, 1.2))
            for i, driver in enumerate(live):
                proc = fleet.procs[driver]
                if proc.poll() is None and rounds <= 12 and rng.random() < 0.3:
                    proc.kill()
                    kills += 1
                if proc.poll() is not None:
                    fleet.reap(driver)
                    live[i] = fleet.start()
            remaining.append(store.stats().remaining)
    for driver in live:
        fleet.procs[driver].kill()
        fleet.reap(driver)
    print(f"rounds {rounds}, kills {kills}, workers {fleet.started}, remaining {remaining}")
    assert kills >= 5, "too few kills to mean anything"
    assert remaining == sorted(remaining, reverse=True), "remaining work grew"
    check_ledger(url, fleet, killed=True)
