"""What goes wrong with a batch: it expires, fails validation, is refused at creation, or its
items are held by a batch job of another backend."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from click.testing import Result

from reins import SQLiteStore, State
from reins.errors import Exit
from reins.store.jobs import JobDraft, JobState
from reins.store.model import AttemptKind
from tests.kit.batchkit import batch_loop
from tests.kit.batchserver import BatchServer
from tests.kit.loopkit import make_ledger


@pytest.fixture
def ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for var in ("REINS_QUEST", "REINS_LEDGER", "REINS_MODEL"):
        monkeypatch.delenv(var, raising=False)
    return make_ledger(tmp_path / "tiny.reins.db", [f"k{i}" for i in range(4)])


def run(server: BatchServer, provider: str, ledger: Path, *args: str) -> Result:
    return batch_loop(server, provider, *args, ledger=ledger)


def expire_the_first_batch(server: BatchServer, answered: int) -> threading.Thread:
    """Once the loop's first batch exists, its window runs out with ``answered`` done."""
    fake = server.fake

    def watch() -> None:
        deadline = time.monotonic() + 20
        while not fake.batches and time.monotonic() < deadline:
            time.sleep(0.005)
        with fake.lock:
            fake.expire(next(iter(fake.batches)), answered=answered)
            fake.auto = True

    fake.auto = False
    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def test_a_batch_that_expires_records_what_was_answered_and_the_rest_as_errors(
    server: BatchServer, provider: str, ledger: Path
) -> None:
    thread = expire_the_first_batch(server, answered=1)
    out = run(server, provider, ledger)
    thread.join()
    assert out.exit_code == 0, out.output
    with SQLiteStore.open(ledger) as led:
        first = [led.snapshot(f"k{i}")[1][0] for i in range(4)]
        kinds = sorted(a.kind.value for a in first)
        assert kinds == ["generation_error"] * 3 + ["judged"]
        for a in first:
            if a.kind is AttemptKind.GENERATION_ERROR:
                assert "expired" in (a.error or "") and a.usage.batch is False
        assert all(led.get(f"k{i}").state is State.PASS for i in range(4))
        assert led.get("k0").tries == 0  # an expired request used no try
        jobs = led.jobs(open_only=False)
        assert jobs[0].state is JobState.COLLECTED and jobs[0].note
        assert jobs[0].note.startswith(("expired: 4 recorded", "ended: 4 recorded"))


def test_a_batch_that_fails_validation_is_a_generation_error_and_trips_the_breaker(
    server: BatchServer, ledger: Path
) -> None:
    server.fake.invalid = "Line 1: model 'gpt-test' is not available in the Batch API"
    out = run(server, "openai", ledger, "--breaker", "2")
    assert out.exit_code == Exit.BREAKER, out.output
    with SQLiteStore.open(ledger) as led:
        errors = [a for i in range(4) for a in led.snapshot(f"k{i}")[1]]
        assert len(errors) == 2 and all(a.kind is AttemptKind.GENERATION_ERROR for a in errors)
        assert "not available in the Batch API" in (errors[0].error or "")
        assert "ended (failed) with no result" in (errors[0].error or "")
        assert led.stats().leased == 0 and led.stats().tries == {0: 4}


def test_a_batch_refused_when_made_is_a_generation_error_and_nothing_stays_leased(
    server: BatchServer, provider: str, ledger: Path
) -> None:
    create = r"^/v1/batches$" if provider == "openai" else r"^/v1/messages/batches$"
    server.fake.fault("POST", create, 400, times=10)
    out = run(server, provider, ledger, "--breaker", "2")
    assert out.exit_code == Exit.BREAKER, out.output
    assert "injected fault" in out.stderr
    with SQLiteStore.open(ledger) as led:
        assert led.stats().kinds == {"generation_error": 2} and led.stats().leased == 0
        [job] = led.jobs(open_only=False)
        assert job.state is JobState.DISCARDED and "refused" in (job.note or "")
    assert server.fake.calls("POST", create) == 1  # a refusal is not retried


def test_items_held_by_a_job_of_another_backend_are_left_alone_and_exit_3(
    server: BatchServer, ledger: Path
) -> None:
    with SQLiteStore.open(ledger) as led:
        opened = led.open_job(JobDraft("anthropic", "claude-x", "loop", "gone"), limit=4, hold=0)
        assert opened is not None
        led.fill_job(opened[0].id, [])
    out = run(server, "openai", ledger)
    assert out.exit_code == Exit.NOTHING_LEFT, out.output
    assert "batch job 1 was sent to anthropic:claude-x" in out.stderr
    assert "--model anthropic:claude-x" in out.stderr
    with SQLiteStore.open(ledger) as led:
        assert led.stats().leased == 4 and led.stats().attempts == 0
    assert server.fake.log == []  # nothing was sent
