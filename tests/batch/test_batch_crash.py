"""`reins loop --batch` killed with SIGKILL at each step of a round, then run again: the same
batch is carried on from the ledger, nothing in flight is sent again, no result is recorded
twice, and the ledger holds every invariant.

The process kills itself at a named step (``REINS_CRASH_AT``, reins.loop.crashpoint), so each
crash point is hit exactly, not by a timer; the fake provider runs in the test process and
outlives the killed loops, as a provider would.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from reins import SQLiteStore, State
from reins.store.jobs import JobState
from reins.store.walk import iter_items
from tests.kit.batchkit import item_turns, run_loop, start_loop
from tests.kit.batchserver import BatchServer
from tests.kit.loopkit import make_ledger

pytestmark = pytest.mark.slow

# Each provider's steps, in the order a round takes them.
STEPS = {
    "openai": ["leased", "composed", "uploaded", "upload-recorded", "created", "sent",
               "downloaded", "result:2", "collected"],
    "anthropic": ["leased", "composed", "created", "sent", "downloaded", "result:2",
                  "collected"],
}  # fmt: skip
CASES = [(p, step) for p, steps in STEPS.items() for step in steps]


def uploads_and_batches(server: BatchServer, provider: str) -> tuple[int, int]:
    fake = server.fake
    if provider == "openai":
        return fake.calls("POST", r"^/v1/files$"), fake.calls("POST", r"^/v1/batches$")
    return 0, fake.calls("POST", r"^/v1/messages/batches$")


@pytest.mark.parametrize(("provider", "step"), CASES)
def test_a_round_killed_at_each_step_is_carried_on_by_a_rerun(
    server: BatchServer, provider: str, step: str, tmp_path: Path
) -> None:
    ledger = make_ledger(tmp_path / "tiny.reins.db")
    killed = run_loop(server, provider, ledger, step)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    again = run_loop(server, provider, ledger, None)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "loop done: every item is locked" in again.stderr
    with SQLiteStore.open(ledger) as led:
        logs = {i.key: [a.outcome for a in led.snapshot(i.key)[1]] for i in iter_items(led)}
        # b failed once and passed on the next round; nobody's result was recorded twice.
        assert logs == {"a": ["PASS"], "b": ["FAIL", "PASS"], "c": ["REVIEW"]}, step
        assert led.get("b").state is State.PASS and led.stats().leased == 0
        jobs = led.jobs(open_only=False)
        assert all(j.state.final for j in jobs), jobs
        sent = [j for j in jobs if j.state is JobState.COLLECTED]
        assert [j.requests for j in sent] == [3, 1], jobs
        # A job killed before its requests were recorded is discarded, and only that one.
        assert len(jobs) == (3 if step == "leased" else 2), jobs
        assert led.check() == []
    uploads, batches = uploads_and_batches(server, provider)
    assert batches == 2, step  # one provider batch a round: nothing in flight was sent again
    if provider == "openai":
        assert uploads == 2, step  # an upload whose batch was never made is found, not redone
    assert len({a.custom_id for a in server.fake.asked}) == len(server.fake.asked) == 4
    billed = item_turns(server.fake.requested())  # what the provider holds, and bills
    assert sum(billed.values()) == len(billed) == 4, billed


def until(condition: Callable[[], bool], seconds: float = 60.0) -> None:
    """Poll ``condition`` until it holds (a deadline, so that a broken run fails instead of
    hanging; nothing is asserted about the time it took)."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the run never got that far"
        time.sleep(0.02)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_batches_two_killed_runs_made_but_never_recorded_are_each_used_for_their_own_job(
    server: BatchServer, provider: str, tmp_path: Path
) -> None:
    """Issue 29's reproduction: run 1 is killed as the provider makes its batch (before it
    answers), run 2 (started meanwhile, it takes the other 6 items) likewise, run 3 finds both.
    Anthropic keeps nothing on a batch, so both are candidates of each job by size and time;
    each is used for the job its results' custom ids name, and nothing is sent again."""
    ledger = make_ledger(tmp_path / "tiny.reins.db", [f"k{i:02d}" for i in range(12)])
    fake = server.fake
    fake.stall = threading.Event()  # a batch is made, its answer held back
    args = ("--round-size", "6", "--lease", "5")
    runs = []
    try:
        for made in (1, 2):
            runs.append(start_loop(server, provider, ledger, *args))
            until(lambda: len(fake.batches) == made)  # noqa: B023 (used at once)
    finally:
        for run in runs:
            run.send_signal(signal.SIGKILL)
            run.wait()
        fake.stall.set()
    with SQLiteStore.open(ledger) as led:
        assert [j.batch_id for j in led.jobs()] == [None, None]  # composed or uploaded
    again = run_loop(server, provider, ledger, None, *args)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "none of its results is this job's" not in again.stderr
    with SQLiteStore.open(ledger) as led:
        jobs = led.jobs(open_only=False)
        assert [(j.state, j.requests) for j in jobs] == [(JobState.COLLECTED, 6)] * 2, jobs
        assert {j.batch_id for j in jobs} == set(fake.batches)  # each orphan used, once
        stats = led.stats()
        assert stats.remaining == 0 and stats.kinds == {"judged": 12} and led.check() == []
    sent = item_turns(fake.requested())
    assert len(sent) == 12 and set(sent.values()) == {1}, sent  # 12 requests for 12 turns
