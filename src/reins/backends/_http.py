"""The shared half of the HTTP backends: one JSON POST, bounded, classified and scrubbed.

httpx is imported here, inside the call, so ``import reins`` and every command that does not
talk to a model API stay fast. Each call opens and closes its own client: a backend has no
close method to forget, and an LLM call dwarfs a connection set-up.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Callable, Mapping
from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

from reins.backends._common import LIMIT_OPTIONS, PRICE_OPTIONS, Options, Reply
from reins.backends.limits import estimate_tokens
from reins.backends.prices import lookup
from reins.backends.redact import REDACTED, Redactor, read_key, redact, remember, scrub_logs
from reins.backends.retry import parse_retry_after
from reins.errors import BackendError, ConfigError, TransientError, TransientTimeout

if TYPE_CHECKING:
    import ssl

    import httpx

    from reins.values import Completion, Prompt

MAX_BODY = 16 * 1024 * 1024  # a reply larger than this is refused, not buffered
DEFAULT_MAX_OUTPUT = 2048
_SNIPPET = 300
# httpcore's debug trace prints response headers, where a server may echo the key
_TRANSPORT_LOGGERS = (
    "httpx",
    "httpcore.connection",
    "httpcore.http11",
    "httpcore.http2",
    "httpcore.proxy",
    "httpcore.socks",
)

COMMON_OPTIONS: dict[str, str] = {
    "temperature": "sampling temperature (default: the server's)",
    "max_output_tokens": "cap on generated tokens",
    **LIMIT_OPTIONS,
    **PRICE_OPTIONS,
}


@cache
async def read_capped(
    response: httpx.Response, limit: int, too_big: Callable[[], Exception]
) -> bytes:
    """The body of ``response``, read as it streams in; ``too_big()`` is raised past ``limit``
    bytes, so that a hostile server cannot fill the memory."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            raise too_big()
        chunks.append(chunk)
    return b"".join(chunks)


def _ssl_context() -> ssl.SSLContext:
    import httpx

    return httpx.create_ssl_context()


def _error_text(body: bytes, redactor: Redactor) -> str:
    """The provider's own error message from an error body: scrubbed, then bounded, one line."""
    text = body.decode("utf-8", "replace")
    try:
        data: Any = json.loads(text)
    except ValueError:
        data = None
    message: Any = None
    if isinstance(data, dict):
        err = data.get("error", data.get("message", data.get("detail")))
        if isinstance(err, dict):
            message = err.get("message") or err.get("type") or err.get("status")
        elif isinstance(err, str):
            message = err
    if not isinstance(message, str) or not message.strip():
        message = text
    # redacted before the cut: a key straddling it would otherwise leave its head behind
    message = redactor.clip(re.sub(r"\s+", " ", message).strip(), _SNIPPET)
    return message or "(empty body)"


