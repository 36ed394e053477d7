"""`reins loop --batch` killed with SIGKILL at each step of a round, then run again: the same
batch is carried on from the ledger, nothing in flight is sent again, no result is recorded
twice, and the ledger holds every invariant.

The process kills itself at a named step (``REINS_CRASH_AT``, reins.loop.crashpoint), so each
crash point is hit exactly, not by a timer; the fake provider runs in the test process and
outlives the killed loops, as a provider would.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from reins import SQLiteStore, State
from reins.store.jobs import JobState
from reins.store.walk import iter_items
from tests.kit.batchkit import run_loop, steered
from tests.kit.batchserver import BatchServer, FakeProvider
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


@pytest.fixture
def server() -> Iterator[BatchServer]:
    srv = BatchServer(FakeProvider(steered))
    try:
        yield srv
    finally:
        srv.close()


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
