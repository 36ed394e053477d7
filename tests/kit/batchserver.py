"""A fake batch provider on 127.0.0.1: OpenAI's Batch API and Anthropic's Message Batches.

It serves the endpoints as the providers document them (tests/../docs/backends.md cites the
protocol), so the real ``openai`` and ``anthropic`` backends talk to it through ``base_url``:

- OpenAI (``Authorization: Bearer``): ``POST /v1/files`` (multipart, purpose ``batch``),
  ``GET /v1/files`` (paged, newest first), ``GET /v1/files/{id}/content``, ``POST /v1/batches``,
  ``GET /v1/batches`` (paged, newest first), ``GET /v1/batches/{id}``, ``POST …/{id}/cancel``.
  Statuses ``validating → in_progress → finalizing → completed``; ``failed`` when the file's
  lines are not valid; ``expired``; ``cancelling → cancelled``. Answered requests go to the
  output file, errored and expired ones to the error file.
- Anthropic (``x-api-key``, ``anthropic-version``): ``POST /v1/messages/batches``,
  ``GET /v1/messages/batches`` (paged, newest first), ``GET …/{id}``, ``GET …/{id}/results``
  (only once ended), ``POST …/{id}/cancel``. ``in_progress → ended``; ``canceling → ended``.

Nothing moves by itself: with ``auto`` (the default) each poll of a batch moves it one step,
else :meth:`FakeProvider.tick` does. Results are written out of the requests' order. Each
request is answered by ``answer(ask)``: a text, :class:`Fail` (an error for that request) or
:class:`Expire` (the window ran out on it). :meth:`FakeProvider.fault` makes calls fail with an
HTTP status (429, 500) a number of times; :attr:`FakeProvider.log` holds every request.
:attr:`FakeProvider.mangle` rewrites the next results file served (repeats, broken lines, a
cut); :attr:`FakeProvider.stall` holds back the answer to every batch made (the batch exists)
until the test sets it, so that the test can kill the process waiting for it.
"""

from __future__ import annotations

import email.parser
import email.policy
import itertools
import json
import random
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

KEY = "sk-batch-test-0123456789"
CUSTOM_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}\Z")


@dataclass(frozen=True)
class Ask:
    """One request as the model sees it."""

    provider: str  # "openai" | "anthropic"
    custom_id: str
    body: dict[str, Any]
    system: str
    user: str


@dataclass(frozen=True)
class Fail:
    """An error answer to one request."""

    status: int = 400
    message: str = "the request was refused"


@dataclass(frozen=True)
class Expire:
    """The batch's window ran out before this request was answered."""


Answer = str | Fail | Expire


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return str(content or "")


def ask_of(provider: str, custom_id: str, body: dict[str, Any]) -> Ask:
    messages = [m for m in body.get("messages", []) if isinstance(m, dict)]
    system = _text(body.get("system"))
    if provider == "openai":
        system = "".join(_text(m.get("content")) for m in messages if m.get("role") == "system")
    user = "".join(_text(m.get("content")) for m in messages if m.get("role") == "user")
    return Ask(provider, custom_id, body, system, user)


@dataclass
class Batch:
    """One batch of either provider."""

    id: str
    provider: str
    requests: list[tuple[str, dict[str, Any]]]  # custom id, body (OpenAI) or params (Anthropic)
    created_at: float
    status: str
    metadata: dict[str, str] = field(default_factory=dict)
    input_file_id: str | None = None
    output_file_id: str | None = None
    error_file_id: str | None = None
    errors: list[dict[str, Any]] = field(default_factory=list)
    results: list[dict[str, Any]] = field(default_factory=list)  # Anthropic result lines
    counts: dict[str, int] = field(default_factory=dict)
    cancel_at: float | None = None
    ended_at: float | None = None
    done_before_stop: int = 0  # answered before a cancel or an expiry ended it


class HttpError(Exception):
    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(status)
        self.status, self.body = status, body


def _oa_error(status: int, message: str) -> HttpError:
    return HttpError(status, {"error": {"message": message, "type": "invalid_request_error"}})


