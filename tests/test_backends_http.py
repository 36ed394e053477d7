"""HTTP backends against a local server in the test process that speaks each wire format.

The server (the kit's ``http_server``) answers from a script (status, body, headers, delay, a cut
body) and records what it was sent, so each test reads the exact request a backend made.
Retries use tiny backoffs.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from reins.backends import registry
from reins.backends.base import Backend, Completion
from reins.backends.limits import Limiter, Ticket
from reins.errors import BackendError, BackendTimeout, ConfigError
from reins.values import Prompt
from tests.kit import FakeServer, Reply
from tests.kit.http import openai_ok

PROMPT = Prompt(system="You answer in one word.", user="Say good for item a.")
FAST = "backoff=0.001&max_wait=0.5"


def run(
    backend: Backend, prompt: Prompt = PROMPT, *, seed: int = 7, timeout: float = 5
) -> Completion:
    return asyncio.run(backend.complete(prompt, seed=seed, timeout=timeout))


# -- ollama --------------------------------------------------------------------------------


def test_ollama_speaks_the_chat_api_with_think_at_the_top_level(http_server: FakeServer) -> None:
    http_server.add(
        Reply(
            200,
            {
                "model": "qwen2.5:0.5b",
                "message": {"role": "assistant", "content": "good", "thinking": "hmm"},
                "done": True,
                "done_reason": "stop",
                "prompt_eval_count": 21,
                "eval_count": 2,
            },
        )
    )
    backend = registry.resolve(
        f"ollama:qwen2.5:0.5b?base_url={http_server.url}&think=false&temperature=0.3&{FAST}"
    )
    done = run(backend, seed=2**40 + 5)
    assert (done.text, done.model, done.input_tokens, done.output_tokens) == (
        "good",
        "qwen2.5:0.5b",
        21,
        2,
    )
    assert done.latency is not None and done.latency > 0 and done.cost is None
    [seen] = http_server.seen
    assert seen.path == "/api/chat"
    body = seen.body
    assert body["model"] == "qwen2.5:0.5b" and body["stream"] is False
    assert body["messages"] == [
        {"role": "system", "content": PROMPT.system},
        {"role": "user", "content": PROMPT.user},
    ]
    assert body["think"] is False and "think" not in body["options"]
    assert body["options"]["temperature"] == 0.3
    assert body["options"]["seed"] == 5  # folded into 31 bits, deterministically
    # the 2048-token output cap plus the prompt do not fit in 2048: the next power of two
    assert body["options"]["num_ctx"] == 4096 and body["options"]["num_predict"] == 2048
    assert "authorization" not in seen.headers


def test_ollama_reads_its_url_from_the_environment(
    http_server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REINS_OLLAMA_URL", http_server.url)
    http_server.add(Reply(200, {"model": "m", "message": {"content": "hi"}}))
    backend = registry.resolve("ollama:m?json=true&keep_alive=0")
    assert run(backend).text == "hi"
    body = http_server.seen[0].body
    assert body["format"] == "json" and body["keep_alive"] == "0" and "think" not in body
    assert "temperature" not in body["options"]  # the server's default unless asked


def test_ollama_sizes_num_ctx_to_a_long_prompt_without_clamping(http_server: FakeServer) -> None:
    http_server.add(Reply(200, {"model": "m", "message": {"content": "ok"}}))
    long = Prompt("", "word " * 60_000)  # ~100k estimated tokens
    run(registry.resolve(f"ollama:m?base_url={http_server.url}&{FAST}"), long)
    assert http_server.seen[0].body["options"]["num_ctx"] == 131072
    assert [m["role"] for m in http_server.seen[0].body["messages"]] == ["user"]


def test_ollama_refuses_an_explicit_num_ctx_too_small_before_any_request(
    http_server: FakeServer,
) -> None:
    backend = registry.resolve(
        f"ollama:m?base_url={http_server.url}&num_ctx=2048&max_output_tokens=512"
    )
    with pytest.raises(BackendError, match=r"num_ctx=2048") as info:
        run(backend, Prompt("", "word " * 3000))
    assert not info.value.retryable and http_server.seen == []


def test_ollama_error_body_is_reported_briefly(http_server: FakeServer) -> None:
    http_server.add(Reply(404, {"error": "model 'nope' not found, try pulling it first"}))
    with pytest.raises(BackendError) as info:
        run(registry.resolve(f"ollama:nope?base_url={http_server.url}&{FAST}"))
    assert str(info.value) == (
        f"ollama: HTTP 404 from {http_server.url}: model 'nope' not found, try pulling it first"
    )
    assert not info.value.retryable and info.value.backend == "ollama"
    assert len(http_server.seen) == 1  # a 404 is not retried


# -- openai-compatible -------------------------------------------------------------------


def test_openai_compatible_wire_format_key_seed_and_cost(
    http_server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_VLLM_KEY", "vllm-secret-123")
    http_server.add(openai_ok("good"))
    backend = registry.resolve(
        f"openai:org/model-7b?base_url={http_server.url}/v1&key_env=MY_VLLM_KEY&temperature=0.5"
        f"&max_output_tokens=64&price_in=2&price_out=10&json=true&{FAST}"
    )
    done = run(backend, seed=99)
    assert (done.text, done.model, done.input_tokens, done.output_tokens) == (
        "good",
        "served-model",
        12,
        3,
    )
    assert done.cost == pytest.approx((12 * 2 + 3 * 10) / 1e6)
    [seen] = http_server.seen
    assert seen.path == "/v1/chat/completions"
    assert seen.headers["authorization"] == "Bearer vllm-secret-123"
    assert seen.body == {
        "model": "org/model-7b",
        "messages": [
            {"role": "system", "content": PROMPT.system},
            {"role": "user", "content": PROMPT.user},
        ],
        "seed": 99,
        "temperature": 0.5,
        "max_tokens": 64,
        "response_format": {"type": "json_object"},
    }
    assert "vllm-secret-123" not in repr(backend)


def test_openai_sends_no_key_to_a_third_party_server_unless_named(
    http_server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-openai-key")
    http_server.add(openai_ok())
    run(registry.resolve(f"openai:m?base_url={http_server.url}/v1&{FAST}"))
    assert "authorization" not in http_server.seen[0].headers


def test_openai_itself_needs_its_key_and_uses_max_completion_tokens(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        registry.resolve("openai:gpt-4o-mini")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-abc-123456")
    backend = registry.resolve("openai:gpt-4o-mini?max_output_tokens=10")
    url, _headers, body = backend.request(PROMPT, 1)  # type: ignore[attr-defined]
    assert url == "https://api.openai.com/v1/chat/completions"
    assert body["max_completion_tokens"] == 10 and "max_tokens" not in body


def test_a_reported_cost_wins_over_a_configured_price(http_server: FakeServer) -> None:
    http_server.add(openai_ok(cost=0.5))
    done = run(registry.resolve(f"openai:m?base_url={http_server.url}&price_in=1&{FAST}"))
    assert done.cost == 0.5


def test_an_empty_reply_is_a_generation_error_not_a_submission(http_server: FakeServer) -> None:
    http_server.add(
        Reply(200, {"choices": [{"message": {"content": ""}, "finish_reason": "length"}]})
    )
    with pytest.raises(BackendError, match=r"no text \(stop reason: length\)") as info:
        run(registry.resolve(f"openai:m?base_url={http_server.url}&{FAST}"))
    assert not info.value.retryable


# -- gemini ------------------------------------------------------------------------------


def test_gemini_keeps_system_text_apart_key_in_header_model_escaped(
    http_server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "g-key-987654")
    http_server.add(
        Reply(
            200,
            {
                "candidates": [
                    {
                        "content": {
                            "role": "model",
                            "parts": [{"text": "thinking…", "thought": True}, {"text": "good"}],
                        },
                        "finishReason": "STOP",
                    }
                ],
                "usageMetadata": {
                    "promptTokenCount": 30,
                    "candidatesTokenCount": 4,
                    "thoughtsTokenCount": 6,
                },
                "modelVersion": "gemini-2.5-flash-001",
            },
        )
    )
    backend = registry.resolve(
        f"gemini:gemini%2F2.5 flash?base_url={http_server.url}"
        f"&thinking_budget=0&temperature=1&{FAST}"
    )
    done = run(backend, seed=3)
    assert (done.text, done.model, done.input_tokens, done.output_tokens) == (
        "good",
        "gemini-2.5-flash-001",
        30,
        10,
    )
    [seen] = http_server.seen
    assert seen.path == "/v1beta/models/gemini%2F2.5%20flash:generateContent"
    assert "key" not in seen.path and seen.headers["x-goog-api-key"] == "g-key-987654"
    assert seen.body["systemInstruction"] == {"parts": [{"text": PROMPT.system}]}
    assert seen.body["contents"] == [{"role": "user", "parts": [{"text": PROMPT.user}]}]
    assert seen.body["generationConfig"] == {
        "seed": 3,
        "temperature": 1.0,
        "thinkingConfig": {"thinkingBudget": 0},
    }


def test_gemini_blocked_prompt_is_an_error(
    http_server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "g-key-987654")
    http_server.add(Reply(200, {"promptFeedback": {"blockReason": "SAFETY"}}))
    with pytest.raises(BackendError, match="blocked: SAFETY"):
        run(registry.resolve(f"gemini:m?base_url={http_server.url}&{FAST}"))


# -- anthropic ---------------------------------------------------------------------------


def test_anthropic_messages_api_headers_system_and_usage(
    http_server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "ant-key-555555")
    http_server.add(
        Reply(
            200,
            {
                "type": "message",
                "model": "claude-x-1",
                "content": [{"type": "text", "text": "good"}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 8, "cache_read_input_tokens": 100, "output_tokens": 2},
            },
        )
    )
    done = run(
        registry.resolve(
            f"anthropic:claude-x?base_url={http_server.url}&price_in=3&price_out=15&{FAST}"
        )
    )
    assert (done.text, done.model, done.input_tokens, done.output_tokens) == (
        "good",
        "claude-x-1",
        108,
        2,
    )
    assert done.cost == pytest.approx((108 * 3 + 2 * 15) / 1e6)
    [seen] = http_server.seen
    assert seen.path == "/v1/messages"
    assert seen.headers["x-api-key"] == "ant-key-555555"
    assert seen.headers["anthropic-version"] == "2023-06-01"
    assert seen.body == {
        "model": "claude-x",
        "max_tokens": 4096,
        "messages": [{"role": "user", "content": PROMPT.user}],
        "system": PROMPT.system,
    }


def test_anthropic_overloaded_529_is_retried(
    http_server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "ant-key-555555")
    http_server.add(
        Reply(
            529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
        ),
        Reply(200, {"content": [{"type": "text", "text": "fine"}], "usage": {}}),
    )
    assert run(registry.resolve(f"anthropic:c?base_url={http_server.url}&{FAST}")).text == "fine"
    assert len(http_server.seen) == 2


# -- transient failures, retries, timeouts -------------------------------------------------


def test_429_waits_for_retry_after_then_succeeds(http_server: FakeServer) -> None:
    http_server.add(
        Reply(429, {"error": {"message": "slow down"}}, headers={"Retry-After": "0.3"}),
        openai_ok("late"),
    )
    done = run(registry.resolve(f"openai:m?base_url={http_server.url}&backoff=0.001&max_wait=5"))
    assert done.text == "late"
    first, second = http_server.seen
    assert second.at - first.at >= 0.3
    assert done.latency is not None and done.latency >= 0.3  # latency spans every try


def test_retry_after_as_an_http_date_is_honoured_and_capped(http_server: FakeServer) -> None:
    http_server.add(
        Reply(429, {}, headers={"Retry-After": "Wed, 21 Oct 2099 07:28:00 GMT"}),
        openai_ok(),
    )
    start = time.monotonic()
    run(registry.resolve(f"openai:m?base_url={http_server.url}&backoff=0.001&max_wait=0.2"))
    assert 0.2 <= time.monotonic() - start < 2


def test_5xx_then_success_costs_no_error(http_server: FakeServer) -> None:
    http_server.add(
        Reply(503, "<html>busy</html>"), Reply(500, {"error": {"message": "oops"}}), openai_ok()
    )
    assert run(registry.resolve(f"openai:m?base_url={http_server.url}&{FAST}")).text == "good"
    assert len(http_server.seen) == 3


def test_exhausted_retries_surface_one_short_retryable_error(http_server: FakeServer) -> None:
    http_server.default = Reply(500, "<html>" + "x" * 100_000 + "</html>")
    with pytest.raises(BackendError) as info:
        run(registry.resolve(f"openai:m?base_url={http_server.url}&retries=2&{FAST}"))
    message = str(info.value)
    assert message.startswith(f"openai: HTTP 500 from {http_server.url}: <html>xxx")
    assert message.endswith("(gave up after 3 tries)") and len(message) < 500
    assert info.value.retryable and len(http_server.seen) == 3


def test_a_client_error_is_not_retried(http_server: FakeServer) -> None:
    http_server.default = Reply(
        400, {"error": {"message": "unknown model 'm'", "type": "invalid_request_error"}}
    )
    with pytest.raises(BackendError, match=r"HTTP 400 .*unknown model 'm'") as info:
        run(registry.resolve(f"openai:m?base_url={http_server.url}&{FAST}"))
    assert not info.value.retryable and len(http_server.seen) == 1


def test_a_slow_server_times_out_each_try(http_server: FakeServer) -> None:
    http_server.default = Reply(200, {"choices": []}, delay=3)
    start = time.monotonic()
    backend = registry.resolve(
        f"openai:m?base_url={http_server.url}&retries=1&request_timeout=0.2&{FAST}"
    )
    with pytest.raises(
        BackendTimeout, match=r"no answer .* within 0.2s \(gave up after 2 tries\)"
    ) as info:
        run(backend, timeout=5)
    assert info.value.retryable and time.monotonic() - start < 2
    assert len(http_server.seen) == 2


def test_the_whole_call_keeps_within_its_timeout(http_server: FakeServer) -> None:
    """Without a per-request timeout, a hung request uses the call's time: no retry fits."""
    http_server.default = Reply(200, {"choices": []}, delay=3)
    start = time.monotonic()
    with pytest.raises(BackendTimeout, match=r"within 0.3s \(gave up after 1 try, out of time\)"):
        run(registry.resolve(f"openai:m?base_url={http_server.url}&{FAST}"), timeout=0.3)
    assert time.monotonic() - start < 2 and len(http_server.seen) == 1


