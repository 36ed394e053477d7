"""A planted API key never lands anywhere reins writes or shows.

A quest runs through the ``openai`` backend against a local server that fails now and then and
echoes the request's headers — the key among them — into its error bodies. Afterwards the
ledger file, the export, every log record, stdout, stderr, every recorded error message and the
argument list of every process on the machine are searched for the key.
"""

from __future__ import annotations

import logging
import secrets
import sys
from pathlib import Path

import pytest

from reins.backends import registry
from reins.backends.redact import REDACTED
from reins.loop import LineReporter, LoopOptions, TextGenerator, run
from reins.store.sqlite import SQLiteStore
from reins.store.walk import iter_items
from tests.kit import TINY, FakeServer, Reply
from tests.kit.http import openai_ok

# a name no heuristic takes for a secret: only the redaction of the configured key can help
KEY_ENV = "REINS_PLANTED_CRED"


def leaky(status: int, **headers: str) -> Reply:
    return Reply(status, echo_headers=True, headers=headers)


def test_a_planted_key_appears_nowhere(
    http_server: FakeServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    key = "sk-planted-" + secrets.token_hex(16)
    monkeypatch.setenv(KEY_ENV, key)
    caplog.set_level(logging.DEBUG)
    http_server.add(
        leaky(500),  # item a: retried
        openai_ok("bad"),  # a: FAIL, feedback goes into the next prompt
        leaky(429, **{"Retry-After": "0"}),
        openai_ok("good"),  # a: PASS
        leaky(400),  # b: not retryable: a generation error is recorded
        leaky(503),
        leaky(502),
        leaky(500),  # b: retries used up: another generation error
        openai_ok(f"good, and your key is {key}"),  # b: a server that echoes the key back
    )
    http_server.default = openai_ok("good")

    ledger_path = tmp_path / "tiny.reins.db"
    results = tmp_path / "results.jsonl"
    with SQLiteStore.open(ledger_path, create=True) as ledger:
        ledger.add((s[0], s[1]) for s in TINY.seed([]))
        backend = registry.resolve(
            f"openai:leaky-model?base_url={http_server.url}/v1&key_env={KEY_ENV}&retries=2"
            "&backoff=0.001&max_wait=0.01"
        )
        summary = run(
            ledger,
            TINY,
            TextGenerator(backend),
            options=LoopOptions(results=results, breaker=None, error_backoff=0, timeout=10),
            reporter=LineReporter(sys.stdout, sys.stderr),
            handle_signals=False,
        )
        keys = [item.key for item in iter_items(ledger)]
        attempts = [a for k in keys for a in ledger.snapshot(k)[1]]
    out, err = capfd.readouterr()

    # the run went through every path: the key was sent, echoed, and errors were recorded
    assert summary.remaining == 0 and summary.generation_errors == 2
    assert all(seen.headers["authorization"] == f"Bearer {key}" for seen in http_server.seen)
    errors = [a.error for a in attempts if a.error]
    assert len(errors) == 2 and all(REDACTED in e for e in errors)
    assert any(a.submission and REDACTED in a.submission for a in attempts)

    places = {
        "error messages": "\n".join(errors),
        "submissions": "\n".join(a.submission or "" for a in attempts),
        "logs": caplog.text + "\n".join(str(r.args) for r in caplog.records),
        "stdout": out,
        "stderr": err,
        "backend repr": repr(backend) + repr(vars(backend).get("opts")),
    }
    files = [ledger_path, results, *tmp_path.glob("tiny.reins.db-*")]
    for path in files:
        if path.exists():
            places[str(path)] = path.read_bytes().decode("latin-1")
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            places[str(cmdline)] = cmdline.read_bytes().decode("latin-1")
        except OSError:
            continue
    assert results.read_text().count("\n") == 3  # the export is really there to search
    leaked = [where for where, text in places.items() if key in text]
    assert leaked == []