def _an_error(status: int, message: str, kind: str = "invalid_request_error") -> HttpError:
    return HttpError(status, {"type": "error", "error": {"type": kind, "message": message}})


class FakeProvider:
    """The providers' state: files, batches, the answers, the faults, the request log."""

    def __init__(self, answer: Callable[[Ask], Answer] | None = None, *, seed: int = 1) -> None:
        self.answer = answer or (lambda ask: "good")
        self.auto = True
        self.files: dict[str, tuple[str, bytes, float]] = {}  # id → filename, bytes, created
        self.batches: dict[str, Batch] = {}
        self.log: list[dict[str, Any]] = []
        self.faults: list[dict[str, Any]] = []
        self.asked: list[Ask] = []
        self.invalid: str | None = None  # OpenAI: the next batch fails validation, saying this
        self.mangle: Callable[[bytes], bytes] | None = None  # the next results file, rewritten
        self.stall: threading.Event | None = None  # while unset, a made batch is not answered
        self.lock = threading.RLock()
        self.now = time.time()
        self._ids = itertools.count(1)
        self._rng = random.Random(seed)

    # -- what a test does ----------------------------------------------------------------

    def fault(self, method: str, path: str, status: int, times: int = 1) -> None:
        """Answer the next ``times`` calls matching ``method`` and the ``path`` regex with
        ``status``."""
        self.faults.append({"method": method, "re": re.compile(path), "status": status,
                            "times": times})  # fmt: skip

    def tick(self, batch_id: str | None = None) -> None:
        """Move one batch (or every one) one step."""
        with self.lock:
            for b in [self.batches[batch_id]] if batch_id else list(self.batches.values()):
                self._step(b)

    def expire(self, batch_id: str, answered: int = 0) -> None:
        """The window runs out: the first ``answered`` requests were answered, the rest not."""
        with self.lock:
            b = self.batches[batch_id]
            b.done_before_stop = answered
            self._finish(b, "expired")

    def requested(self) -> list[str]:
        """The custom id of every request the batches made hold, in the order they were made:
        what a provider bills."""
        with self.lock:
            return [cid for b in self.batches.values() for cid, _ in b.requests]

    def served(self, data: bytes) -> bytes:
        """A results file as served: rewritten by :attr:`mangle` once, if set."""
        mangle, self.mangle = self.mangle, None
        return data if mangle is None else mangle(data)

    def calls(self, method: str, pattern: str) -> int:
        """How many requests matched ``method`` and the path regex."""
        return sum(1 for e in self.log if e["method"] == method and re.search(pattern, e["path"]))

    def _id(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids):06d}"

    # -- the state machine -----------------------------------------------------------------

    def _step(self, b: Batch) -> None:
        self.now += 1
        if b.provider == "openai":
            after = {"validating": "in_progress", "in_progress": "finalizing"}
            if b.status in after:
                b.status = after[b.status]
            elif b.status == "finalizing":
                self._finish(b, "completed")
            elif b.status == "cancelling":
                self._finish(b, "cancelled")
        elif b.status in ("in_progress", "canceling"):
            self._finish(b, "canceled" if b.status == "canceling" else "ended")

    def _finish(self, b: Batch, how: str) -> None:
        """End ``b``: every request answered, or (cancelled, expired) the first few only."""
        stopped = how in ("cancelled", "canceled", "expired")
        lines = []
        for n, (cid, body) in enumerate(b.requests):
            out: Answer | None = None
            if not stopped or n < b.done_before_stop:
                ask = ask_of(b.provider, cid, body)
                self.asked.append(ask)
                out = self.answer(ask)
            lines.append((cid, body, out))
        order = list(range(len(lines)))
        while len(order) > 1 and order == sorted(order):
            self._rng.shuffle(order)
        ordered = [lines[i] for i in order]
        b.ended_at = self.now
        if b.provider == "openai":
            self._oa_files(b, ordered, how)
            b.status = how
        else:
            self._an_results(b, ordered, how)
            b.status = "ended"

    def _oa_files(
        self, b: Batch, lines: list[tuple[str, dict[str, Any], Answer | None]], how: str
    ) -> None:
        out: list[dict[str, Any]] = []
        err: list[dict[str, Any]] = []
        for cid, body, answer in lines:
            rid = self._id("batch_req_")
            if answer is None and how == "cancelled":
                continue  # a cancelled batch leaves out what it never ran
            if answer is None or isinstance(answer, Expire):
                err.append({"id": rid, "custom_id": cid, "response": None, "error": {
                    "code": "batch_expired", "message": "This request could not be executed "
                    "before the completion window expired."}})  # fmt: skip
            elif isinstance(answer, Fail):
                err.append({"id": rid, "custom_id": cid, "error": None, "response": {
                    "status_code": answer.status, "request_id": rid,
                    "body": {"error": {"message": answer.message, "type": "invalid_request_error"}},
                }})  # fmt: skip
            else:
                out.append(
                    {
                        "id": rid,
                        "custom_id": cid,
                        "error": None,
                        "response": {
                            "status_code": 200,
                            "request_id": rid,
                            "body": _completion(body, answer),
                        },
                    }
                )
        if out:
            b.output_file_id = self._file("batch_output.jsonl", out)
        if err:
            b.error_file_id = self._file("batch_errors.jsonl", err)
        failed = len(err)
        b.counts = {"total": len(b.requests), "completed": len(out), "failed": failed}

    def _an_results(
        self, b: Batch, lines: list[tuple[str, dict[str, Any], Answer | None]], how: str
    ) -> None:
        counts = dict.fromkeys(("processing", "succeeded", "errored", "canceled", "expired"), 0)
        for cid, params, answer in lines:
            if answer is None:
                result: dict[str, Any] = {"type": "canceled" if how == "canceled" else "expired"}
            elif isinstance(answer, Expire):
                result = {"type": "expired"}
            elif isinstance(answer, Fail):
                result = {"type": "errored", "error": {"type": "error", "error": {
                    "type": "invalid_request_error", "message": answer.message}}}  # fmt: skip
            else:
                result = {"type": "succeeded", "message": _message(params, answer)}
            counts[result["type"]] += 1
            b.results.append({"custom_id": cid, "result": result})
        b.counts = counts

    def _file(self, name: str, lines: list[dict[str, Any]]) -> str:
        fid = self._id("file-")
        self.files[fid] = (name, b"".join(json.dumps(x).encode() + b"\n" for x in lines), self.now)
        return fid

    # -- OpenAI --------------------------------------------------------------------------

    def oa_batch(self, b: Batch) -> dict[str, Any]:
        counts = b.counts or {"total": 0, "completed": 0, "failed": 0}
        if b.status != "validating" and not b.counts:
            counts = {"total": len(b.requests), "completed": 0, "failed": 0}
        return {
            "id": b.id, "object": "batch", "endpoint": "/v1/chat/completions",
            "errors": {"object": "list", "data": b.errors} if b.errors else None,
            "input_file_id": b.input_file_id, "completion_window": "24h", "status": b.status,
            "output_file_id": b.output_file_id, "error_file_id": b.error_file_id,
            "created_at": int(b.created_at), "expires_at": int(b.created_at + 86400),
            "completed_at": int(b.ended_at) if b.status == "completed" and b.ended_at else None,
            "request_counts": counts, "metadata": b.metadata or None,
        }  # fmt: skip

    def oa_create(self, body: dict[str, Any]) -> dict[str, Any]:
        fid = body.get("input_file_id")
        if fid not in self.files:
            raise _oa_error(400, f"Input file {fid!r} does not exist.")
        if body.get("endpoint") != "/v1/chat/completions" or body.get("completion_window") != "24h":
            raise _oa_error(400, "endpoint or completion_window is not supported.")
        b = Batch(self._id("batch_"), "openai", [], self.now, "validating",
                  metadata=body.get("metadata") or {}, input_file_id=fid)  # fmt: skip
        seen: set[str] = set()
        for n, raw in enumerate(self.files[fid][1].splitlines(), start=1):
            try:
                line = json.loads(raw)
                cid, url, req = line["custom_id"], line["url"], line["body"]
            except (ValueError, KeyError, TypeError):
                b.errors.append({"code": "invalid_json_line", "message": "bad line", "line": n})
                continue
            if cid in seen or url != "/v1/chat/completions":
                b.errors.append({"code": "invalid_request", "message": f"line {n}", "line": n})
            seen.add(cid)
            b.requests.append((cid, req))
        if self.invalid is not None:
            b.errors.append({"code": "invalid_request", "message": self.invalid, "line": 1})
            self.invalid = None
        if b.errors:
            b.status = "failed"
            b.counts = {"total": 0, "completed": 0, "failed": 0}
        self.batches[b.id] = b
        return self.oa_batch(b)

    # -- Anthropic -------------------------------------------------------------------------

    def an_batch(self, b: Batch) -> dict[str, Any]:
        counts = b.counts or {"processing": len(b.requests), "succeeded": 0, "errored": 0,
                              "canceled": 0, "expired": 0}  # fmt: skip
        return {
            "id": b.id, "type": "message_batch",
            "processing_status": "canceling" if b.status == "canceling" else b.status,
            "request_counts": counts, "created_at": _stamp(b.created_at),
            "expires_at": _stamp(b.created_at + 86400), "ended_at": _stamp(b.ended_at),
            "cancel_initiated_at": _stamp(b.cancel_at), "archived_at": None,
            "results_url": f"/v1/messages/batches/{b.id}/results" if b.status == "ended" else None,
        }  # fmt: skip

    def an_create(self, body: dict[str, Any]) -> dict[str, Any]:
        requests = body.get("requests")
        if not isinstance(requests, list) or not requests:
            raise _an_error(400, "requests: at least one request is required")
        seen: set[str] = set()
        out = []
        for r in requests:
            cid = r.get("custom_id") if isinstance(r, dict) else None
            if not isinstance(cid, str) or not CUSTOM_ID.match(cid) or cid in seen:
                raise _an_error(400, f"custom_id {cid!r} must match ^[a-zA-Z0-9_-]{{1,64}}$ "
                                     "and be unique")  # fmt: skip
            seen.add(cid)
            out.append((cid, r.get("params") or {}))
        b = Batch(self._id("msgbatch_"), "anthropic", out, self.now, "in_progress")
        self.batches[b.id] = b
        return self.an_batch(b)

    def cancel(self, b: Batch) -> None:
        if b.provider == "openai" and b.status in ("validating", "in_progress", "finalizing"):
            b.status, b.cancel_at = "cancelling", self.now
        elif b.provider == "anthropic" and b.status == "in_progress":
            b.status, b.cancel_at = "canceling", self.now


