"""The generations in flight, and the hard stop that drops them.

A soft stop lets every call in flight finish and be recorded; a hard one (a breaker, a signal,
an error) cancels them, and a call dropped so is not a turn: nothing is recorded for it. Waits
between turns end early on a hard stop too.
"""

from __future__ import annotations

import asyncio

from reins.backends.base import Backend
from reins.backends.redact import Redactor
from reins.loop.generate import GenerationError, generate
from reins.values import Completion, Prompt


class InFlight:
    """The calls a run has out at a backend; :meth:`open` it inside the running event loop."""

    def __init__(self) -> None:
        self._hard: asyncio.Future[None] | None = None
        self._calls: set[asyncio.Task[Completion | GenerationError]] = set()
        # what every call hands back is scrubbed; the environment's secrets are read once, here
        self._redactor = Redactor()

    def open(self) -> None:
        self._hard = asyncio.get_running_loop().create_future()

    @property
    def hard_stopped(self) -> bool:
        """Whether a hard stop came (no new call may start)."""
        return self._hard is not None and self._hard.done()

    def drop(self) -> None:
        """The hard stop: cancel every call in flight, and every wait (once open)."""
        if self._hard is not None and not self._hard.done():
            self._hard.set_result(None)
            for task in self._calls:
                task.cancel()

    async def sleep(self, seconds: float) -> bool:
        """Sleep unless a hard stop comes first; True when it did not come."""
        assert self._hard is not None
        if seconds <= 0:
            return not self._hard.done()
        try:
            await asyncio.wait_for(asyncio.shield(self._hard), seconds)
        except TimeoutError:
            return True
        return False

    async def generate(
        self, backend: Backend, prompt: Prompt, *, timeout: float
    ) -> Completion | GenerationError | None:
        """The backend's answer, or None when a hard stop dropped the call."""
        assert self._hard is not None
        if self._hard.done():
            return None
        call = generate(backend, prompt, seed=prompt.seed, timeout=timeout, redactor=self._redactor)
        task = asyncio.ensure_future(call)
        self._calls.add(task)
        try:
            return await task
        except asyncio.CancelledError:
            this = asyncio.current_task()
            if task.cancelled() and this is not None and not this.cancelling():
                return None  # the stop cancelled the call, not someone cancelling this slot
            raise
        finally:
            self._calls.discard(task)
