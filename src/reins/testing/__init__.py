"""Test doubles for code and tests that use reins: fakes that need no network.

:class:`FakeBackend` implements the :class:`~reins.backends.Backend` protocol with scripted
replies, latency and failure injection, and records every call it receives::

    backend = FakeBackend({"a": ["bad", "good"], "b": ["good"]}, latency=0.01)
    summary = reins.loop.run(ledger, quest, backend)
    assert backend.calls_for("a")[1].prompt.user.endswith(...)
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

from reins.errors import BackendError, BackendTimeout

if TYPE_CHECKING:
    from reins.values import Completion, Prompt

Reply: TypeAlias = "str | Completion | BaseException | type[BaseException]"
Script: TypeAlias = "Sequence[Reply] | Mapping[str, Sequence[Reply]] | Callable[[FakeCall], Reply]"


@dataclass(frozen=True, slots=True)
class FakeCall:
    """One call a :class:`FakeBackend` received.

    ``index`` counts every call to the backend from 0; ``n`` counts the calls for this item
    (``key``) from 0. ``key`` and ``turn`` come from the prompt (empty and 0 for a prompt
    built by hand).
    """

    index: int
    n: int
    prompt: Prompt
    seed: int
    timeout: float
    key: str
    turn: int
    started: float


class FakeBackend:
    """A scripted backend for tests and benchmarks.

    Args:
        replies: what to answer. A list is answered in call order; a mapping from item key to a
            list is answered per item, the n-th call for a key getting its n-th reply; a
            function gets the :class:`FakeCall` and returns the reply. A reply is the text, a
            whole :class:`~reins.backends.Completion`, or an exception (instance or class) to
            raise. A script that runs out raises :class:`RuntimeError`, which a loop records as
            a generation error.
        name: the backend's name, recorded on every attempt.
        model: the model named in each completion.
        latency: seconds each call takes (a number, or a function of the call). A latency
            above the call's timeout raises :class:`~reins.BackendTimeout` at the timeout.
        failure_rate: chance that a call raises :class:`~reins.BackendError` after its
            latency. The draw is seeded by ``rng_seed`` and the call's seed, so it does not
            depend on the order in which concurrent calls arrive, and a repeated call (same
            item, same turn) fails or succeeds alike.
        cost_per_token: with a value, each completion reports ``cost = tokens * value``.

    Every completion reports token counts: the words of the prompt in, the words of the text out.
    """

    def __init__(
        self,
        replies: Script = ("",),
        *,
        name: str = "fake",
        model: str = "fake-1",
        latency: float | Callable[[FakeCall], float] = 0.0,
        failure_rate: float = 0.0,
        rng_seed: int = 0,
        cost_per_token: float | None = None,
    ) -> None:
        if not 0.0 <= failure_rate <= 1.0:
            raise ValueError("failure_rate must lie between 0 and 1")
        self.name = name
        self.model = model
        # a retry policy's declared temperature reaches each call's prompt (FakeCall.prompt)
        self.takes_temperature = True
        self.replies = replies
        self.latency = latency
        self.failure_rate = failure_rate
        self.rng_seed = rng_seed
        self.cost_per_token = cost_per_token
        self.calls: list[FakeCall] = []
        self.completed = 0
        self.failed = 0
        self._per_key: dict[str, int] = {}

    @property
    def priced(self) -> bool:
        """Whether its completions report a cost (``cost_per_token`` is given)."""
        return self.cost_per_token is not None

    def calls_for(self, key: str) -> list[FakeCall]:
        """The calls made for item ``key``, in order."""
        return [c for c in self.calls if c.key == key]

    @property
    def prompts(self) -> list[Prompt]:
        """Every prompt received, in call order."""
        return [c.prompt for c in self.calls]

    async def complete(self, prompt: Prompt, *, seed: int, timeout: float) -> Completion:
        """Answer ``prompt`` from the script, after the latency, unless a failure is injected."""
        from reins.values import Completion

        n = self._per_key.get(prompt.key, 0)
        self._per_key[prompt.key] = n + 1
        call = FakeCall(
            index=len(self.calls),
            n=n,
            prompt=prompt,
            seed=seed,
            timeout=timeout,
            key=prompt.key,
            turn=prompt.turn,
            started=time.monotonic(),
        )
        self.calls.append(call)
        delay = self.latency(call) if callable(self.latency) else self.latency
        try:
            if delay > timeout:
                await asyncio.sleep(timeout)
                raise BackendTimeout(
                    f"{self.name}: no answer within {timeout:g}s", backend=self.name
                )
            await asyncio.sleep(delay)
            if self.failure_rate and self._fails(seed):
                raise BackendError(
                    f"{self.name}: injected failure (call {call.index})",
                    backend=self.name,
                    retryable=True,
                )
            reply = self._reply(call)
            if isinstance(reply, type) and issubclass(reply, BaseException):
                raise reply(f"{self.name}: scripted {reply.__name__}")
            if isinstance(reply, BaseException):
                raise reply
        except Exception:
            self.failed += 1
            raise
        self.completed += 1
        if isinstance(reply, Completion):
            return reply
        tokens_in = len(prompt.system.split()) + len(prompt.user.split())
        tokens_out = len(reply.split())
        cost = None
        if self.cost_per_token is not None:
            cost = (tokens_in + tokens_out) * self.cost_per_token
        return Completion(
            text=reply,
            model=self.model,
            input_tokens=tokens_in,
            output_tokens=tokens_out,
            cost=cost,
            latency=time.monotonic() - call.started,
        )

    def _fails(self, seed: int) -> bool:
        return random.Random(f"{self.rng_seed}/{seed}").random() < self.failure_rate

    def _reply(self, call: FakeCall) -> Reply:
        script = self.replies
        if callable(script):
            return script(call)
        if isinstance(script, Mapping):
            if call.key not in script:
                raise RuntimeError(f"FakeBackend {self.name!r}: no replies for key {call.key!r}")
            replies, i = script[call.key], call.n
        else:
            replies, i = script, call.index
        if i >= len(replies):
            raise RuntimeError(
                f"FakeBackend {self.name!r}: the script has no reply left "
                f"(call {i + 1}{f' for key {call.key!r}' if isinstance(script, Mapping) else ''})"
            )
        return replies[i]
