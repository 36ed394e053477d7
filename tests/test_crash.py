"""SIGKILL at random moments while submitting: the ledger opens, holds, and exports once."""

from __future__ import annotations

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
from reins.store.export import export
from reins.store.walk import iter_items
from reins.turn import submit
from tests.kit import TINY

pytestmark = pytest.mark.slow

ITEMS = 400
WORKER = """
import random, sys
from reins import SQLiteStore
from reins.turn import submit
from tests.kit import TINY
path, results, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = random.Random(seed)
with SQLiteStore.open(path) as led:
    while True:
        lease = led.lease("crashy", ttl=600)
        if lease is None:
            break
        answer = rng.choice(["good", "bad", "bad", "meh", "bad meh"])
        submit(led, TINY, lease.item.key, answer, driver="crashy", results=results)
"""


def check_invariants(path: Path) -> None:
    with SQLiteStore.open(path) as led:
        items = list(iter_items(led))
        counts = Counter(i.state for i in items)
        stats = led.stats()
        assert stats.counts == {s: counts.get(s, 0) for s in State}
        assert stats.tries == dict(Counter(i.tries for i in items))
        for item in items:
            log = led.snapshot(item.key)[1]
            assert item.turns == len(log)
            assert [a.turn for a in log] == list(range(1, len(log) + 1))
            assert item.tries == sum(1 for a in log if a.outcome == "FAIL")
            assert item.tries <= 3
            if log:
                assert log[-1].state_after is item.state
            # Nothing was recorded after a lock.
            assert all(not a.state_after.terminal for a in log[:-1])
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()


def test_killed_submitters_leave_a_sound_ledger_and_exactly_once_export(tmp_path: Path) -> None:
    path = tmp_path / "crash.db"
    results = tmp_path / "results.jsonl"
    with SQLiteStore.open(path, create=True) as led:
        led.add((f"k{i}", {"word": str(i)}) for i in range(ITEMS))
    rng = random.Random(20261129)
    kills = 0
    for round_ in range(200):
        proc = subprocess.Popen(
            [sys.executable, "-c", WORKER, str(path), str(results), str(round_)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        time.sleep(rng.uniform(0.1, 0.45))
        if proc.poll() is None and round_ < 25:  # then restart until done, undisturbed
            proc.send_signal(signal.SIGKILL)
            kills += 1
        _, err = proc.communicate(timeout=120)
        assert proc.returncode in (0, -signal.SIGKILL), err.decode()
        check_invariants(path)
        with SQLiteStore.open(path) as led:
            led.release_all("crashy")  # a killed driver's lease would otherwise wait out its ttl
            if led.stats().remaining == 0:
                break
    assert kills >= 3, "the test never interrupted a submitter"
    with SQLiteStore.open(path) as led:
        assert led.stats().remaining == 0
        export(led, results)
        terminal = {i.key for i in iter_items(led) if i.state.terminal}
    lines = results.read_text().splitlines()
    exported = Counter(json.loads(line)["key"] for line in lines)  # no torn line either
    assert set(exported) == terminal and max(exported.values()) == 1


REOPENER = """
import os, signal, sys
from reins import SQLiteStore
from reins.store.export import export
from reins.store.walk import iter_items
from reins.turn.lane import reopen
from tests.kit import TINY
path, results, at, when = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
calls = 0
real_write, real_fsync = os.write, os.fsync

def write(fd, data):
    global calls
    calls += 1
    if when == "mid-write" and calls == at:  # half a batch reaches the file, then death
        real_write(fd, bytes(data)[: len(data) // 2])
        os.kill(os.getpid(), signal.SIGKILL)
    return real_write(fd, data)

def fsync(fd):
    real_fsync(fd)
    if when == "before-finish" and calls == at:  # the batch is on disk, never finished
        os.kill(os.getpid(), signal.SIGKILL)

os.write, os.fsync = write, fsync
with SQLiteStore.open(path) as led:
    for item in list(iter_items(led)):
        if item.round == 1:
            reopen(led, TINY, item.key, reason="crash test", by="pat")
            export(led, results)
"""


def test_killed_reopeners_withdraw_each_exported_lock_exactly_once(tmp_path: Path) -> None:
    """A person's reopens, each followed by an export, killed mid-write or before a batch is
    finished: every lock in the file is withdrawn by exactly one TODO record after it."""
    path, results = tmp_path / "reopen.db", tmp_path / "results.jsonl"
    with SQLiteStore.open(path, create=True) as led:
        led.add((f"k{i}", {"word": str(i)}) for i in range(ITEMS))
        for i in range(ITEMS):
            submit(led, TINY, f"k{i}", "good", driver="t", results=results)
    rng = random.Random(20261130)
    kills = 0
    for round_ in range(40):
        at, when = rng.randint(1, 30), rng.choice(["mid-write", "before-finish"])
        if round_ >= 20:
            when = "never"  # then until done, undisturbed
        proc = subprocess.run(
            [sys.executable, "-c", REOPENER, str(path), str(results), str(at), when],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=120,
        )
        assert proc.returncode in (0, -signal.SIGKILL), proc.stderr.decode()
        kills += proc.returncode == -signal.SIGKILL
        with SQLiteStore.open(path) as led:
            assert led.check() == []
            if all(i.round == 2 for i in iter_items(led)):
                break
    assert kills >= 10, "the test seldom interrupted a reopener"
    with SQLiteStore.open(path) as led:
        export(led, results)
        assert all((i.state, i.round) == (State.TODO, 2) for i in iter_items(led))
        assert led.exported_count() == 0 and led.open_export_paths() == []
    records = [json.loads(line) for line in results.read_text().splitlines()]  # none torn
    written = Counter((r["key"], r["state"], r["round"]) for r in records)
    assert written == Counter(
        {(f"k{i}", s, n): 1 for i in range(ITEMS) for s, n in (("PASS", 1), ("TODO", 2))}
    )
    last = {r["key"]: r["state"] for r in records}
    assert set(last.values()) == {"TODO"}
