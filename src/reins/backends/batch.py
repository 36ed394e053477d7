"""Batch APIs: many prompts sent as one provider batch, answered within the provider's window.

A backend that can send batches hands out a :class:`BatchAPI` (``backend.batches()``): the
steps of one batch, each a call the loop makes and records before the next
(:mod:`reins.loop.batching`). Every name a batch carries at the provider holds the job's
``tag``, so that a process killed between a call and its record finds what it made: the
requests file's name, the batch's metadata where the provider keeps metadata, every custom id.

Batch prices: OpenAI's Batch API, Anthropic's Message Batches and Gemini's batch mode all bill
a batch request at half the list price of the same call, input and output, cached tokens too
(the discounts stack). :data:`BATCH_PRICE` is the one place reins applies that factor: a batch
turn's ``cost`` is its list cost times it (:func:`priced`), and ``report`` divides by it to say
what the same tokens cost at list price.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol

from reins.backends.base import Backend
from reins.backends.prices import BATCH_PRICE as BATCH_PRICE  # re-exported: its home for callers
from reins.errors import ConfigError
from reins.values import Completion, Prompt

if TYPE_CHECKING:
    from reins.backends._common import Reply
    from reins.backends.prices import Price

CUSTOM_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}\Z")  # Anthropic's rule; OpenAI's is looser
# A custom id as far as a line that cannot be read shows it (only whole ids: the quotes close).
_NAMED = re.compile(rb'"custom_id"\s*:\s*"([a-zA-Z0-9_-]{1,64})"')
EXCERPT = 120  # characters of an unreadable line a message quotes


def priced(reply: Reply, price: Price | None, latency: float | None) -> Completion:
    """The completion of a batch request's answer, at the batch price.

    A cost the provider reported is what it billed, and its list cost that over the batch
    share; otherwise the backend's price (the table's entry or its price options) bills each
    part of the input at its own rate (cache reads and writes) at the batch share, and the list
    cost is the same tokens uncached at list price, as a direct call's.
    """
    share = price.batch if price is not None else BATCH_PRICE
    if reply.cost is not None:
        cost: float | None = reply.cost
        listed: float | None = reply.cost / share
    elif price is not None:
        cost = price.cost(
            reply.input_tokens,
            reply.output_tokens,
            cache_read=reply.cache_read_tokens,
            cache_write=reply.cache_write_tokens,
            batch=True,
        )
        listed = price.list_cost(reply.input_tokens, reply.output_tokens)
    else:
        cost = listed = None
    return Completion(
        text=reply.text,
        model=reply.model,
        input_tokens=reply.input_tokens,
        output_tokens=reply.output_tokens,
        cost=cost,
        latency=latency,
        batch=True,
        list_cost=listed,
        cache_read_tokens=reply.cache_read_tokens,
        cache_write_tokens=reply.cache_write_tokens,
    )


@dataclass(frozen=True, slots=True)
class BatchLine:
    """One request of a batch: its custom id, the prompt and the call's seed."""

    custom_id: str
    prompt: Prompt
    seed: int


@dataclass(frozen=True, slots=True)
class RemoteBatch:
    """A provider batch as the provider last described it.

    ``status`` and ``counts`` are the provider's own words and numbers; ``ended`` says no more
    results will come (completed, failed, expired, cancelled); ``cancelled`` that a cancel
    ended it (requests without a result were cancelled, not lost); ``detail`` why it failed,
    when it says. ``created_at`` is the provider's clock (seconds), ``total`` the requests it
    holds (None: not told yet), ``tag`` the reins tag in its metadata (None: it keeps none) and
    ``input_file_id`` the file it reads (OpenAI).
    """

    id: str
    status: str
    ended: bool
    counts: dict[str, int] = field(default_factory=dict)
    cancelled: bool = False
    detail: str | None = None
    created_at: float | None = None
    total: int | None = None
    tag: str | None = None
    input_file_id: str | None = None
    output_file_id: str | None = None
    error_file_id: str | None = None


class BatchOutcome(StrEnum):
    """What became of one request of a batch."""

    SUCCEEDED = "succeeded"
    ERRORED = "errored"  # the provider answered it with an error (or its answer holds none)
    EXPIRED = "expired"  # the batch's window ran out before it was answered
    CANCELED = "canceled"  # a cancel ended the batch before it was answered