def _completion(body: dict[str, Any], text: str) -> dict[str, Any]:
    prompt = sum(len(_text(m.get("content"))) for m in body.get("messages", [])) // 4 + 1
    return {
        "id": "chatcmpl-fake", "object": "chat.completion", "created": 0,
        "model": body.get("model", "fake"),
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": 2, "total_tokens": prompt + 2,
                  "prompt_tokens_details": {"cached_tokens": 0}},
        "service_tier": "default",
    }  # fmt: skip


def _message(params: dict[str, Any], text: str) -> dict[str, Any]:
    prompt = (
        len(_text(params.get("system"))) // 4
        + sum(len(_text(m.get("content"))) for m in params.get("messages", [])) // 4
        + 1
    )
    return {
        "id": "msg_fake", "type": "message", "role": "assistant",
        "model": params.get("model", "fake"), "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": prompt, "output_tokens": 2, "cache_creation_input_tokens": 0,
                  "cache_read_input_tokens": 0, "service_tier": "batch"},
    }  # fmt: skip


def _stamp(t: float | None) -> str | None:
    if t is None:
        return None
    return datetime.fromtimestamp(t, tz=UTC).isoformat().replace("+00:00", "Z")


def _page(items: list[Any], query: dict[str, list[str]], limit: int) -> tuple[list[Any], bool]:
    """``items`` (newest first) after the ``after`` / ``after_id`` cursor, ``limit`` at most."""
    limit = min(int(query.get("limit", [str(limit)])[0]), limit)
    cursor = query.get("after") or query.get("after_id") or []
    after = cursor[0] if cursor else None
    ids = [x["id"] for x in items]
    if after in ids:
        items = items[ids.index(after) + 1 :]
    return items[:limit], len(items) > limit


