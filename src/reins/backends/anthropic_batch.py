"""Anthropic's Message Batches for the ``anthropic`` backend: the requests sent in one call.

``POST /v1/messages/batches`` takes every request (a custom id and the Messages API body); the
batch is polled (``GET …/{id}``) until its ``processing_status`` is ``ended`` and its results
read (``GET …/{id}/results``, JSONL, in any order, matched by custom id). Each result succeeded,
errored, expired or was canceled. Anthropic keeps no metadata on a batch, so a batch whose id a
killed process never recorded is found by its size and time; the custom ids in its results,
which carry the job's tag, tell whether it was ours once it ends.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
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

SKEW = 300.0  # seconds the provider's clock may differ from ours when looking for a batch
PAGES = 20  # list pages read at most when looking for a batch
OUTCOMES = {o.value: o for o in BatchOutcome}


class AnthropicBatches:
    """The Message Batches API of one ``anthropic`` backend (``AnthropicBackend.batches()``),
    sending the API version ``version``."""

    uploads = False
    max_requests = 100_000
    max_bytes = 240 * 1024 * 1024  # the API takes batches up to 256 MB

    def __init__(self, backend: HTTPBackend, version: str) -> None:
        self.backend = backend
        self.name = backend.name
        self.model = backend.model
        headers = {"anthropic-version": version}
        if backend.key:
            headers["x-api-key"] = backend.key
        self.http = Transfer(backend, headers)
        self.url = f"{backend.base_url}/v1/messages/batches"

    def request(self, line: BatchLine) -> dict[str, Any]:
        _, _, body = self.backend.request(line.prompt, line.seed)
        return {"custom_id": line.custom_id, "params": body}

    def size(self, line: BatchLine) -> int:
        return len(json.dumps(self.request(line), ensure_ascii=False).encode()) + 1

    async def upload(self, tag: str, lines: Sequence[BatchLine]) -> str:
        raise self.backend.fail("Message Batches take their requests in the create call")

    async def find_upload(self, tag: str) -> str | None:
        return None

    async def create(
        self, tag: str, file_id: str | None, lines: Sequence[BatchLine]
    ) -> RemoteBatch:
        body = {"requests": [self.request(x) for x in lines]}
        return self._remote(await self.http.json("POST", self.url, body=body, retry=False))

    async def find(
        self, tag: str, file_id: str | None, *, since: float, total: int
    ) -> list[RemoteBatch]:
        found: list[RemoteBatch] = []
        params = {"limit": "100"}
        for _ in range(PAGES):
            data = await self.http.listing(self.url, params)
            if data is None:  # no such list: a server without Message Batches holds none
                break
            batches = [self._remote(b) for b in (dig(data, "data") or []) if isinstance(b, dict)]
            found += [
                b for b in batches if b.total == total and (b.created_at or 0) >= since - SKEW
            ]
            older = any((b.created_at or 0) < since - SKEW for b in batches)
            last = dig(data, "last_id")
            if older or not dig(data, "has_more") or not isinstance(last, str):
                break
            params = {"limit": "100", "after_id": last}
        return found

    async def retrieve(self, batch_id: str) -> RemoteBatch:
        return self._remote(await self.http.json("GET", f"{self.url}/{batch_id}"))

    async def cancel(self, batch_id: str) -> RemoteBatch:
        return self._remote(await self.http.json("POST", f"{self.url}/{batch_id}/cancel"))

    async def results(self, remote: RemoteBatch) -> Results:
        # The documented place, not the answer's results_url: the key goes nowhere else.
        data = await self.http.download(f"{self.url}/{remote.id}/results")
        return read_results(data, "results", self._result)

    # -- reading the API's answers -------------------------------------------------------

    def _remote(self, data: Any) -> RemoteBatch:
        batch_id, status = dig(data, "id"), dig(data, "processing_status")
        if not isinstance(batch_id, str) or not isinstance(status, str):
            raise self.backend.fail(
                f"the batch answer has no id or status: {self.backend.snippet(data)}"
            )
        counts = {
            k: v for k, v in (dig(data, "request_counts") or {}).items() if isinstance(v, int)
        }
        return RemoteBatch(
            id=batch_id,
            status=status,
            ended=status == "ended",
            counts=counts,
            cancelled=dig(data, "cancel_initiated_at") is not None,
            created_at=_seconds(dig(data, "created_at")),
            total=sum(counts.values()) if counts else None,
        )

    def _result(self, line: dict[str, Any]) -> BatchResult:
        custom_id = line["custom_id"]
        kind = dig(line, "result", "type")
        outcome = OUTCOMES.get(kind) if isinstance(kind, str) else None
        if outcome is BatchOutcome.SUCCEEDED:
            try:
                reply = self.backend.parse(dig(line, "result", "message"))
            except BackendError as exc:
                return BatchResult(custom_id, BatchOutcome.ERRORED, error=str(exc))
            return BatchResult(custom_id, outcome, priced(reply, self.backend.guard.price, None))
        if outcome is BatchOutcome.CANCELED:
            return BatchResult(custom_id, outcome)
        if outcome is BatchOutcome.EXPIRED:
            error = "batch request expired: the batch ended before it was answered"
            return BatchResult(custom_id, outcome, error=str(self.backend.fail(error)))
        inner = dig(line, "result", "error", "error")
        said = dig(inner, "message") or dig(inner, "type") or f"result {kind!r}"
        error = f"batch request errored: {self.backend.snippet(said)}"
        return BatchResult(custom_id, BatchOutcome.ERRORED, error=str(self.backend.fail(error)))


def _seconds(stamp: Any) -> float | None:
    """An RFC 3339 time as seconds since the epoch."""
    if not isinstance(stamp, str):
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
