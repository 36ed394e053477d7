"""Redaction before the cut, of cut-off key fragments, and at the loop's backend boundary."""

from __future__ import annotations

import asyncio
import secrets

import pytest

from reins.backends import redact as redaction
from reins.backends import registry
from reins.backends._http import HTTPBackend
from reins.backends.base import Completion
from reins.backends.redact import REDACTED, read_key, redact, tail
from reins.errors import BackendError
from reins.loop import GenerationError, generate
from reins.loop.generate import ERROR_LIMIT
from reins.values import Prompt

ENV = "REINS_UNREMARKABLE_NAME"  # a name no heuristic takes for a secret


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    """A key read the way backends read theirs, under a name redaction cannot guess."""
    value = "sk-test-" + secrets.token_urlsafe(24)
    monkeypatch.setenv(ENV, value)
    assert read_key(ENV, backend="test") == value
    return value


def windows(key: str) -> set[str]:
    return {key[i : i + 8] for i in range(len(key) - 7)}


def leaked(key: str, text: str) -> list[str]:
    return sorted(w for w in windows(key) if w in text)


def test_a_key_read_once_is_scrubbed_from_any_text_afterwards(key: str) -> None:
    assert redact(f"model proxy/{key}") == f"model proxy/{REDACTED}"


def test_a_key_straddling_the_cut_is_redacted_before_it(key: str) -> None:
    text = "x" * 290 + key + " is wrong"
    cut = redaction.clip(text, 300)
    assert leaked(key, cut) == [] and cut == "x" * 290 + REDACTED + "…"
    assert leaked(key, tail(key + "y" * 290, 300)) == []


@pytest.mark.parametrize(
    "shape",
    [
        "denied: {head}",
        "denied: {head}…",
        "denied: '{head}...'",
        "{tail} is unknown",
        "…{tail} is unknown",
        '  "{tail}" is unknown',
    ],
)
def test_a_fragment_of_a_key_cut_by_someone_else_is_scrubbed_at_either_edge(
    key: str, shape: str
) -> None:
    for size in (8, 20, len(key) - 1):
        text = shape.format(head=key[:size], tail=key[-size:])
        scrubbed = redact(text)
        assert leaked(key, scrubbed) == [] and REDACTED in scrubbed, text


def test_a_short_edge_fragment_and_ordinary_edges_are_left_alone(key: str) -> None:
    assert redact(f"ends with {key[:7]}") == f"ends with {key[:7]}"
    assert redact("an ordinary message.") == "an ordinary message."


class Plugin:
    """A third-party backend that knows nothing of redaction."""

    name = "plugin"

    def __init__(self, *, model: str = "", error: Exception | None = None) -> None:
        self.model, self.error = model, error

    async def complete(self, prompt: Prompt, *, seed: int, timeout: float) -> Completion:
        if self.error is not None:
            raise self.error
        return Completion(text="good", model=self.model)


def generated(backend: Plugin) -> Completion | GenerationError:
    return asyncio.run(generate(backend, Prompt("", "hi"), seed=1, timeout=5))


def test_generate_scrubs_the_model_a_plugin_reports(key: str) -> None:
    done = generated(Plugin(model=f"proxy/{key}"))
    assert isinstance(done, Completion)
    assert (done.text, done.model) == ("good", f"proxy/{REDACTED}")


@pytest.mark.parametrize("kind", [BackendError, RuntimeError, TimeoutError])
def test_generate_scrubs_a_plugin_error_before_cutting_it(key: str, kind: type[Exception]) -> None:
    for at in (ERROR_LIMIT - 30, ERROR_LIMIT - 4, 200):
        error = kind("e" * at + key + " trailing words")
        failed = generated(Plugin(error=error))
        assert isinstance(failed, GenerationError)
        assert leaked(key, failed.error) == [], at
        assert REDACTED in failed.error or at != 200, at  # further on, it may be cut off whole


# -- when the environment is read ------------------------------------------------------------


def token() -> str:
    return "tok-" + secrets.token_urlsafe(18)


def test_a_redactor_reads_the_environment_once_and_learns_every_key_read_later(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    early, late, read = token(), token(), token()
    monkeypatch.setenv("REINS_EARLY_TOKEN", early)
    held = redaction.Redactor()
    monkeypatch.setenv("REINS_LATE_TOKEN", late)
    monkeypatch.setenv(ENV, read)
    assert read_key(ENV, backend="test") == read
    text = f"{early} {late} {read}"
    # A secret-looking variable set after the redactor was built is not one it knows (it read
    # the environment once); a key read through read_key is known to every redactor at once.
    assert held(text) == f"{REDACTED} {late} {REDACTED}"
    assert redact(text) == f"{REDACTED} {REDACTED} {REDACTED}"  # a fresh one reads it now


def test_a_backend_scrubs_the_environment_it_was_built_in(monkeypatch: pytest.MonkeyPatch) -> None:
    key, early, late = token(), token(), token()
    monkeypatch.setenv(ENV, key)
    monkeypatch.setenv("REINS_EARLY_TOKEN", early)
    backend = registry.resolve(f"openai:m?base_url=http://127.0.0.1:9/v1&key_env={ENV}")
    monkeypatch.setenv("REINS_LATE_TOKEN", late)
    assert isinstance(backend, HTTPBackend)
    failure = backend.fail(f"{key} {early} {late}")
    assert str(failure) == f"openai: {REDACTED} {REDACTED} {late}"
    assert backend.snippet(f"{key}/{early}") == f"{REDACTED}/{REDACTED}"