def _listing(items: list[dict[str, Any]], more: bool, openai: bool) -> dict[str, Any]:
    first = items[0]["id"] if items else None
    last = items[-1]["id"] if items else None
    data = {"data": items, "has_more": more, "first_id": first, "last_id": last}
    return {"object": "list", **data} if openai else data


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fake: FakeProvider  # set on the subclass the server makes

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def _serve(self, method: str) -> None:
        url = urlsplit(self.path)
        size = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(size) if size else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        anthropic = url.path.startswith("/v1/messages")
        fake = self.fake
        try:
            with fake.lock:
                fake.log.append(
                    {"method": method, "path": url.path, "headers": headers, "body": raw}
                )
                for f in fake.faults:
                    if f["times"] > 0 and f["method"] == method and f["re"].search(url.path):
                        f["times"] -= 1
                        make = _an_error if anthropic else _oa_error
                        raise make(f["status"], "injected fault")
                self._auth(headers, anthropic)
                status, body, ctype = self._route(method, url.path, parse_qs(url.query), raw)
        except HttpError as exc:
            status, body, ctype = exc.status, json.dumps(exc.body).encode(), "application/json"
        stall = fake.stall
        if stall is not None and method == "POST" and re.fullmatch(r"/v1/(messages/)?batches",
                                                                   url.path):  # fmt: skip
            stall.wait(120)  # the batch is made; its maker may be killed before it hears so
        try:
            self.send_response(status)
            self.send_header("content-type", ctype)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except OSError:  # the client was killed while it waited
            self.close_connection = True

    def _auth(self, headers: dict[str, str], anthropic: bool) -> None:
        if anthropic:
            if headers.get("x-api-key") != KEY:
                raise _an_error(401, "invalid x-api-key", "authentication_error")
            if not headers.get("anthropic-version"):
                raise _an_error(400, "anthropic-version: header is required")
        elif headers.get("authorization") != f"Bearer {KEY}":
            raise _oa_error(401, "Incorrect API key provided.")

    def _route(
        self, method: str, path: str, query: dict[str, list[str]], raw: bytes
    ) -> tuple[int, bytes, str]:
        for pattern, handler in (
            (r"/v1/files", self._files),
            (r"/v1/files/([^/]+)/content", self._content),
            (r"/v1/batches", self._oa_batches),
            (r"/v1/batches/([^/]+)(/cancel)?", self._oa_batch),
            (r"/v1/messages/batches", self._an_batches),
            (r"/v1/messages/batches/([^/]+)(/cancel|/results)?", self._an_batch),
        ):
            m = re.fullmatch(pattern, path)
            if m:
                found = handler(method, query, raw, *m.groups())
                if isinstance(found, bytes):
                    return 200, found, "application/binary"
                return 200, json.dumps(found).encode(), "application/json"
        raise (_an_error if path.startswith("/v1/messages") else _oa_error)(404, f"no {path}")

    def _files(self, method: str, query: dict[str, list[str]], raw: bytes) -> Any:
        fake = self.fake
        if method == "GET":
            rows = [{"id": fid, "object": "file", "bytes": len(data), "created_at": int(t),
                     "filename": name, "purpose": "batch"}
                    for fid, (name, data, t) in reversed(fake.files.items())]  # fmt: skip
            page, more = _page(rows, query, 10_000)
            return _listing(page, more, True)
        form = _form(self.headers.get("content-type", ""), raw)
        name, data = form.get("file", (None, b""))
        if form.get("purpose", (None, b""))[1] != b"batch" or not (name or "").endswith(".jsonl"):
            raise _oa_error(400, "Invalid file format for Batch API. Must be .jsonl")
        fid = fake._id("file-")
        fake.files[fid] = (name or "", data, fake.now)
        return {"id": fid, "object": "file", "bytes": len(data), "created_at": int(fake.now),
                "filename": name, "purpose": "batch", "status": "processed"}  # fmt: skip

    def _content(self, method: str, query: dict[str, list[str]], raw: bytes, fid: str) -> Any:
        if fid not in self.fake.files:
            raise _oa_error(404, f"No such File object: {fid}")
        name, data, _ = self.fake.files[fid]
        return self.fake.served(data) if name.startswith("batch_output") else data

    def _oa_batches(self, method: str, query: dict[str, list[str]], raw: bytes) -> Any:
        fake = self.fake
        if method == "POST":
            return fake.oa_create(json.loads(raw))
        rows = [fake.oa_batch(b) for b in reversed(fake.batches.values()) if b.provider == "openai"]
        page, more = _page(rows, query, 100)
        return _listing(page, more, True)

    def _oa_batch(
        self, method: str, query: dict[str, list[str]], raw: bytes, bid: str, cancel: str | None
    ) -> Any:
        b = self.fake.batches.get(bid)
        if b is None or b.provider != "openai":
            raise _oa_error(404, f"No batch found with id '{bid}'.")
        if cancel:
            self.fake.cancel(b)
        elif self.fake.auto:
            self.fake._step(b)
        return self.fake.oa_batch(b)

    def _an_batches(self, method: str, query: dict[str, list[str]], raw: bytes) -> Any:
        fake = self.fake
        if method == "POST":
            return fake.an_create(json.loads(raw))
        rows = [fake.an_batch(b) for b in reversed(fake.batches.values()) if b.provider != "openai"]
        page, more = _page(rows, query, 1000)
        return _listing(page, more, False)

    def _an_batch(
        self, method: str, query: dict[str, list[str]], raw: bytes, bid: str, tail: str | None
    ) -> Any:
        b = self.fake.batches.get(bid)
        if b is None or b.provider != "anthropic":
            raise _an_error(404, f"No message batch found with id '{bid}'.", "not_found_error")
        if tail == "/cancel":
            self.fake.cancel(b)
        elif tail == "/results":
            if b.status != "ended":
                raise _an_error(400, "Batch results are not available until processing ends.")
            return self.fake.served(b"".join(json.dumps(x).encode() + b"\n" for x in b.results))
        elif self.fake.auto:
            self.fake._step(b)
        return self.fake.an_batch(b)


