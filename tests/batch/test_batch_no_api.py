"""`loop --batch` against an OpenAI-compatible server with no Batch API (llama.cpp, vLLM and the
like answer 404 to ``/v1/files`` and ``/v1/batches``): a job that was never sent holds nothing.

The server is the test kit's fake HTTP server: chat completions answered, everything else 404
with an OpenAI-shaped error body, as llama.cpp's server answers a route it does not serve.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from reins import SQLiteStore
from tests.kit import CHILD_PATH
from tests.kit.batchkit import LOOP
from tests.kit.cli import Cli
from tests.kit.http import FakeServer, Reply, Seen, openai_ok


def no_batch_api(seen: Seen) -> Reply:
    if seen.path.startswith("/v1/chat/completions"):
        return openai_ok()
    return Reply(404, {"error": {"code": 404, "message": "File Not Found", "type": "not_found"}})


@pytest.fixture
def plain(http_server: FakeServer) -> str:
    """The spec of a server that answers chat completions and has no Batch API."""
    http_server.answer = no_batch_api
    return f"openai:m?base_url={http_server.url}/v1&backoff=0.001&max_wait=0.1"


def jobs_and_leases(folder: Path) -> tuple[list[str], int]:
    with SQLiteStore.open(folder / "tiny.reins.db") as led:
        return [j.state.value for j in led.jobs(open_only=False)], led.stats().leased


def test_a_batch_the_server_cannot_take_gives_its_items_back_at_once(
    cli: Cli, plain: str, http_server: FakeServer
) -> None:
    cli("scan")
    out = cli("loop", "--batch", "-m", plain, "--poll", "0.01")
    assert out.exit_code == 1
    assert "Batch job 1 was never sent: it is discarded, its 3 item(s) TODO again" in out.stderr
    assert "stays open" not in out.stderr
    assert jobs_and_leases(cli.folder) == (["discarded"], 0)
    again = cli("loop", "-m", plain, "--no-wait")  # the items are worked at once
    assert again.exit_code == 0, again.output
    assert "every item is locked" in again.stderr


def composed_then_killed(folder: Path, spec: str) -> None:
    """``loop --batch`` in a process of its own, killed once its job's requests are recorded
    (the crash point ``composed``): a job left open that was never sent."""
    env = {**os.environ, "PYTHONPATH": CHILD_PATH, "REINS_CRASH_AT": "composed"}
    argv = [sys.executable, "-c", LOOP, "--quest", "tests.kit:TINY", "loop", "--batch",
            "--model", spec, "--poll", "0.01", "--no-export"]  # fmt: skip
    done = subprocess.run(argv, cwd=folder, env=env, capture_output=True, timeout=120,
                          check=False)  # fmt: skip
    assert done.returncode == -9, done.stderr
    assert jobs_and_leases(folder) == (["composed"], 3)


def test_batch_cancel_discards_a_job_that_was_never_sent(cli: Cli, plain: str) -> None:
    cli("scan")
    composed_then_killed(cli.folder, plain)
    out = cli("batch", "cancel", "-m", plain)
    assert out.exit_code == 0, out.output
    assert "batch job 1  discarded" in out.stdout
    assert jobs_and_leases(cli.folder) == (["discarded"], 0)


def test_a_rerun_gives_back_the_items_of_a_job_it_cannot_send(cli: Cli, plain: str) -> None:
    cli("scan")
    composed_then_killed(cli.folder, plain)
    out = cli("loop", "--batch", "-m", plain, "--poll", "0.01")
    assert out.exit_code == 1
    assert "Batch job 1 was never sent: it is discarded" in out.stderr
    assert jobs_and_leases(cli.folder) == (["discarded"], 0)