def test_a_retry_after_longer_than_the_time_left_gives_up_at_once(http_server: FakeServer) -> None:
    http_server.default = Reply(429, {"error": {"message": "later"}}, headers={"Retry-After": "30"})
    start = time.monotonic()
    with pytest.raises(
        BackendError, match=r"HTTP 429 .*later \(gave up after 1 try, out of time\)"
    ):
        run(registry.resolve(f"openai:m?base_url={http_server.url}&backoff=0.001"), timeout=5)
    assert time.monotonic() - start < 2.5


def test_a_truncated_body_is_retried(http_server: FakeServer) -> None:
    http_server.add(
        Reply(200, '{"choices": [{"message": {"content": "cut', truncate=True), openai_ok("whole")
    )
    assert run(registry.resolve(f"openai:m?base_url={http_server.url}&{FAST}")).text == "whole"
    assert len(http_server.seen) == 2


def test_bad_json_is_retried_then_reported(http_server: FakeServer) -> None:
    http_server.default = Reply(200, "this is not json")
    with pytest.raises(BackendError, match="is not JSON: this is not json") as info:
        run(registry.resolve(f"openai:m?base_url={http_server.url}&retries=1&{FAST}"))
    assert info.value.retryable and len(http_server.seen) == 2


def test_a_refused_first_connection_says_the_server_is_not_running() -> None:
    """Nothing ever answered there: not retried for a minute, but said at once, with what to
    check (a refusal after the server answered is an outage, retried: test_cli_helps)."""
    probe = FakeServer()  # bind a port, then free it: nothing listens there
    url = probe.url
    probe.httpd.server_close()
    with pytest.raises(BackendError, match="ConnectError") as info:
        run(registry.resolve(f"openai:m?base_url={url}&retries=1&{FAST}"))
    assert info.value.unreachable and not info.value.retryable
    assert f"is the server running and listening at {url}" in str(info.value)