@dataclass(frozen=True, slots=True)
class BatchResult:
    """One request's result, matched to its request by ``custom_id``."""

    custom_id: str
    outcome: BatchOutcome
    completion: Completion | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class BadLine:
    """A line of a results file that holds no result: ``cut`` off (its JSON ends before its
    value does: the file was truncated there) or malformed (not JSON, or not a result with a
    custom id). ``file`` names the file (``results`` at Anthropic, a file id at OpenAI),
    ``line`` counts from 1, ``custom_id`` is the one it names when that much can be read."""

    file: str
    line: int
    cut: bool
    custom_id: str | None
    excerpt: str


@dataclass(frozen=True, slots=True)
class Results:
    """What an ended batch's results files hold: every result in the provider's order (not the
    requests'), and every line that holds none."""

    results: list[BatchResult]
    bad: list[BadLine] = field(default_factory=list)


def read_results(
    data: bytes, file: str, result: Callable[[dict[str, Any]], BatchResult]
) -> Results:
    """The results of the JSONL ``data`` (the file named ``file``), each line that is a JSON
    object with a string ``custom_id`` read by ``result``; blank lines are nothing."""
    out: list[BatchResult] = []
    bad: list[BadLine] = []
    for n, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
        except ValueError:
            line = None
        if isinstance(line, dict) and isinstance(line.get("custom_id"), str):
            out.append(result(line))
            continue
        named = _NAMED.search(raw)
        text = raw[: EXCERPT * 4].decode("utf-8", "replace")[:EXCERPT]
        cut = line is None and _cut(raw.decode("utf-8", "replace"))
        bad.append(BadLine(file, n, cut, named.group(1).decode() if named else None, text))
    return Results(out, bad)


def _cut(text: str) -> bool:
    """Whether ``text`` is JSON that stops before its value ends: inside a string, or with an
    object or array still open (a line truncated), as opposed to text that is no JSON."""
    depth, in_string, escaped = 0, False, False
    for ch in text.strip():
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth <= 0:
                return False  # the value closed: whatever is wrong, it is not a cut
    return in_string or depth > 0


class BatchAPI(Protocol):
    """The batch API of one backend (one provider, one model).

    ``uploads``: the requests go up as a file first (:meth:`upload`), then a batch is made of
    that file; otherwise :meth:`create` sends them. ``max_requests`` and ``max_bytes`` are the
    provider's limits on one batch; :meth:`size` is what one request adds to it.
    """

    name: str
    model: str
    uploads: bool
    max_requests: int
    max_bytes: int

    def size(self, line: BatchLine) -> int: ...

    async def upload(self, tag: str, lines: Sequence[BatchLine]) -> str:
        """Upload the requests file of job ``tag``; its file id."""
        ...

    async def find_upload(self, tag: str) -> str | None:
        """The file id of job ``tag``'s requests file, if the provider holds one."""
        ...

    async def create(
        self, tag: str, file_id: str | None, lines: Sequence[BatchLine]
    ) -> RemoteBatch:
        """Make the batch (from ``file_id``, or of ``lines``). Not retried: a failure may come
        after the batch was made, so the caller looks for it with :meth:`find` first."""
        ...

    async def find(
        self, tag: str, file_id: str | None, *, since: float, total: int
    ) -> list[RemoteBatch]:
        """The batches that may be job ``tag``'s, made since ``since`` (seconds) by a process
        that never recorded their id, newest first: by its metadata or its file where the
        provider keeps them (exact), else every batch of ``total`` requests made since then."""
        ...

    async def retrieve(self, batch_id: str) -> RemoteBatch: ...

    async def cancel(self, batch_id: str) -> RemoteBatch: ...

    async def results(self, remote: RemoteBatch) -> Results:
        """Every result of an ended batch, and the lines of its files that hold none."""
        ...


class Batching(Protocol):
    """A backend that can send batches."""

    name: str

    def batches(self) -> BatchAPI: ...


def batch_api(backend: object) -> BatchAPI | None:
    """The batch API of ``backend``, or None if it has none."""
    make = getattr(backend, "batches", None)
    return make() if callable(make) else None


def batch_api_of(backend: Backend) -> BatchAPI:
    """The backend's batch API, or a ConfigError saying which backends have one."""
    api = batch_api(backend)
    if api is None:
        raise ConfigError(
            f"backend {backend.name!r} has no batch API: --batch works with the openai and "
            "anthropic backends"
        )
    return api
