"""The Backend protocol: turn a prompt into text and say what it cost. A backend never judges."""

from __future__ import annotations

from typing import Protocol

from reins.values import Completion, Prompt

__all__ = ["Backend", "BackendFactory", "Completion", "Prompt"]


class Backend(Protocol):
    """Generate text for a prompt. Generation only: a backend never judges.

    ``seed`` is derived from (item key, turn number): a retry samples anew, while a restarted
    process repeats the same call. Failures raise :class:`reins.errors.BackendError`.

    A backend may say whether each call records a cost with a ``priced`` attribute (a bool:
    :func:`reins.backends.prices.says_priced` reads it); ``reins loop --max-cost`` refuses to
    start on one that does not say so, unless the model is given a price.
    """

    name: str

    async def complete(self, prompt: Prompt, *, seed: int, timeout: float) -> Completion: ...


class BackendFactory(Protocol):
    """What a ``reins.backends`` entry point names: builds a backend from a model spec.

    ``reins loop --model ollama:llama3?temperature=0.2`` calls the factory registered as
    ``ollama`` with ``model="llama3"`` and ``options={"temperature": "0.2"}``. ``options``
    maps each allowed query key to a one-line help text; unknown keys are refused before the
    factory is called.
    """

    options: dict[str, str]

    def __call__(self, model: str, options: dict[str, str]) -> Backend: ...
