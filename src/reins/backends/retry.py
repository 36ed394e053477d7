"""Retries: transient failures are retried inside the backend, with backoff, honouring Retry-After.

A connection error, a timeout, an HTTP 429 or 5xx is transient: the call is tried again after an
exponentially growing, jittered delay, or after the delay the server asked for (``Retry-After``,
in seconds or as an HTTP date), capped. Only when the retries are used up does the turn see a
:class:`~reins.errors.BackendError`, which it records as a generation error: no try is spent.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from reins.errors import BackendError, BackendTimeout, TransientError

log = logging.getLogger("reins.backends")

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how patiently to retry.

    Attributes:
        retries: tries after the first one (0: never retry).
        backoff: delay before the first retry, in seconds; it doubles with each retry.
        max_backoff: cap on the doubled delay.
        max_wait: cap on any single wait, a server's Retry-After included.
        jitter: the fraction of each backoff delay drawn at random, so that many workers
            that failed together do not retry together.
    """

    retries: int = 4
    backoff: float = 1.0
    max_backoff: float = 30.0
    max_wait: float = 60.0
    jitter: float = 0.5

    def delay(
        self, retry: int, retry_after: float | None = None, rng: random.Random | None = None
    ) -> float:
        """Seconds to wait before retry number ``retry`` (1-based)."""
        if retry_after is not None:
            return max(0.0, min(retry_after, self.max_wait))
        base: float = min(self.backoff * 2.0 ** (retry - 1), self.max_backoff, self.max_wait)
        draw: float = (rng or random).random()
        return base * (1 - self.jitter) + base * self.jitter * draw


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delay-seconds or an HTTP date), or None."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if seconds == seconds else None  # NaN
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def named(backend: str, exc: BaseException) -> str:
    """``exc``'s message led by its backend's name, once: a backend's own errors already
    start with it (``ollama: …``), and saying it twice reads as two failures."""
    text = str(exc) or type(exc).__name__
    return text if not backend or text.startswith(f"{backend}:") else f"{backend}: {text}"


async def with_retries(
    call: Callable[[], Awaitable[T]],
    *,
    policy: RetryPolicy,
    backend: str,
    deadline: float | None = None,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    clock: Callable[[], float] = time.monotonic,
    on_wait: Callable[[float], None] | None = None,
) -> T:
    """Await ``call()``; on a :class:`TransientError`, wait and call again, up to the policy.

    Args:
        deadline: a ``clock()`` time no retry may start after: a wait that would end past
            it gives up at once instead.
        on_wait: told of each wait a server asked for, before it starts (a limiter uses it to
            hold its other callers back as well).

    Raises:
        BackendError: a non-transient failure at once, or the last transient one when the
            retries or the time are used up (a :class:`~reins.errors.BackendTimeout` if that
            one was a timeout).
    """
    attempt = 0
    while True:
        attempt += 1
        try:
            return await call()
        except TransientError as exc:
            wait = policy.delay(attempt, exc.retry_after)
            out_of_time = deadline is not None and clock() + wait >= deadline
            if attempt > policy.retries or out_of_time:
                tries = f"{attempt} tries" if attempt > 1 else "1 try"
                why = ", out of time" if out_of_time and attempt <= policy.retries else ""
                kind = BackendTimeout if isinstance(exc, BackendTimeout) else BackendError
                raise kind(
                    f"{exc} (gave up after {tries}{why})",
                    backend=backend,
                    retryable=True,
                    unreachable=exc.unreachable,
                ) from exc
            log.warning(
                "%s; retry %d of %d in %.2fs", named(backend, exc), attempt, policy.retries, wait
            )
            if on_wait is not None and exc.retry_after is not None:
                on_wait(wait)
            await sleep(wait)
