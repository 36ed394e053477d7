"""Rate limits: requests per minute, tokens per minute and requests in flight, per backend.

A :class:`Limiter` keeps a sliding one-minute window of the requests it let through and the
tokens each one used (estimated before the call, settled with the real count after). A caller
waits until its request fits all three caps. When a server answers 429 with ``Retry-After``,
:meth:`Limiter.pause` holds every caller of that backend back, not only the one that was told.
Limiters live in one process; several processes on one key each need their own share of it.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Hashable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import ClassVar

WINDOW = 60.0


@dataclass(frozen=True, slots=True)
class Limits:
    """Caps for one backend; None means no cap."""

    rpm: int | None = None
    tpm: int | None = None
    concurrency: int | None = None


def estimate_tokens(text: str) -> int:
    """A deliberately generous token count for ``text``, before any tokenizer has seen it.

    About three ASCII characters per token, two tokens per other character (CJK scripts and
    accented letters cost more than Latin text under common tokenizers).
    """
    ascii_chars = sum(1 for ch in text if ch < "\x80")
    return math.ceil(ascii_chars / 3) + 2 * (len(text) - ascii_chars)


class _Entry:
    __slots__ = ("at", "gone", "tokens")

    def __init__(self, at: float, tokens: int) -> None:
        self.at = at
        self.tokens = tokens
        self.gone = False


class Ticket:
    """One admitted request; :meth:`settle` replaces its token estimate with the real count."""

    __slots__ = ("_entry", "_limiter")

    def __init__(self, limiter: Limiter, entry: _Entry) -> None:
        self._limiter = limiter
        self._entry = entry

    @property
    def tokens(self) -> int:
        return self._entry.tokens

    def settle(self, tokens: int) -> None:
        if not self._entry.gone:  # aged out of the window already: it no longer counts
            self._limiter._tokens += tokens - self._entry.tokens
        self._entry.tokens = tokens


class Limiter:
    """Admit requests within :class:`Limits`; safe to share between asyncio tasks."""

    _shared: ClassVar[dict[Hashable, Limiter]] = {}

    def __init__(self, limits: Limits, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits
        self._clock = clock
        self._window: deque[_Entry] = deque()
        self._tokens = 0
        self._in_flight = 0
        self._paused_until = 0.0
        self._cond: asyncio.Condition | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    def shared(cls, key: Hashable, limits: Limits) -> Limiter:
        """The process-wide limiter for ``key`` (backend, endpoint, model) and these limits.

        Two backend objects built from the same spec share one budget, however the caller
        builds them.
        """
        full = (key, limits)
        limiter = cls._shared.get(full)
        if limiter is None:
            limiter = cls._shared[full] = cls(limits)
        return limiter

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def pause(self, seconds: float) -> None:
        """Admit nothing for ``seconds`` (a server said so); waiters resume after it."""
        self._paused_until = max(self._paused_until, self._clock() + seconds)

    def _condition(self) -> asyncio.Condition:
        loop = asyncio.get_running_loop()
        if self._cond is None or self._loop is not loop:
            # a new event loop (a new asyncio.run): the old one's waiters and requests are gone
            self._cond = asyncio.Condition()
            self._loop = loop
            self._in_flight = 0
        return self._cond

    def _expire(self, now: float) -> None:
        while self._window and self._window[0].at <= now - WINDOW:
            entry = self._window.popleft()
            entry.gone = True
            self._tokens -= entry.tokens

    def _wait_time(self, tokens: int, now: float) -> float | None:
        """0 when a request of ``tokens`` fits now; else seconds to wait (None: until a release)."""
        limits = self.limits
        if self._paused_until > now:
            return self._paused_until - now
        if limits.concurrency is not None and self._in_flight >= limits.concurrency:
            return None
        if limits.rpm is not None and len(self._window) >= limits.rpm:
            return self._window[0].at + WINDOW - now
        if limits.tpm is not None and self._window and self._tokens + tokens > limits.tpm:
            # wait until enough of the window has aged out (a request larger than the whole
            # budget goes alone, once the window is empty)
            excess = self._tokens + tokens - limits.tpm
            freed = 0
            for entry in self._window:
                freed += entry.tokens
                if freed >= excess:
                    return entry.at + WINDOW - now
            return self._window[-1].at + WINDOW - now
        return 0.0

    async def acquire(self, tokens: int = 0) -> Ticket:
        """Wait until a request of about ``tokens`` tokens fits, then count it in."""
        cond = self._condition()
        async with cond:
            while True:
                now = self._clock()
                self._expire(now)
                wait = self._wait_time(tokens, now)
                if wait == 0.0:
                    break
                if wait is None:
                    await cond.wait()
                else:
                    try:
                        async with asyncio.timeout(max(wait, 0.001)):
                            await cond.wait()
                    except TimeoutError:
                        pass
            entry = _Entry(now, tokens)
            self._window.append(entry)
            self._tokens += tokens
            self._in_flight += 1
            return Ticket(self, entry)

    async def release(self) -> None:
        cond = self._condition()
        async with cond:
            self._in_flight = max(0, self._in_flight - 1)
            cond.notify_all()

    @asynccontextmanager
    async def slot(self, tokens: int = 0) -> AsyncIterator[Ticket]:
        """``async with limiter.slot(n) as ticket:`` — hold one request's place while it runs."""
        ticket = await self.acquire(tokens)
        try:
            yield ticket
        finally:
            await asyncio.shield(self.release())
