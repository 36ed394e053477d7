"""reins.testing.FakeBackend: scripted replies, latency, injected failures, recorded calls."""

from __future__ import annotations

import asyncio
import time

import pytest

from reins.backends import Backend, Completion
from reins.errors import BackendError, BackendTimeout
from reins.testing import FakeBackend, FakeCall
from reins.turn import Prompt


def ask(fake: FakeBackend, key: str = "a", turn: int = 1, timeout: float = 5.0) -> Completion:
    prompt = Prompt("sys text", "user text here", key=key, turn=turn)
    return asyncio.run(fake.complete(prompt, seed=turn, timeout=timeout))


def test_it_is_a_backend_and_answers_a_list_in_call_order() -> None:
    fake: Backend = FakeBackend(["one", "two words"])
    assert isinstance(fake, FakeBackend)
    first, second = ask(fake), ask(fake, key="b")
    assert (first.text, second.text) == ("one", "two words")
    assert (second.input_tokens, second.output_tokens, second.model) == (5, 2, "fake-1")
    with pytest.raises(RuntimeError, match="no reply left"):
        ask(fake)
    assert [c.key for c in fake.calls] == ["a", "b", "a"] and fake.failed == 1


def test_a_mapping_answers_each_key_from_its_own_list() -> None:
    fake = FakeBackend({"a": ["a1", "a2"], "b": ["b1"]})
    assert [ask(fake, k).text for k in ("a", "b", "a")] == ["a1", "b1", "a2"]
    assert [c.n for c in fake.calls_for("a")] == [0, 1]
    with pytest.raises(RuntimeError, match="no replies for key 'z'"):
        ask(fake, "z")


def test_a_function_sees_the_call_and_may_return_a_completion_or_an_error() -> None:
    def script(call: FakeCall) -> str | Completion | Exception:
        if call.turn == 1:
            return f"{call.key}@{call.turn}"
        if call.turn == 2:
            return Completion("whole", "m", input_tokens=1, output_tokens=2, cost=0.5)
        return BackendError("scripted")

    fake = FakeBackend(script)
    assert ask(fake, "k", 1).text == "k@1"
    assert ask(fake, "k", 2).cost == 0.5
    with pytest.raises(BackendError, match="scripted"):
        ask(fake, "k", 3)
    assert fake.prompts[0].user == "user text here"


def test_latency_is_slept_and_a_latency_past_the_timeout_times_out() -> None:
    fake = FakeBackend(lambda c: "ok", latency=0.05)
    started = time.monotonic()
    assert ask(fake).latency is not None
    assert time.monotonic() - started >= 0.05
    slow = FakeBackend(lambda c: "ok", latency=lambda call: 10.0)
    with pytest.raises(BackendTimeout):
        ask(slow, timeout=0.01)


def test_injected_failures_follow_the_rate_and_the_call_seed_not_the_call_order() -> None:
    fake = FakeBackend(lambda c: "ok", failure_rate=0.3, rng_seed=7)

    def fails(seed: int) -> bool:
        try:
            asyncio.run(fake.complete(Prompt("s", "u"), seed=seed, timeout=1))
        except BackendError:
            return True
        return False

    first = [fails(s) for s in range(400)]
    backwards = [fails(s) for s in reversed(range(400))][::-1]
    assert first == backwards
    assert 0.22 < sum(first) / 400 < 0.38
    assert fake.failed == 2 * sum(first) and fake.completed == 800 - fake.failed
    with pytest.raises(ValueError, match="failure_rate"):
        FakeBackend(failure_rate=1.5)


def test_cost_per_token_prices_each_completion() -> None:
    fake = FakeBackend(["a b"], cost_per_token=0.01)
    assert ask(fake).cost == pytest.approx((5 + 2) * 0.01)
