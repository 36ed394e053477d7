"""OpenAI's Batch API for the ``openai`` backend: a JSONL file of chat-completions requests.

The requests go up as a file (``POST /files``, purpose ``batch``) named after the job's tag; a
batch is made of it (``POST /batches``, window 24 h, the tag in its metadata); the batch is
polled (``GET /batches/{id}``) until it ends, and its output and error files are read
(``GET /files/{id}/content``). Lines come back in any order, matched by custom id. A request
the API answered with an error, and one the window ran out on (``batch_expired``), is in the
error file; a cancelled batch leaves out what it never ran.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from reins.backends._http import dig
from reins.backends._transfer import Transfer
from reins.backends.batch import (
    BatchLine,
    BatchOutcome,
    BatchResult,
    RemoteBatch,
    Results,
    priced,
    read_results,
)
from reins.errors import BackendError

if TYPE_CHECKING:
    from reins.backends._http import HTTPBackend

ENDPOINT = "/v1/chat/completions"
ENDED = frozenset({"completed", "failed", "expired", "cancelled"})
TAG_KEY = "reins_job"
SKEW = 300.0  # seconds the provider's clock may differ from ours when looking for a batch
PAGES = 50  # list pages read at most when looking for a file or a batch


def file_name(tag: str) -> str:
    return f"reins-{tag}.jsonl"


class OpenAIBatches:
    """The Batch API of one ``openai`` backend (``OpenAIBackend.batches()``)."""

    uploads = True
    max_requests = 50_000
    max_bytes = 190 * 1024 * 1024  # the API takes files up to 200 MB

    def __init__(self, backend: HTTPBackend) -> None:
        self.backend = backend
        self.name = backend.name
        self.model = backend.model
        headers = {"authorization": f"Bearer {backend.key}"} if backend.key else {}
        self.http = Transfer(backend, headers)
        self.base = backend.base_url

    def line(self, line: BatchLine) -> dict[str, Any]:
        _, _, body = self.backend.request(line.prompt, line.seed)
        return {"custom_id": line.custom_id, "method": "POST", "url": ENDPOINT, "body": body}

    def size(self, line: BatchLine) -> int:
        return len(_dumps(self.line(line))) + 1

    async def upload(self, tag: str, lines: Sequence[BatchLine]) -> str:
        data = b"".join(_dumps(self.line(x)) + b"\n" for x in lines)
        found = await self.http.upload(
            f"{self.base}/files", file_name(tag), data, {"purpose": "batch"}
        )
        file_id = dig(found, "id")
        if not isinstance(file_id, str):
            raise self.backend.fail("the file upload answered no file id")
        return file_id

    async def find_upload(self, tag: str) -> str | None:
        name = file_name(tag)
        for page in await self._pages(f"{self.base}/files", {"purpose": "batch"}, "10000"):
            for f in page:
                if dig(f, "filename") == name and isinstance(dig(f, "id"), str):
                    return str(f["id"])
        return None

    async def create(
        self, tag: str, file_id: str | None, lines: Sequence[BatchLine]
    ) -> RemoteBatch:
        if file_id is None:
            raise self.backend.fail("a batch is made of an uploaded file: none was given")
        body = {
            "input_file_id": file_id,
            "endpoint": ENDPOINT,
            "completion_window": "24h",
            "metadata": {TAG_KEY: tag},
        }
        return self._remote(await self.http.json("POST", f"{self.base}/batches", body=body,
                                                 retry=False))  # fmt: skip

    async def find(
        self, tag: str, file_id: str | None, *, since: float, total: int
    ) -> list[RemoteBatch]:
        found = []
        for page in await self._pages(f"{self.base}/batches", {}, "100", since=since):
            for data in page:
                remote = self._remote(data)
                if remote.tag == tag or (file_id is not None and remote.input_file_id == file_id):
                    found.append(remote)
        return found

    async def retrieve(self, batch_id: str) -> RemoteBatch:
        return self._remote(await self.http.json("GET", f"{self.base}/batches/{batch_id}"))

    async def cancel(self, batch_id: str) -> RemoteBatch:
        return self._remote(await self.http.json("POST", f"{self.base}/batches/{batch_id}/cancel"))

    async def results(self, remote: RemoteBatch) -> Results:
        out = Results([])
        for file_id in (remote.output_file_id, remote.error_file_id):
            if file_id:
                data = await self.http.download(f"{self.base}/files/{file_id}/content")
                found = read_results(data, file_id, self._result)
                out.results.extend(found.results)
                out.bad.extend(found.bad)
        return out

    # -- reading the API's answers -------------------------------------------------------

    async def _pages(
        self, url: str, params: dict[str, str], limit: str, *, since: float | None = None
    ) -> list[list[Any]]:
        """The list pages at ``url``, newest first, until none is left (or, with ``since``, one
        reaches items made before it)."""
        pages: list[list[Any]] = []
        query = {**params, "limit": limit}
        for _ in range(PAGES):
            data = await self.http.listing(url, query)
            if data is None:  # no such list: a server without the Batch API holds nothing
                break
            items = [x for x in (dig(data, "data") or []) if isinstance(x, dict)]
            pages.append(items)
            created = [c for c in (dig(x, "created_at") for x in items) if isinstance(c, int)]
            old = since is not None and created and min(created) < since - SKEW
            last = dig(data, "last_id")
            if not dig(data, "has_more") or old or not isinstance(last, str):
                break
            query = {**query, "after": last}
        return pages

    def _remote(self, data: Any) -> RemoteBatch:
        batch_id, status = dig(data, "id"), dig(data, "status")
        if not isinstance(batch_id, str) or not isinstance(status, str):
            raise self.backend.fail(
                f"the batch answer has no id or status: {self.backend.snippet(data)}"
            )
        counts = dig(data, "request_counts") or {}
        errors = [dig(e, "message") for e in (dig(data, "errors", "data") or [])]
        created = dig(data, "created_at")
        total = dig(counts, "total")
        return RemoteBatch(
            id=batch_id,
            status=status,
            ended=status in ENDED,
            counts={k: v for k, v in counts.items() if isinstance(v, int)},
            cancelled=status == "cancelled",
            detail="; ".join(self.backend.snippet(e) for e in errors if isinstance(e, str)) or None,
            created_at=float(created) if isinstance(created, int | float) else None,
            total=total if isinstance(total, int) and status != "validating" else None,
            tag=_text(dig(data, "metadata", TAG_KEY)),
            input_file_id=_text(dig(data, "input_file_id")),
            output_file_id=_text(dig(data, "output_file_id")),
            error_file_id=_text(dig(data, "error_file_id")),
        )

    def _result(self, line: dict[str, Any]) -> BatchResult:
        custom_id = line["custom_id"]
        status = dig(line, "response", "status_code")
        if isinstance(status, int) and 200 <= status < 300:
            try:
                reply = self.backend.parse(dig(line, "response", "body"))
            except BackendError as exc:
                return BatchResult(custom_id, BatchOutcome.ERRORED, error=str(exc))
            return BatchResult(
                custom_id, BatchOutcome.SUCCEEDED, priced(reply, self.backend.guard.price, None)
            )
        code = dig(line, "error", "code")
        if code == "batch_expired":
            return BatchResult(custom_id, BatchOutcome.EXPIRED, error=self._error(line, "expired"))
        if code == "batch_cancelled":
            return BatchResult(custom_id, BatchOutcome.CANCELED)
        return BatchResult(
            custom_id, BatchOutcome.ERRORED, error=self._error(line, f"HTTP {status}")
        )

    def _error(self, line: Any, what: str) -> str:
        message = dig(line, "response", "body", "error", "message") or dig(line, "error", "message")
        said = self.backend.snippet(message) if message else "no answer"
        return str(self.backend.fail(f"batch request {what}: {said}"))


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
