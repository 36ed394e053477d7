"""Generate: the only probabilistic step. A backend's failure becomes a value, never a verdict."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from reins.backends.base import Backend
from reins.errors import BackendError
from reins.gate import excerpt
from reins.values import Completion, Prompt

# reins' own deadline runs this long past the timeout a backend is asked to keep
GRACE = 5.0
ERROR_LIMIT = 500


@dataclass(frozen=True, slots=True)
class GenerationError:
    """A call that produced no usable text: its cause, and how long it took."""

    error: str
    latency: float


async def generate(
    backend: Backend, prompt: Prompt, *, seed: int, timeout: float
) -> Completion | GenerationError:
    """Ask ``backend`` for a completion of ``prompt``.

    Any failure — a :class:`~reins.BackendError`, a deadline passed, an unexpected exception
    from a backend plugin, an answer that is not text — is returned as a
    :class:`GenerationError`, which the turn records without using a try. Cancellation
    propagates.
    """
    started = time.monotonic()
    deadline = asyncio.timeout(timeout + GRACE)
    try:
        async with deadline:
            completion = await backend.complete(prompt, seed=seed, timeout=timeout)
    except TimeoutError as exc:
        if deadline.expired():
            error = f"{backend.name}: no answer within {timeout:g}s"
        else:
            error = f"{backend.name}: {type(exc).__name__}: {exc}"
        return GenerationError(excerpt(error, ERROR_LIMIT), time.monotonic() - started)
    except BackendError as exc:
        error = str(exc) or type(exc).__name__
        return GenerationError(excerpt(error, ERROR_LIMIT), time.monotonic() - started)
    except Exception as exc:
        error = f"{backend.name}: {type(exc).__name__}: {exc}"
        return GenerationError(excerpt(error, ERROR_LIMIT), time.monotonic() - started)
    if not isinstance(completion, Completion) or not isinstance(completion.text, str):
        error = f"{backend.name}: answered {type(completion).__name__}, not a Completion with text"
        return GenerationError(error, time.monotonic() - started)
    return completion