# -- the limiter, seen from the server -----------------------------------------------------


def test_concurrency_caps_requests_in_flight(http_server: FakeServer) -> None:
    http_server.default = Reply(200, openai_ok().body, delay=0.1)
    backend = registry.resolve(f"openai:limited-1?base_url={http_server.url}&concurrency=2&{FAST}")

    async def many() -> list[Completion]:
        return await asyncio.gather(
            *(backend.complete(PROMPT, seed=i, timeout=5) for i in range(6))
        )

    done = asyncio.run(many())
    assert len(done) == 6 and http_server.max_in_flight == 2


def test_rpm_spaces_requests_out(http_server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("reins.backends.limits.WINDOW", 0.3)
    http_server.default = openai_ok()
    backend = registry.resolve(f"openai:limited-2?base_url={http_server.url}&rpm=2&{FAST}")

    async def many() -> None:
        await asyncio.gather(*(backend.complete(PROMPT, seed=i, timeout=5) for i in range(4)))

    # Admission times, read on the limiter's own clock: the server's arrival times also carry
    # connection set-up, which on a loaded machine delays the first request more than the rest.
    admitted: list[float] = []
    acquire = Limiter.acquire

    async def timed(self: Limiter, tokens: int = 0) -> Ticket:
        ticket = await acquire(self, tokens)
        admitted.append(time.monotonic())
        return ticket

    monkeypatch.setattr(Limiter, "acquire", timed)
    asyncio.run(many())
    assert len(http_server.seen) == 4
    times = sorted(admitted)
    assert times[2] - times[0] >= 0.29  # the third waited for the first to leave the window


def test_a_backend_works_across_event_loops(http_server: FakeServer) -> None:
    http_server.default = openai_ok()
    backend = registry.resolve(
        f"openai:loops?base_url={http_server.url}&concurrency=1&rpm=100&{FAST}"
    )
    assert run(backend).text == run(backend).text == "good"


def test_bad_option_values_are_refused_clearly() -> None:
    with pytest.raises(ConfigError, match=r"option temperature='hot' is not a number"):
        registry.resolve("ollama:m?temperature=hot")
    with pytest.raises(ConfigError, match=r"think='maybe' is not one of true, false"):
        registry.resolve("ollama:m?think=maybe")
    with pytest.raises(ConfigError, match=r"rpm='0' is not a whole number ≥ 1"):
        registry.resolve("ollama:m?rpm=0")
    with pytest.raises(ConfigError, match="is not an http"):
        registry.resolve("ollama:m?base_url=ftp://x")


def test_a_reply_larger_than_the_cap_is_refused_not_buffered(
    http_server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reins.backends import _http

    monkeypatch.setattr(_http, "MAX_BODY", 4096)
    http_server.add(Reply(body=b"x" * 10_000, chunk=1000))
    backend = registry.resolve(f"openai:m?base_url={http_server.url}/v1&{FAST}&retries=0")
    with pytest.raises(BackendError, match="larger than 4096 bytes"):
        run(backend)


# -- a retry policy's temperature ----------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "where"),
    [
        ("ollama:m", ("options", "temperature")),
        ("openai:m", ("temperature",)),
        ("anthropic:claude-x", ("temperature",)),
        ("gemini:m", ("generationConfig", "temperature")),
    ],
)
def test_a_retry_s_declared_temperature_goes_into_the_request(
    spec: str, where: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--retry facts@0.9`` puts 0.9 on the retry's prompt: each HTTP backend sends it in
    place of the spec's temperature, and the spec's (or none) on every other call."""
    # A key of its own: the redactor learns every key read for the process, and one that is a
    # prefix of other tests' keys ("sk-test") would scrub theirs in part.
    for env in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(env, "temperature-test-key-4711")
    backend = registry.resolve(f"{spec}?temperature=0.2")
    assert getattr(backend, "takes_temperature", False) is True

    def sent(prompt: Prompt) -> object:
        body: object = backend.request(prompt, 7)[2]  # type: ignore[attr-defined]
        for key in where:
            assert isinstance(body, dict)
            body = body.get(key)
        return body

    hot = Prompt(PROMPT.system, PROMPT.user, temperature=0.9)
    assert (sent(PROMPT), sent(hot)) == (0.2, 0.9)
