"""HTTP for the batch APIs: JSON calls, a file upload, a download; bounded, classified, scrubbed.

The same rules as a generation's POST (:mod:`reins.backends._http`): httpx is imported inside
the call, every error message names the endpoint (scheme, host, port) and the provider's own
words, scrubbed of every secret, and a 408, 429 or 5xx is transient. A transient failure is
retried with the backend's retry policy unless the call is not safe to repeat (creating a
batch: a 500 may come after the batch was made); the caller then looks for what it made first.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from reins.backends._http import _error_text, _ssl_context, endpoint_text, read_capped
from reins.backends.retry import RetryPolicy, parse_retry_after, with_retries
from reins.errors import BackendError, TransientError, TransientTimeout

if TYPE_CHECKING:
    from reins.backends._http import HTTPBackend

MAX_DOWNLOAD = 1024 * 1024 * 1024  # a results file larger than this is refused
DEFAULT_TIMEOUT = 120.0  # seconds one batch API call may take


class NotServed(BackendError):
    """HTTP 404 or 405: the server serves no such endpoint (or object). A list endpoint that
    answers it holds nothing: an OpenAI-compatible server without a Batch API has no files and
    no batches, so nothing of a job can be there."""


class Transfer:
    """The batch API calls of one backend, with ``headers`` (auth) on every request."""

    def __init__(
        self, backend: HTTPBackend, headers: dict[str, str], *, timeout: float = DEFAULT_TIMEOUT
    ) -> None:
        self.backend = backend
        self.headers = headers
        self.timeout = timeout

    async def json(
        self,
        method: str,
        url: str,
        *,
        body: Any = None,
        params: dict[str, str] | None = None,
        retry: bool = True,
    ) -> Any:
        """The decoded JSON answer of one call (``body`` sent as JSON)."""
        content = None if body is None else json.dumps(body, ensure_ascii=False).encode()
        headers = {"accept": "application/json"}
        if content is not None:
            headers["content-type"] = "application/json"
        raw = await self._retried(method, url, headers, content, params, None, retry)
        try:
            return json.loads(raw)
        except ValueError:
            where = endpoint_text(url)
            raise TransientError(
                f"{self.backend.name}: the answer from {where} is not JSON: "
                f"{_error_text(raw, self.backend._redactor)}",
                backend=self.backend.name,
            ) from None

    async def listing(self, url: str, params: dict[str, str]) -> Any:
        """One page of a list endpoint; None when the server serves no such list
        (:class:`NotServed`): it holds nothing of the kind."""
        try:
            return await self.json("GET", url, params=params)
        except NotServed:
            return None

    async def upload(self, url: str, filename: str, data: bytes, fields: dict[str, str]) -> Any:
        """POST a multipart form: ``fields`` and the file ``filename``; the JSON answer."""
        files = {"file": (filename, data, "application/jsonl")}
        raw = await self._retried("POST", url, {"accept": "application/json"}, None, None,
                                  (fields, files), True)  # fmt: skip
        try:
            return json.loads(raw)
        except ValueError:
            raise self.backend.fail(
                f"the upload to {endpoint_text(url)} answered no JSON"
            ) from None

    async def download(self, url: str) -> bytes:
        """The bytes at ``url`` (a results file)."""
        headers = {"accept": "application/binary"}
        return await self._retried("GET", url, headers, None, None, None, True)

    async def _retried(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        content: bytes | None,
        params: dict[str, str] | None,
        form: tuple[dict[str, str], dict[str, Any]] | None,
        retry: bool,
    ) -> bytes:
        async def once() -> bytes:
            return await self._once(method, url, headers, content, params, form)

        policy = self.backend.guard.retry if retry else RetryPolicy(retries=0)
        return await with_retries(once, policy=policy, backend=self.backend.name)

    async def _once(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        content: bytes | None,
        params: dict[str, str] | None,
        form: tuple[dict[str, str], dict[str, Any]] | None,
    ) -> bytes:
        import httpx

        b = self.backend
        where = endpoint_text(url)
        sent = {**headers, **self.headers}
        data, files = form if form is not None else (None, None)
        try:
            async with (
                asyncio.timeout(self.timeout),
                httpx.AsyncClient(verify=_ssl_context(), timeout=self.timeout) as client,
                client.stream(method, url, headers=sent, content=content, params=params,
                              data=data, files=files) as response,
            ):  # fmt: skip
                status = response.status_code
                retry_after = parse_retry_after(response.headers.get("retry-after"))
                body = await read_capped(
                    response,
                    MAX_DOWNLOAD,
                    lambda: b.fail(f"the answer from {where} is larger than {MAX_DOWNLOAD} bytes"),
                )
        except (TimeoutError, httpx.TimeoutException):
            raise TransientTimeout(
                f"{b.name}: no answer from {where} within {self.timeout:g}s", backend=b.name
            ) from None
        except httpx.RequestError as exc:
            detail = b._redactor(str(exc) or type(exc).__name__)
            raise TransientError(
                f"{b.name}: {where}: {type(exc).__name__}: {detail}", backend=b.name
            ) from None
        if status in (408, 429) or status >= 500:
            raise TransientError(
                f"{b.name}: HTTP {status} from {where}: {_error_text(body, b._redactor)}",
                backend=b.name,
                retry_after=retry_after,
            )
        if status in (404, 405):
            said = b._redactor(f"HTTP {status} from {where}: {_error_text(body, b._redactor)}")
            raise NotServed(f"{b.name}: {said}", backend=b.name)
        if not 200 <= status < 300:
            raise b.fail(f"HTTP {status} from {where}: {_error_text(body, b._redactor)}")
        return body