def endpoint_text(url: str) -> str:
    """Scheme, host and port of ``url``, for messages (never a path, a query or a password)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}"


class HTTPBackend:
    """A JSON-over-HTTP chat backend. Subclasses say how to ask and how to read the answer."""

    name: str  # an instance attribute to the Backend protocol; each subclass sets it
    options: ClassVar[dict[str, str]]
    default_url: ClassVar[str]
    url_env: ClassVar[str]
    key_env_default: ClassVar[str | None] = None
    # The provider whose price table prices this backend's models (reins.backends.prices)
    prices: ClassVar[str | None] = None
    # A retry policy's declared temperature (facts@0.8) goes into the request (sampling_at).
    takes_temperature: ClassVar[bool] = True
    # What to check when nothing answers at the server's address ({where}: scheme, host, port).
    down_hint: ClassVar[str] = (
        "is the server running and listening at {where}? Start it, or set base_url to where "
        "it listens"
    )

    def __init__(self, model: str, options: Mapping[str, str]) -> None:
        self.model = model
        self.opts = opts = Options(self.name, options, self.options)
        base = opts.text("base_url") or os.environ.get(self.url_env) or self.default_url
        if urlsplit(base).scheme not in ("http", "https") or not urlsplit(base).hostname:
            raise ConfigError(
                f"backend {self.name!r}: base URL {redact(base)!r} is not an http(s) URL"
            )
        self.base_url = base.rstrip("/")
        self.temperature = opts.number("temperature")
        self.max_output_tokens = opts.whole("max_output_tokens", minimum=1)
        self.key = self._read_key(opts)
        password = urlsplit(self.base_url).password  # a URL may carry basic-auth credentials
        self._secrets: tuple[str, ...] = tuple(s for s in (self.key, password) if s)
        remember(*self._secrets)  # so the loop's own copies of what we return are scrubbed too
        # the environment's secrets read once, here, not at every call (see reins.backends.redact)
        self._redactor = Redactor(self._secrets)
        scrub_logs(*_TRANSPORT_LOGGERS)
        listed = lookup(self.prices, model) if self.prices else None
        self.guard = opts.guard((self.base_url, model), listed)
        # Whether the server answered once: before that, a refused connection means it is not
        # running (said at once, not retried for a minute); after, it is an outage, retried.
        self.reached = False

    @property
    def priced(self) -> bool:
        """Whether each call records a cost: the price table lists the model, or the price
        options give a price (a provider that reports what it billed is not known ahead)."""
        return self.guard.price is not None

    def _read_key(self, opts: Options) -> str | None:
        """The API key from the environment variable ``key_env`` names, or the backend's own."""
        key_env = opts.text("key_env") if "key_env" in self.options else None
        env = key_env or self.key_env_default
        if env is None:
            return None
        return read_key(env, backend=self.name, required=True)

    def __repr__(self) -> str:  # never the key
        base = self._redactor(self.base_url)
        return f"{type(self).__name__}(model={self.model!r}, base_url={base!r})"

    # -- what subclasses provide ---------------------------------------------------------

    def request(self, prompt: Prompt, seed: int) -> tuple[str, dict[str, str], dict[str, Any]]:
        """The URL, headers (auth included) and JSON body for one generation."""
        raise NotImplementedError

    def parse(self, data: Any) -> Reply:
        """Read a 2xx JSON reply; raise :class:`BackendError` when it holds no answer."""
        raise NotImplementedError

    def output_reserve(self) -> int:
        return self.max_output_tokens or DEFAULT_MAX_OUTPUT

    def sampling_at(self, prompt: Prompt) -> float | None:
        """The temperature of this call: the retry policy's (on the prompt), else the spec's,
        else None (the server's own)."""
        return self.temperature if prompt.temperature is None else prompt.temperature

    # -- the call ------------------------------------------------------------------------

    def fail(self, message: str, *, retryable: bool = False) -> BackendError:
        """A scrubbed, non-transient error of this backend."""
        return BackendError(
            f"{self.name}: {self._redactor(message)}", backend=self.name, retryable=retryable
        )

    def snippet(self, value: Any) -> str:
        """A server-sent value as a short text for a message: scrubbed first, then cut."""
        return self._redactor.clip(str(value), _SNIPPET)

    async def complete(self, prompt: Prompt, *, seed: int, timeout: float) -> Completion:
        """Generate once within ``timeout`` seconds, retrying transient failures meanwhile."""
        url, headers, body = self.request(prompt, seed)
        payload = json.dumps(body, ensure_ascii=False).encode()
        tokens = estimate_tokens(prompt.system) + estimate_tokens(prompt.user)

        async def attempt(seconds: float) -> Reply:
            return self.parse(await self.post(url, headers, payload, seconds))

        return await self.guard.run(attempt, tokens=tokens + self.output_reserve(), timeout=timeout)

    async def post(self, url: str, headers: dict[str, str], payload: bytes, timeout: float) -> Any:
        """POST ``payload`` and return the decoded JSON of a 2xx reply.

        Raises:
            TransientError: connection failure, 408/429/5xx, a cut or undecodable body.
            TransientTimeout: no complete answer within ``timeout`` seconds.
            BackendError: any other HTTP error, or a reply over :data:`MAX_BODY`; nothing
                listening at the server's address before it ever answered (``unreachable``).
        """
        import httpx

        where = endpoint_text(url)
        headers = {"content-type": "application/json", "accept": "application/json", **headers}
        try:
            async with (
                asyncio.timeout(timeout),
                httpx.AsyncClient(verify=_ssl_context(), timeout=timeout) as client,
                client.stream("POST", url, headers=headers, content=payload) as response,
            ):
                status = response.status_code
                retry_after = parse_retry_after(response.headers.get("retry-after"))
                body = await read_capped(
                    response,
                    MAX_BODY,
                    lambda: self.fail(f"reply from {where} is larger than {MAX_BODY} bytes"),
                )
        except (TimeoutError, httpx.TimeoutException):
            raise TransientTimeout(
                f"{self.name}: no answer from {where} within {round(timeout, 2):g}s",
                backend=self.name,
            ) from None
        except httpx.ConnectError as exc:
            raise self.not_running(where, exc) from None
        except httpx.RequestError as exc:
            detail = self._redactor(str(exc) or type(exc).__name__)
            raise TransientError(
                f"{self.name}: {where}: {type(exc).__name__}: {detail}", backend=self.name
            ) from None
        self.reached = True
        if status == 429 or status == 408 or status >= 500:
            raise TransientError(
                f"{self.name}: HTTP {status} from {where}: " + _error_text(body, self._redactor),
                backend=self.name,
                retry_after=retry_after,
            )
        if not 200 <= status < 300:
            raise self.fail(f"HTTP {status} from {where}: {_error_text(body, self._redactor)}")
        try:
            return json.loads(body)
        except ValueError:
            snippet = _error_text(body, self._redactor)
            raise TransientError(
                f"{self.name}: HTTP {status} from {where} is not JSON: {snippet}",
                backend=self.name,
            ) from None

    def not_running(self, where: str, exc: Exception) -> BackendError:
        """Nothing answered at ``where`` (refused, unknown host): the hint to start the server.
        Retried only once the server has answered before (an outage mid-run); a server that
        never answered is said to be down at once."""
        detail = self._redactor(str(exc) or type(exc).__name__)
        message = (
            f"{self.name}: cannot connect to {where} ({type(exc).__name__}: {detail}): "
            + self.down_hint.format(where=where)
        )
        if self.reached:
            return TransientError(message, backend=self.name, unreachable=True)
        return BackendError(message, backend=self.name, unreachable=True)

    def reply(
        self,
        text: Any,
        *,
        model: Any = None,
        input_tokens: Any = None,
        output_tokens: Any = None,
        cost: Any = None,
        stop: Any = None,
        cache_read_tokens: Any = None,
        cache_write_tokens: Any = None,
    ) -> Reply:
        """A :class:`Reply` from loosely typed JSON fields; a missing answer is an error.

        An empty answer is a generation error, not a submission: it says nothing about the
        item, and a run of them (a too-small output cap, a filter) trips the loop's breaker.
        Token counts follow :class:`~reins.values.Completion`: ``input_tokens`` all the prompt
        tokens billed, the cache counts the part of them read from and written to the cache.
        """
        if not isinstance(text, str) or not text.strip():
            why = f" (stop reason: {self.snippet(stop)})" if isinstance(stop, str) and stop else ""
            raise self.fail(f"the reply holds no text{why}")
        for secret in self._secrets:  # a server that echoes the key into its answer
            text = text.replace(secret, REDACTED)
        # The served model's name is the server's word and goes into the ledger: a proxy may
        # echo anything there, the key included.
        served = self.snippet(model) if isinstance(model, str) and model.strip() else ""
        return Reply(
            text=text,
            model=served or self.model,
            input_tokens=_count(input_tokens),
            output_tokens=_count(output_tokens),
            cost=float(cost) if isinstance(cost, int | float) and cost >= 0 else None,
            cache_read_tokens=_count(cache_read_tokens),
            cache_write_tokens=_count(cache_write_tokens),
        )


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and value >= 0 else None


def dig(data: Any, *path: str | int) -> Any:
    """``data[p0][p1]…`` through dicts and lists, or None where the path breaks."""
    for step in path:
        if isinstance(step, int) and isinstance(data, list) and -len(data) <= step < len(data):
            data = data[step]
        elif isinstance(step, str) and isinstance(data, dict):
            data = data.get(step)
        else:
            return None
    return data