def _form(content_type: str, body: bytes) -> dict[str, tuple[str | None, bytes]]:
    """The parts of a multipart form: name → (filename, bytes)."""
    head = b"Content-Type: " + content_type.encode() + b"\r\n\r\n"
    msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + body)
    out: dict[str, tuple[str | None, bytes]] = {}
    for part in msg.iter_parts() if msg.is_multipart() else ():
        name = part.get_param("name", header="content-disposition")
        if isinstance(name, str):
            payload = part.get_payload(decode=True)
            out[name] = (part.get_filename(), payload if isinstance(payload, bytes) else b"")
    return out


class _Quiet(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):  # a client killed mid-call
            super().handle_error(request, client_address)


class BatchServer:
    """A :class:`FakeProvider` served on 127.0.0.1 in a thread of the test process."""

    def __init__(self, fake: FakeProvider | None = None) -> None:
        self.fake = fake or FakeProvider()
        handler = type("Handler", (_Handler,), {"fake": self.fake})
        self.httpd = _Quiet(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def openai(self, model: str = "gpt-test", **options: str) -> str:
        """The ``--model`` spec of the openai backend pointed at this server."""
        extra = "".join(f"&{k}={v}" for k, v in options.items())
        return f"openai:{model}?base_url={self.url}/v1&key_env=BATCH_KEY&backoff=0.001{extra}"

    def anthropic(self, model: str = "claude-test", **options: str) -> str:
        extra = "".join(f"&{k}={v}" for k, v in options.items())
        return f"anthropic:{model}?base_url={self.url}&key_env=BATCH_KEY&backoff=0.001{extra}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


def serve(answer: Callable[[Ask], Answer] | None = None) -> Iterator[BatchServer]:
    """A fixture body: a server for one test, the key in ``$BATCH_KEY``."""
    server = BatchServer(FakeProvider(answer))
    try:
        yield server
    finally:
        server.close()
