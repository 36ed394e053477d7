"""A planted API key, echoed back by a hostile server in every place a reply has, leaves no trace.

Each HTTP backend runs the real loop against a local server that returns the key in the served
model name, the stop reason, the other text fields of a reply, the response headers, error bodies
(with the key straddling the 300-character cut, or already cut by the server itself, leaving only
its head or tail), a 200 reply that is an error, and stream chunks sent to a client that asked for
none. The answer text itself is left clean: an answer is model output, kept as the model wrote it.

Afterwards the ledger file and its -wal, the export, stdout, stderr, the log records, ``reins
log`` and ``reins status --json``, and the messages the backend raises are searched for the key
and for every 8-character window of it: none may appear anywhere.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from reins.backends import registry
from reins.backends.base import Backend
from reins.backends.redact import REDACTED
from reins.errors import BackendError
from reins.loop import (
    JsonReporter,
    LineReporter,
    LoopOptions,
    NullReporter,
    Status,
    TextGenerator,
    run,
)
from reins.loop.events import AsideEvent, Summary, TurnEvent
from reins.store.sqlite import SQLiteStore
from reins.store.walk import iter_items
from reins.values import Prompt
from tests.kit import TINY, Cli, FakeServer, Reply

PROMPT = Prompt(system="You answer in one word.", user="Say good for item a.")
PLAIN_ENV = "REINS_PLANTED_CRED"  # a name no heuristic takes for a secret
FAST = "retries=1&backoff=0.001&max_wait=0.01"
CUT = 300  # where the backends cut a server's error text
WINDOW = 8


def sse(*events: Any) -> str:
    return "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"


@dataclass(frozen=True)
class Wire:
    """How one backend's server answers: a good reply, an empty one, an error in a 200, a stream.

    Each takes the text to leak; ``ok`` also the answer and the served model name.
    """

    name: str
    usual_env: str  # the variable this backend reads, or is pointed at, in the usual setup
    default_env: bool  # whether the backend reads ``usual_env`` without being told
    auth_header: str
    ok: Callable[[str, str, str], Any]
    empty: Callable[[str], Any]
    refused: Callable[[str], Any]
    stream: Callable[[str, str], str]


WIRES = [
    Wire(
        "openai",
        "OPENAI_API_KEY",
        False,
        "authorization",
        ok=lambda answer, model, leak: {
            "id": f"chatcmpl-{leak}",
            "object": "chat.completion",
            "model": model,
            "system_fingerprint": leak,
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": answer,
                        "refusal": leak,
                        "reasoning_content": leak,
                    },
                    "finish_reason": leak,
                    "logprobs": leak,
                }
            ],
            "usage": {"prompt_tokens": 12, "completion_tokens": 1},
        },
        empty=lambda leak: {
            "model": leak,
            "choices": [{"message": {"content": ""}, "finish_reason": leak}],
        },
        refused=lambda leak: {"error": {"message": leak, "type": leak, "code": leak}},
        stream=lambda model, leak: sse(
            {"model": model, "choices": [{"delta": {"content": "go"}, "finish_reason": None}]},
            {"model": model, "choices": [{"delta": {}, "finish_reason": leak}]},
        ),
    ),
    Wire(
        "ollama",
        "OLLAMA_API_KEY",
        False,
        "authorization",
        ok=lambda answer, model, leak: {
            "model": model,
            "created_at": leak,
            "message": {"role": "assistant", "content": answer, "thinking": leak},
            "done": True,
            "done_reason": leak,
            "prompt_eval_count": 12,
            "eval_count": 1,
        },
        empty=lambda leak: {"model": leak, "message": {"content": ""}, "done_reason": leak},
        refused=lambda leak: {"error": leak},
        stream=lambda model, leak: "".join(
            json.dumps(chunk) + "\n"
            for chunk in (
                {"model": model, "message": {"content": "go"}, "done": False},
                {"model": model, "message": {"content": ""}, "done": True, "done_reason": leak},
            )
        ),
    ),
    Wire(
        "gemini",
        "GEMINI_API_KEY",
        True,
        "x-goog-api-key",
        ok=lambda answer, model, leak: {
            "candidates": [
                {
                    "content": {
                        "role": "model",
                        "parts": [{"text": leak, "thought": True}, {"text": answer}],
                    },
                    "finishReason": leak,
                    "finishMessage": leak,
                }
            ],
            "modelVersion": model,
            "responseId": leak,
            "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 1},
        },
        empty=lambda leak: {
            "candidates": [{"content": {"parts": []}, "finishReason": leak}],
            "modelVersion": leak,
        },
        refused=lambda leak: {"promptFeedback": {"blockReason": leak}},
        stream=lambda model, leak: sse(
            {"candidates": [{"content": {"parts": [{"text": "go"}]}}], "modelVersion": model},
            {"candidates": [{"finishReason": leak}], "modelVersion": model},
        ),
    ),
    Wire(
        "anthropic",
        "ANTHROPIC_API_KEY",
        True,
        "x-api-key",
        ok=lambda answer, model, leak: {
            "id": f"msg_{leak}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [
                {"type": "thinking", "thinking": leak, "signature": leak},
                {"type": "text", "text": answer},
            ],
            "stop_reason": leak,
            "stop_sequence": leak,
            "usage": {"input_tokens": 12, "output_tokens": 1},
        },
        empty=lambda leak: {"type": "message", "model": leak, "content": [], "stop_reason": leak},
        refused=lambda leak: {"type": "error", "error": {"type": leak, "message": leak}},
        stream=lambda model, leak: sse(
            {"type": "message_start", "message": {"model": model, "id": leak}},
            {"type": "content_block_delta", "delta": {"type": "text_delta", "text": "go"}},
            {"type": "message_delta", "delta": {"stop_reason": leak}},
        ),
    ),
]


def script(wire: Wire, key: str) -> tuple[list[Reply], int]:
    """Replies that each end in a generation error (retried ones twice), and how many errors."""
    straddle = "x" * (CUT - 10) + key + " is not a valid key"  # the cut falls inside the key
    leaky = {"x-echo-key": key, "www-authenticate": f'Bearer realm="{key}"', "x-model": key}
    replies = [
        Reply(400, {"error": {"message": straddle, "type": key}}, headers=leaky),
        *[Reply(500, {"error": {"message": straddle}}, headers=leaky)] * 2,
        Reply(429, {"error": {"message": straddle}}, headers={**leaky, "retry-after": "0"}),
        Reply(503, straddle, headers=leaky),
        Reply(401, f"denied: {key[: len(key) // 2]}", headers=leaky),  # the server cut the key
        Reply(403, f"{key[len(key) // 2 :]} is unknown", headers=leaky),
        Reply(200, wire.refused(straddle), headers=leaky),
        Reply(200, wire.empty(straddle), headers=leaky),
        *[Reply(200, wire.stream(f"proxy/{key}", key), headers=leaky)] * 2,
    ]
    return replies, 8


class Both(NullReporter):
    """Reports to the JSON and the line reporter at once: every field, and every line."""

    def __init__(self) -> None:
        self.each = (JsonReporter(sys.stdout), LineReporter(sys.stdout, sys.stderr))

    def start(self, status: Status) -> None:
        for r in self.each:
            r.start(status)

    def turn(self, event: TurnEvent, status: Status) -> None:
        for r in self.each:
            r.turn(event, status)

    def note(self, text: str) -> None:
        for r in self.each:
            r.note(text)

    def aside(self, event: AsideEvent) -> None:
        for r in self.each:
            r.aside(event)

    def finish(self, summary: Summary) -> None:
        for r in self.each:
            r.finish(summary)


def files(tmp_path: Path) -> dict[str, str]:
    return {p.name: p.read_bytes().decode("latin-1") for p in tmp_path.iterdir() if p.is_file()}


def spec(wire: Wire, url: str, env: str) -> str:
    base = f"{url}/v1" if wire.name == "openai" else url
    named = "" if wire.default_env and env == wire.usual_env else f"&key_env={env}"
    return f"{wire.name}:sweep-model?base_url={base}{named}&{FAST}"


@pytest.mark.parametrize("env_style", ["usual", "plain"])
@pytest.mark.parametrize("wire", WIRES, ids=[w.name for w in WIRES])
def test_a_key_echoed_everywhere_leaves_no_trace(
    wire: Wire,
    env_style: str,
    http_server: FakeServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
    cli: Cli,
) -> None:
    key = "sk-swept-" + secrets.token_urlsafe(30)
    env = wire.usual_env if env_style == "usual" else PLAIN_ENV
    monkeypatch.setenv(env, key)
    caplog.set_level(logging.DEBUG)
    replies, expected_errors = script(wire, key)
    leaky = {"x-echo-key": key, "x-served-by": f"proxy {key}"}
    http_server.add(*replies)
    http_server.default = Reply(200, wire.ok("good", f"proxy/{key}", key), headers=leaky)

    places: dict[str, str] = {}
    ledger_path = tmp_path / "tiny.reins.db"
    results = tmp_path / "results.jsonl"
    backend = registry.resolve(spec(wire, http_server.url, env))
    with SQLiteStore.open(ledger_path, create=True) as ledger:
        ledger.add((s[0], s[1]) for s in TINY.seed([]))
        summary = run(
            ledger,
            TINY,
            TextGenerator(backend),
            # The scripted errors fall on few items: none may be set aside before they are spent.
            options=LoopOptions(
                results=results, breaker=None, set_aside_after=None, error_backoff=0, timeout=10
            ),
            reporter=Both(),
            handle_signals=False,
        )
        attempts = [a for item in iter_items(ledger) for a in ledger.snapshot(item.key)[1]]
        places.update({f"open: {name}": text for name, text in files(tmp_path).items()})
    places.update({f"closed: {name}": text for name, text in files(tmp_path).items()})

    # the run took every path: the key went out, came back everywhere, and was recorded
    assert all(key in seen.headers[wire.auth_header] for seen in http_server.seen)
    assert summary.remaining == 0 and summary.generation_errors == expected_errors
    errors = [a.error for a in attempts if a.error]
    assert len(errors) == expected_errors and all(REDACTED in e for e in errors), errors
    served = {a.notes.model for a in attempts if a.judged}
    assert served == {f"proxy/{REDACTED}"}  # scrubbed, not dropped
    assert any(name.endswith("-wal") for name in places) and results.stat().st_size > 0

    places["raised"] = "\n".join(raised(backend, http_server, replies, expected_errors))
    out, err = capfd.readouterr()
    places["stdout"], places["stderr"] = out, err
    places["logs"] = caplog.text + "\n".join(str(r.args) for r in caplog.records)
    places["errors"] = "\n".join(errors)
    places["notes"] = repr([a.notes for a in attempts])
    places["repr"] = repr(backend)
    for argv in (
        ["status", "--json"],
        ["log", "a"],
        ["log", "b", "--full"],
        ["log", "c", "--json"],
    ):
        shown = cli("--ledger", str(ledger_path), *argv)
        assert shown.exit_code == 0, shown.output
        places[" ".join(argv)] = shown.output
    assert REDACTED in places["log a"] + places["log b --full"] + places["log c --json"]

    windows = {key[i : i + WINDOW] for i in range(len(key) - WINDOW + 1)}
    leaks = {where: sorted(w for w in windows if w in text) for where, text in places.items()}
    assert {where: found for where, found in leaks.items() if found} == {}


def raised(
    backend: Backend, http_server: FakeServer, replies: list[Reply], count: int
) -> list[str]:
    """The messages of the errors the backend raises for the same replies, called directly."""
    http_server.add(*replies)
    messages = []
    for _ in range(count):
        with pytest.raises(BackendError) as info:
            asyncio.run(backend.complete(PROMPT, seed=1, timeout=10))
        messages.append(str(info.value))
    assert not http_server.script  # each reply was used
    return messages
