"""Items another driver holds (an earlier `reins next`, another run, a batch job): the loop
counts only those, never its own in flight, and says who holds which and how to give it back."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from reins import SQLiteStore
from reins.errors import Exit
from reins.loop.waiting import held_by_others
from reins.testing import FakeBackend
from tests.kit import Cli
from tests.kit.loopkit import make_ledger, registered


def test_the_wait_counts_only_other_drivers_and_says_how_to_release(
    tmp_path: Path, cli: Cli
) -> None:
    path = make_ledger(tmp_path / "tiny.reins.db", ["a", "b", "c", "d"])
    assert cli("next", "--driver", "ann").exit_code == 0  # ann holds a for 15 minutes

    def give_back() -> None:  # ann gives it up while the loop waits for it
        time.sleep(1.5)
        with SQLiteStore.open(path) as led:
            assert led.release("a", "ann")

    person = threading.Thread(target=give_back)
    person.start()
    with registered(w=FakeBackend(lambda c: "good", latency=0.8)):
        out = cli("loop", "--model", "fake:w", "-c", "4", "--no-export")
    person.join()
    assert out.exit_code == 0, out.output
    waiting = [line for line in out.stderr.splitlines() if "waiting" in line]
    assert waiting, out.stderr
    # b, c and d are this run's own, in flight: only a is another driver's
    assert waiting[0].startswith(
        "note: waiting for 1 item(s) leased to other drivers, not to this run: 'a' by ann for "
    )
    assert "(give it back: `reins release a --driver ann`)" in waiting[0]
    assert "loop done: every item is locked" in out.stderr


def test_no_wait_names_who_holds_what_and_the_release_command(tmp_path: Path, cli: Cli) -> None:
    path = make_ledger(tmp_path / "tiny.reins.db", ["a", "b", "c"])
    with SQLiteStore.open(path) as led:
        led.lease("ann", ttl=900)
    with registered(w=FakeBackend(lambda c: "good")):
        out = cli("loop", "--model", "fake:w", "--no-wait", "--no-export")
    assert out.exit_code == Exit.NOTHING_LEFT
    assert (
        "loop leased-elsewhere: 1 item(s) left, all leased to other drivers: 'a' by ann for "
        in out.stderr
    )
    assert "`reins release a --driver ann`); run again when they are free" in out.stderr


def test_a_batch_jobs_items_are_cancelled_not_released(tmp_path: Path) -> None:
    path = make_ledger(tmp_path / "tiny.reins.db", ["a", "b", "c", "d", "e"])
    now = time.time()
    with SQLiteStore.open(path) as led:
        for owner in ("batch:3", "ann", "bob's", "mine#0"):
            led.lease(owner, ttl=900, now=now)
        n, said = held_by_others(led, ours=("mine#0",), now=now)
    assert n == 3
    assert "'a' by batch:3 for 15:00 more (a batch job's: `reins batch cancel 3 --model SPEC`)" in (
        said
    )
    assert "`reins release b --driver ann`" in said
    assert """`reins release c --driver 'bob'"'"'s'`""" in said  # quoted for the shell
    assert "'d'" not in said
