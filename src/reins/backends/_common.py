"""What every built-in backend shares: option parsing and the guarded call (limit, retry, usage)."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable, Hashable, Mapping
from dataclasses import dataclass

from reins.backends.limits import Limiter, Limits
from reins.backends.prices import Price as Price  # re-exported: tests and plugins name it here
from reins.backends.prices import override
from reins.backends.registry import check_options
from reins.backends.retry import RetryPolicy, with_retries
from reins.errors import ConfigError, TransientTimeout
from reins.values import Completion

LIMIT_OPTIONS: dict[str, str] = {
    "rpm": "requests per minute at most (default: no cap)",
    "tpm": "tokens per minute at most, input + output (default: no cap)",
    "concurrency": "requests in flight at most (default: no cap)",
    "retries": "retries of a transient failure: connection, timeout, 429, 5xx (default 4)",
    "backoff": "seconds before the first retry; doubles with each retry (default 1)",
    "max_wait": "cap in seconds on any single wait, a server's Retry-After included (default 60)",
    "request_timeout": "seconds one request may take before it is retried (default: all the"
    " time the call has left, so a hung request is not retried)",
}
PRICE_OPTIONS: dict[str, str] = {
    "price_in": "USD per million input tokens, to report cost (replaces the price table's)",
    "price_out": "USD per million output tokens, to report cost (replaces the price table's)",
    "price_cached": "USD per million input tokens read from the prompt cache (default: the"
    " price table's, else price_in)",
    "price_cache_write": "USD per million input tokens written to the prompt cache (default:"
    " the price table's, else price_in)",
    "price_batch": "share of the price a batch request is billed (default 0.5)",
}

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


class Options:
    """Typed reads of a spec's ``?key=value`` options, refusing bad values with a clear error."""

    def __init__(self, backend: str, options: Mapping[str, str], allowed: Mapping[str, str]):
        check_options(backend, allowed, options)
        self.backend = backend
        self.raw = dict(options)

    def _bad(self, key: str, want: str) -> ConfigError:
        return ConfigError(
            f"backend {self.backend!r}: option {key}={self.raw[key]!r} is not {want}"
        )

    def text(self, key: str, default: str | None = None) -> str | None:
        value = self.raw.get(key)
        return default if value is None or value == "" else value

    def whole(self, key: str, default: int | None = None, *, minimum: int = 0) -> int | None:
        if key not in self.raw or self.raw[key] == "":
            return default
        try:
            value = int(self.raw[key])
        except ValueError:
            raise self._bad(key, "a whole number") from None
        if value < minimum:
            raise self._bad(key, f"a whole number ≥ {minimum}")
        return value

    def number(
        self, key: str, default: float | None = None, *, minimum: float = 0.0
    ) -> float | None:
        if key not in self.raw or self.raw[key] == "":
            return default
        try:
            value = float(self.raw[key])
        except ValueError:
            raise self._bad(key, "a number") from None
        if not math.isfinite(value) or value < minimum:
            raise self._bad(key, f"a finite number ≥ {minimum:g}")
        return value

    def flag(self, key: str, default: bool | None = None) -> bool | None:
        if key not in self.raw or self.raw[key] == "":
            return default
        value = self.raw[key].lower()
        if value in _TRUE:
            return True
        if value in _FALSE:
            return False
        raise self._bad(key, "true or false")

    def choice(self, key: str, choices: tuple[str, ...], default: str | None = None) -> str | None:
        value = self.text(key, default)
        if value is not None and value not in choices:
            raise self._bad(key, "one of " + ", ".join(choices))
        return value

    def limits(self) -> Limits:
        return Limits(
            rpm=self.whole("rpm", minimum=1),
            tpm=self.whole("tpm", minimum=1),
            concurrency=self.whole("concurrency", minimum=1),
        )

    def retry(self) -> RetryPolicy:
        default = RetryPolicy()
        backoff = self.number("backoff", default.backoff)
        max_wait = self.number("max_wait", default.max_wait)
        assert backoff is not None and max_wait is not None
        return RetryPolicy(
            retries=self.whole("retries", default.retries) or 0,
            backoff=backoff,
            max_backoff=min(default.max_backoff, max_wait),
            max_wait=max_wait,
        )

    def request_timeout(self) -> float | None:
        value = self.number("request_timeout")
        if value is not None and value <= 0:
            raise self._bad("request_timeout", "a positive number of seconds")
        return value

    def guard(self, key: Hashable, listed: Price | None = None) -> Guard:
        """The limiter, retry policy and price these options ask for, for endpoint ``key``.

        ``listed`` is the price table's entry for the model, if any: the price options replace
        its rates one by one.
        """
        return Guard(
            self.backend,
            limits=self.limits(),
            retry=self.retry(),
            price=self.price(listed),
            key=key,
            request_timeout=self.request_timeout(),
        )

    def price(self, listed: Price | None = None) -> Price | None:
        batch = self.number("price_batch")
        if batch is not None and batch > 1:
            raise self._bad("price_batch", "a share between 0 and 1")
        return override(
            listed,
            input=self.number("price_in"),
            output=self.number("price_out"),
            cache_read=self.number("price_cached"),
            cache_write=self.number("price_cache_write"),
            batch=batch,
        )


