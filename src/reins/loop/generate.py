"""Generate: the only probabilistic step. A backend's failure becomes a value, never a verdict.

This is the boundary between a backend — possibly a plugin that knows nothing of secrets — and
everything reins stores or prints, so every string a backend hands back passes the redactor
here, except the generated text itself, which is the answer the quest asked for.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from dataclasses import dataclass

from reins.backends.base import Backend
from reins.backends.redact import Redactor
from reins.errors import BackendError
from reins.gate import excerpt
from reins.store.model import Usage
from reins.values import Completion, Prompt

# reins' own deadline runs this long past the timeout a backend is asked to keep
GRACE = 5.0
ERROR_LIMIT = 500
MODEL_LIMIT = 300


@dataclass(frozen=True, slots=True)
class GenerationError:
    """A call that produced no usable text: its cause, and how long it took; ``unreachable``
    when nothing answered at all (the backend is not running: see :mod:`reins.loop.breakers`)."""

    error: str
    latency: float
    unreachable: bool = False


async def generate(
    backend: Backend,
    prompt: Prompt,
    *,
    seed: int,
    timeout: float,
    redactor: Redactor | None = None,
) -> Completion | GenerationError:
    """Ask ``backend`` for a completion of ``prompt``.

    Any failure — a :class:`~reins.BackendError`, a deadline passed, an unexpected exception
    from a backend plugin, an answer that is not text — is returned as a
    :class:`GenerationError`, which the turn records without using a try. Cancellation
    propagates. ``redactor`` scrubs what the backend hands back (a loop holds one for its
    run); by default one is built for this call, reading the environment now.
    """
    redactor = redactor or Redactor()
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
        return _failed(error, started, redactor)
    except BackendError as exc:
        error = str(exc) or type(exc).__name__
        return _failed(error, started, redactor, unreachable=exc.unreachable)
    except Exception as exc:
        error = f"{backend.name}: {type(exc).__name__}: {exc}"
        return _failed(error, started, redactor)
    if not isinstance(completion, Completion) or not isinstance(completion.text, str):
        error = f"{backend.name}: answered {type(completion).__name__}, not a Completion with text"
        return _failed(error, started, redactor)
    model = completion.model
    if isinstance(model, str):
        # The model name the server reported: the loop records it with the attempt.
        clean = redactor.clip(model, MODEL_LIMIT)
        if clean != model:
            completion = dataclasses.replace(completion, model=clean)
    return completion


def _failed(
    error: str, started: float, redactor: Redactor, *, unreachable: bool = False
) -> GenerationError:
    """The error, scrubbed of every known secret before it is cut (a cut key would survive)."""
    text = excerpt(redactor(error), ERROR_LIMIT)
    return GenerationError(text, time.monotonic() - started, unreachable)


def usage_of(backend: str, result: Completion | GenerationError) -> Usage:
    """What a generation cost, as recorded on its attempt."""
    if isinstance(result, GenerationError):
        return Usage(backend=backend, latency=result.latency)
    return Usage(
        backend=backend,
        input_tokens=result.input_tokens,
        output_tokens=result.output_tokens,
        cost=result.cost,
        latency=result.latency,
        cache_read_tokens=result.cache_read_tokens,
        cache_write_tokens=result.cache_write_tokens,
        batch=result.batch,
        list_cost=result.list_cost,
    )
