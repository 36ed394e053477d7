"""Redaction before the cut, and of cut-off key fragments."""

from __future__ import annotations

import secrets

import pytest

from reins.backends import redact as redaction
from reins.backends.redact import REDACTED, read_key, redact, tail

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