@dataclass(frozen=True, slots=True)
class Reply:
    """What one successful request returned, before usage is totalled."""

    text: str
    model: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost: float | None = None
    cache_read_tokens: int | None = None  # of input_tokens, as Completion counts them
    cache_write_tokens: int | None = None


class Guard:
    """Run one generation under a backend's limiter and retry policy, and account for it."""

    def __init__(
        self,
        name: str,
        *,
        limits: Limits,
        retry: RetryPolicy,
        price: Price | None,
        key: Hashable,
        request_timeout: float | None = None,
    ) -> None:
        self.name = name
        self.retry = retry
        self.price = price
        self.request_timeout = request_timeout
        self.limiter = Limiter.shared((name, key), limits)

    async def run(
        self, request: Callable[[float], Awaitable[Reply]], *, tokens: int, timeout: float
    ) -> Completion:
        """Call ``request(seconds)`` until it succeeds, the retries run out, or the time does.

        The whole call — waits for the limiter, every try, every backoff — keeps within
        ``timeout`` seconds; each try gets what is left, or ``request_timeout`` if smaller.
        Latency spans all of it.

        Args:
            tokens: estimated input + output tokens, for the tokens-per-minute cap.
        """
        start = time.perf_counter()
        deadline = time.monotonic() + timeout

        async def once() -> Reply:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TransientTimeout(f"{self.name}: no time left for a try", backend=self.name)
            try:
                async with asyncio.timeout(left):
                    ticket = await self.limiter.acquire(tokens)
            except TimeoutError:
                raise TransientTimeout(
                    f"{self.name}: the rate limit left no room within {timeout:g}s",
                    backend=self.name,
                ) from None
            try:
                left = deadline - time.monotonic()
                per_try = min(left, self.request_timeout) if self.request_timeout else left
                reply = await request(max(per_try, 0.001))
            finally:
                await asyncio.shield(self.limiter.release())
            if reply.input_tokens is not None or reply.output_tokens is not None:
                ticket.settle((reply.input_tokens or 0) + (reply.output_tokens or 0))
            return reply

        reply = await with_retries(
            once,
            policy=self.retry,
            backend=self.name,
            deadline=deadline,
            on_wait=self.limiter.pause,
        )
        return self.completion(reply, latency=time.perf_counter() - start)

    def completion(self, reply: Reply, *, latency: float) -> Completion:
        """The reply as a completion, priced from the table or the options where the provider
        reported no cost: each part of the input at its own rate, and at list price."""
        cost, list_cost = reply.cost, None
        if cost is None and self.price is not None:  # a cost the provider reports wins
            cost = self.price.cost(
                reply.input_tokens,
                reply.output_tokens,
                cache_read=reply.cache_read_tokens,
                cache_write=reply.cache_write_tokens,
            )
            list_cost = self.price.list_cost(reply.input_tokens, reply.output_tokens)
        return Completion(
            text=reply.text,
            model=reply.model,
            input_tokens=reply.input_tokens,
            output_tokens=reply.output_tokens,
            cost=cost,
            latency=latency,
            cache_read_tokens=reply.cache_read_tokens,
            cache_write_tokens=reply.cache_write_tokens,
            list_cost=list_cost,
        )


def api_seed(seed: int) -> int:
    """The per-call seed folded into 31 bits, the widest range every API here accepts."""
    return seed & 0x7FFFFFFF
