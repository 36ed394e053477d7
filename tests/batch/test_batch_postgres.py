"""`reins loop --batch` on a PostgreSQL ledger: a round, and a round killed mid-collection."""

from __future__ import annotations

import signal

import pytest

from reins.store.jobs import JobState
from reins.store.postgres import PostgresStore
from reins.testing.postgres import PostgresHarness
from tests.kit.batchkit import run_loop
from tests.kit.batchserver import BatchServer

pytestmark = pytest.mark.postgres


@pytest.mark.parametrize("crash", [None, "result:2", "created"])
def test_a_round_on_postgresql_is_recorded_once_even_when_killed(
    server: BatchServer, postgres_harness: PostgresHarness, crash: str | None
) -> None:
    location = postgres_harness.create()
    with PostgresStore.open(location) as led:
        led.add((k, {"word": k}) for k in "abc")
    if crash is not None:
        killed = run_loop(server, "openai", location, crash)
        assert killed.returncode == -signal.SIGKILL, killed.stderr
    done = run_loop(server, "openai", location, None)
    assert done.returncode == 0, done.stdout + done.stderr
    with PostgresStore.open(location) as led:
        logs = {k: [a.outcome for a in led.snapshot(k)[1]] for k in "abc"}
        assert logs == {"a": ["PASS"], "b": ["FAIL", "PASS"], "c": ["REVIEW"]}
        jobs = led.jobs(open_only=False)
        assert [(j.state, j.requests) for j in jobs] == [
            (JobState.COLLECTED, 3),
            (JobState.COLLECTED, 1),
        ]
        stats = led.stats()
        assert stats.leased == 0 and stats.kinds == {"judged": 4} and led.check() == []
    assert server.fake.calls("POST", r"^/v1/batches$") == 2
