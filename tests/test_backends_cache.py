"""Prompt caching and prices through the real HTTP backends, against a server on 127.0.0.1.

The server records each request body and answers with a scripted provider reply, so a test
reads where the backend put Anthropic's cache marker and what it made of the cached-token
counts each provider reports; then the loop records them and ``status`` / ``report`` sum them.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from reins.backends import registry
from reins.backends.base import Completion
from reins.errors import ConfigError
from reins.values import Prompt
from tests.kit import TINY_REF
from tests.kit.cli import reins

FAST = "backoff=0.001&max_wait=0.5"
SHORT = "Answer in one word."
# About 2,000 tokens by reins' generous estimate (a third of the characters), some 1,000 by a
# real tokenizer: over Sonnet 4.5's minimum of 1,024, under Haiku 4.5's 4,096.
LONG = "Follow the manual exactly. " * 222
MARKED = [{"type": "text", "text": LONG, "cache_control": {"type": "ephemeral"}}]


class Recorder:
    """A threaded HTTP server that answers every POST with ``reply`` and keeps the bodies."""

    def __init__(self) -> None:
        self.reply: Any = {}
        self.bodies: list[Any] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                recorder.bodies.append(json.loads(raw))
                data = json.dumps(recorder.reply).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Recorder]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "ant-test-key")
    monkeypatch.setenv("GEMINI_API_KEY", "gem-test-key")
    s = Recorder()
    s.thread.start()
    try:
        yield s
    finally:
        s.httpd.shutdown()
        s.httpd.server_close()
        s.thread.join(5)


def anthropic_reply(**usage: int) -> dict[str, Any]:
    return {
        "type": "message",
        "model": "served",
        "content": [{"type": "text", "text": "good"}],
        "stop_reason": "end_turn",
        "usage": usage,
    }


def openai_reply(**usage: Any) -> dict[str, Any]:
    return {
        "model": "served",
        "choices": [{"message": {"content": "good"}, "finish_reason": "stop"}],
        "usage": usage,
    }


PLAIN = Prompt(SHORT, "Say good.")


def complete(spec: str, prompt: Prompt = PLAIN) -> Completion:
    backend = registry.resolve(spec)
    return asyncio.run(backend.complete(prompt, seed=1, timeout=5))


# -- where the marker goes -------------------------------------------------------------------


def test_anthropic_marks_the_end_of_a_long_shared_system_text_for_the_cache(
    server: Recorder,
) -> None:
    server.reply = anthropic_reply(input_tokens=5, output_tokens=1)
    complete(f"anthropic:claude-sonnet-4-5?base_url={server.url}&{FAST}", Prompt(LONG, "Say a."))
    [body] = server.bodies
    assert body["system"] == MARKED  # the shared prefix, one block, the breakpoint on it
    assert body["messages"] == [{"role": "user", "content": "Say a."}]  # the item: no marker


def test_anthropic_sends_a_short_system_text_as_it_is_with_no_marker(server: Recorder) -> None:
    server.reply = anthropic_reply(input_tokens=5, output_tokens=1)
    complete(f"anthropic:claude-sonnet-4-5?base_url={server.url}&{FAST}")
    [body] = server.bodies
    assert body["system"] == SHORT and "cache_control" not in json.dumps(body)


@pytest.mark.parametrize(
    ("model", "marked"),
    [
        ("claude-sonnet-4-5", True),  # 1,024 tokens
        ("claude-sonnet-4-5-20250929", True),  # a dated id counts as its model
        ("claude-haiku-4-5", False),  # 4,096 tokens: the prefix is too short to cache
        ("claude-haiku-4-5-20251001", False),
        ("claude-opus-4-6", False),  # 4,096
        ("claude-unknown-9", True),  # unknown: the smallest documented minimum, 1,024
    ],
)
def test_the_marker_follows_the_models_minimum_cacheable_prefix(
    server: Recorder, model: str, marked: bool
) -> None:
    server.reply = anthropic_reply(input_tokens=5, output_tokens=1)
    complete(f"anthropic:{model}?base_url={server.url}&{FAST}", Prompt(LONG, "Say a."))
    assert server.bodies[0]["system"] == (MARKED if marked else LONG)


def test_openai_and_gemini_get_the_prefix_first_and_no_marker(server: Recorder) -> None:
    server.reply = openai_reply(prompt_tokens=9, completion_tokens=1)
    complete(f"openai:gpt-6-sol?base_url={server.url}/v1&{FAST}", Prompt(LONG, "Say a."))
    server.reply = {"candidates": [{"content": {"parts": [{"text": "good"}]}}]}
    complete(f"gemini:gemini-2.5-flash?base_url={server.url}&{FAST}", Prompt(LONG, "Say a."))
    chat, gemini = server.bodies
    assert chat["messages"][0] == {"role": "system", "content": LONG}
    assert gemini["systemInstruction"] == {"parts": [{"text": LONG}]}
    assert "cache_control" not in json.dumps(server.bodies)


# -- cached tokens, priced -------------------------------------------------------------------


def test_openai_cached_tokens_are_part_of_the_input_and_priced_from_the_table(
    server: Recorder,
) -> None:
    details = {"cached_tokens": 1536, "cache_write_tokens": 256}
    server.reply = openai_reply(
        prompt_tokens=2000, completion_tokens=100, prompt_tokens_details=details
    )
    done = complete(f"openai:gpt-6-sol?base_url={server.url}/v1&{FAST}")
    assert (done.input_tokens, done.cache_read_tokens, done.cache_write_tokens) == (2000, 1536, 256)
    # gpt-6-sol: $2 input, $0.20 cached, $2.50 cache write, $10 output per million
    assert done.cost == pytest.approx((208 * 2 + 1536 * 0.2 + 256 * 2.5 + 100 * 10) / 1e6)
    assert done.list_cost == pytest.approx((2000 * 2 + 100 * 10) / 1e6)
    assert not done.batch


def test_anthropic_cache_reads_and_writes_are_added_to_its_input_and_priced(
    server: Recorder,
) -> None:
    spec = f"anthropic:claude-sonnet-5-5?base_url={server.url}&{FAST}"
    server.reply = anthropic_reply(
        input_tokens=50, cache_read_input_tokens=3000, cache_creation_input_tokens=0,
        output_tokens=200,
    )  # fmt: skip
    read = complete(spec)
    server.reply = anthropic_reply(
        input_tokens=50, cache_read_input_tokens=0, cache_creation_input_tokens=3000,
        output_tokens=200,
    )  # fmt: skip
    written = complete(spec)
    assert (read.input_tokens, read.cache_read_tokens, read.cache_write_tokens) == (3050, 3000, 0)
    assert (written.cache_read_tokens, written.cache_write_tokens) == (0, 3000)
    # claude-sonnet-5-5: $2 input, $0.20 cache read, $2.50 5-minute write, $10 output
    assert read.cost == pytest.approx((50 * 2 + 3000 * 0.2 + 200 * 10) / 1e6)  # 0.0027
    assert written.cost == pytest.approx((50 * 2 + 3000 * 2.5 + 200 * 10) / 1e6)  # 0.0096
    assert read.list_cost == written.list_cost == pytest.approx((3050 * 2 + 200 * 10) / 1e6)


def test_gemini_reports_its_implicit_cache_reads_and_a_model_not_in_the_table_costs_nothing_known(
    server: Recorder,
) -> None:
    usage = {"promptTokenCount": 4000, "cachedContentTokenCount": 3000, "candidatesTokenCount": 10}
    server.reply = {
        "candidates": [{"content": {"parts": [{"text": "ok"}]}}],
        "usageMetadata": usage,
    }
    plain = complete(f"gemini:gemini-2.5-flash?base_url={server.url}&{FAST}")
    assert (plain.input_tokens, plain.cache_read_tokens, plain.cost, plain.list_cost) == (
        4000, 3000, None, None
    )  # fmt: skip
    priced = complete(
        f"gemini:gemini-2.5-flash?base_url={server.url}&price_in=0.3&price_out=2.5"
        f"&price_cached=0.03&{FAST}"
    )
    assert priced.cost == pytest.approx((1000 * 0.3 + 3000 * 0.03 + 10 * 2.5) / 1e6)
    assert priced.list_cost == pytest.approx((4000 * 0.3 + 10 * 2.5) / 1e6)


def test_price_options_replace_the_tables_rates_one_by_one(server: Recorder) -> None:
    server.reply = anthropic_reply(input_tokens=50, cache_read_input_tokens=3000, output_tokens=200)
    done = complete(f"anthropic:claude-sonnet-5-5?base_url={server.url}&price_cached=0.1&{FAST}")
    assert done.cost == pytest.approx((50 * 2 + 3000 * 0.1 + 200 * 10) / 1e6)
    # Not in the table: price_in prices cache reads too, as nothing says they are cheaper.
    unknown = complete(f"anthropic:claude-x?base_url={server.url}&price_in=3&price_out=15&{FAST}")
    assert unknown.cost == unknown.list_cost == pytest.approx((3050 * 3 + 200 * 15) / 1e6)
    assert complete(f"anthropic:claude-x?base_url={server.url}&{FAST}").cost is None
    with pytest.raises(ConfigError, match="price_batch"):
        registry.resolve("anthropic:claude-x?price_batch=2")


# -- through the loop to the ledger ----------------------------------------------------------


def on_tiny(*args: str, ledger: str) -> Result:
    return reins("--quest", TINY_REF, "--ledger", ledger, *args)


def doc(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture(params=["sqlite", "postgres"])
def ledger(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("REINS_DRIVER", "alice")
    for var in ("REINS_QUEST", "REINS_LEDGER", "REINS_MODEL"):
        monkeypatch.delenv(var, raising=False)
    if request.param == "sqlite":
        return str(tmp_path / "tiny.reins.db")
    base: str = request.getfixturevalue("postgres_url")
    return f"{base}?schema=t_{os.urandom(5).hex()}"


def test_cached_tokens_reach_the_ledger_and_report_shows_the_hit_rate_and_the_saving(
    server: Recorder, ledger: str
) -> None:
    server.reply = anthropic_reply(
        input_tokens=10, cache_read_input_tokens=900, cache_creation_input_tokens=0,
        output_tokens=2,
    )  # fmt: skip
    assert on_tiny("scan", ledger=ledger).exit_code == 0
    spec = f"anthropic:claude-sonnet-5-5?base_url={server.url}&{FAST}"
    looped = on_tiny("loop", "--model", spec, "--no-export", ledger=ledger)
    assert looped.exit_code == 0, looped.output
    turns = len(server.bodies)
    assert turns == 3  # the tiny quest's three items, each PASS at once

    usage = doc(on_tiny("status", "--json", ledger=ledger))["usage"]
    assert (usage["input_tokens"], usage["cache_read_tokens"], usage["cache_write_tokens"]) == (
        910 * turns, 900 * turns, 0
    )  # fmt: skip
    cost = turns * (10 * 2 + 900 * 0.2 + 2 * 10) / 1e6
    list_cost = turns * (910 * 2 + 2 * 10) / 1e6
    assert usage["cost"] == pytest.approx(cost) and usage["list_cost"] == pytest.approx(list_cost)
    assert usage["batch_cost"] == 0

    attempt = doc(on_tiny("log", "a", "--json", ledger=ledger))["attempts"][0]
    assert (attempt["cache_read_tokens"], attempt["cache_write_tokens"]) == (900, 0)

    report = doc(on_tiny("report", "--json", ledger=ledger))
    assert report["usage"] == usage
    assert report["cache_hit_rate"] == pytest.approx(900 / 910)
    assert report["saved"] == {
        "total": pytest.approx(list_cost - cost), "cache": pytest.approx(list_cost - cost),
        "batch": 0,
    }  # fmt: skip
    text = on_tiny("report", ledger=ledger).stdout
    assert "tokens  in 2,730 (cache read 2,700 = 98.9%, written 0)  out 6" in text
    assert f"saved ${list_cost - cost:.4f}: cache ${list_cost - cost:.4f}, batch $0.0000" in text


def test_the_dashboard_board_shows_the_cache_hit_rate_and_the_saving(
    server: Recorder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    ledger = str(tmp_path / "tiny.reins.db")
    server.reply = anthropic_reply(input_tokens=100, cache_read_input_tokens=300, output_tokens=10)
    on_tiny("scan", ledger=ledger)
    spec = f"anthropic:claude-sonnet-5-5?base_url={server.url}&{FAST}"
    assert on_tiny("loop", "--model", spec, "--no-export", ledger=ledger).exit_code == 0
    assert on_tiny("report", "--html", "r.html", ledger=ledger).exit_code == 0
    page = (tmp_path / "r.html").read_text()
    assert 'data-figure="cache-hit-rate">75.0%<' in page
    saved = 3 * 300 * (2 - 0.2) / 1e6  # three items, each reading 300 tokens at 0.20, not 2
    assert f'data-figure="saved">{saved:.4f}: {saved:.4f} / 0.0000<' in page
