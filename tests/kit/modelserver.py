"""A scripted model server on 127.0.0.1 for the real coding-agent CLIs, offline.

It speaks what each CLI needs (``/work/shared/docs/reference/agent-clis.md`` has the facts):

- the Anthropic Messages API (Claude Code, through ``ANTHROPIC_BASE_URL``): ``POST
  /v1/messages`` streamed as SSE, or as one JSON message when the request does not stream (the
  CLI's fallback after a stall), and ``HEAD /`` (which the CLI sends first);
- the OpenAI Responses API (Codex, through a ``model_providers`` entry with ``wire_api =
  "responses"``): ``POST /v1/responses``, SSE;
- OpenAI chat completions (aider): ``POST /v1/chat/completions``, plain JSON or SSE.

Each request is read into an :class:`Ask` (the user's text, the tool results since the model's
last turn, the working folder the CLI names, the tools it offers) and answered by the test's
script, a function ``Ask -> Reply``. A :class:`Reply` is text and tool calls, the usage to
report, and optionally a stall (before the headers, or after the first event) or an HTTP error.
A script keys on the content (which tool a result answers), never on message positions: the
CLIs add messages of their own (Claude Code a ``system`` one after the user's).
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.kit.modelwire import (
    anthropic_events,
    anthropic_message,
    chat_completion,
    chat_events,
    responses_events,
)

__all__ = ["Ask", "Call", "ModelServer", "Reply", "Result", "Tokens"]


@dataclass(frozen=True, slots=True)
class Tokens:
    """The usage a reply reports (``input`` excludes the cache tokens, as Anthropic's does)."""

    input: int = 100
    output: int = 20
    cache_read: int = 0
    cache_write: int = 0


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call: ``tag`` names it, and comes back on its :class:`Result`. A ``str`` input
    is a freeform (custom) tool's, such as Codex's ``apply_patch``."""

    name: str
    input: dict[str, Any] | str
    tag: str = "call"


@dataclass(frozen=True, slots=True)
class Reply:
    text: str = ""
    calls: tuple[Call, ...] = ()
    tokens: Tokens = Tokens()
    stall: float = 0.0  # seconds: after the first SSE event (or before the headers, see below)
    stall_before_headers: bool = False
    status: int = 200  # anything else: an error body of the API's shape, no stream


@dataclass(frozen=True, slots=True)
class Result:
    """A tool's result the CLI sent back: the :class:`Call`'s tag and the text."""

    tag: str
    text: str
    is_error: bool = False


@dataclass
class Ask:
    """One model request, as the script sees it."""

    api: str  # anthropic, responses or chat
    user: str  # every user text of the conversation, joined (the prompt, hook feedback, …)
    results: list[Result]  # the tool results since the model's last turn
    cwd: str | None  # the working folder the CLI told the model
    tools: list[str]
    stream: bool
    headers: dict[str, str]
    body: dict[str, Any] = field(repr=False, default_factory=dict)


Script = Callable[[Ask], Reply]


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        if isinstance(block, dict) and block.get("type") in ("text", "input_text", "output_text"):
            parts.append(str(block.get("text", "")))
    return "\n".join(parts)


class ModelServer:
    """The server, started on a free port in a thread; a context manager."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.asks: list[Ask] = []
        self.seen: list[tuple[str, str]] = []  # (method, path) of every request
        self.stopping = threading.Event()
        self._tags: dict[str, str] = {}  # the wire id of each tool call → its tag
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> ModelServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.stopping.set()  # ends every stall at once
        self._httpd.shutdown()
        self._httpd.server_close()

    def serial(self) -> int:
        with self._lock:
            return next(self._ids)

    def wire_id(self, prefix: str, tag: str) -> str:
        with self._lock:
            wire = f"{prefix}{tag}_{next(self._ids)}"
            self._tags[wire] = tag
        return wire

    def tag_of(self, wire: str) -> str:
        with self._lock:
            return self._tags.get(wire, wire)

    def record(self, ask: Ask) -> Reply:
        with self._lock:
            self.asks.append(ask)
        return self.script(ask)

    # -- reading requests ----------------------------------------------------------------

    def read_anthropic(self, body: dict[str, Any], headers: dict[str, str]) -> Ask:
        messages = body.get("messages") or []
        system = _text_of(body.get("system"))
        found = re.search(r"Primary working directory: (\S+)", system + json.dumps(messages))
        users, results = [], []
        last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
        for i, message in enumerate(messages):
            if message.get("role") != "user":
                continue
            content = message.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            for block in blocks or []:
                if block.get("type") == "text" and not block["text"].lstrip().startswith(
                    "<system-reminder>"
                ):
                    users.append(block["text"])
                elif block.get("type") == "tool_result" and i > last:
                    tag = self.tag_of(str(block.get("tool_use_id")))
                    text = _text_of(block.get("content"))
                    results.append(Result(tag, text, bool(block.get("is_error"))))
        tools = [str(t.get("name")) for t in body.get("tools") or []]
        cwd = found.group(1) if found else None
        stream = bool(body.get("stream"))
        return Ask("anthropic", "\n".join(users), results, cwd, tools, stream, headers, body)

    def read_responses(self, body: dict[str, Any], headers: dict[str, str]) -> Ask:
        items = body.get("input") or []
        users: list[str] = []
        results: list[Result] = []
        cwd = None
        for item in items:
            kind = item.get("type", "message")
            if kind == "message" and item.get("role") == "user":
                text = _text_of(item.get("content"))
                found = re.search(r"<cwd>(.*?)</cwd>", text)
                cwd = found.group(1) if found else cwd
                if not text.lstrip().startswith(("<environment_context>", "# AGENTS.md")):
                    users.append(text)
            elif kind in ("function_call", "custom_tool_call", "message"):
                results = []  # the model spoke: only the results after it are new
            elif kind in ("function_call_output", "custom_tool_call_output"):
                output = item.get("output")
                text = output if isinstance(output, str) else json.dumps(output)
                results.append(Result(self.tag_of(str(item.get("call_id"))), text))
        tools = [str(t.get("name") or t.get("type")) for t in body.get("tools") or []]
        return Ask("responses", "\n".join(users), results, cwd, tools, True, headers, body)

    def read_chat(self, body: dict[str, Any], headers: dict[str, str]) -> Ask:
        messages = body.get("messages") or []
        users = [_text_of(m.get("content")) for m in messages if m.get("role") == "user"]
        stream = bool(body.get("stream"))
        return Ask("chat", "\n".join(users), [], None, [], stream, headers, body)


def _handler(server: ModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return  # quiet: the tests read server.asks

        def do_HEAD(self) -> None:
            server.seen.append(("HEAD", self.path))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_GET(self) -> None:
            server.seen.append(("GET", self.path))
            self._json(404, {"error": {"type": "not_found_error", "message": self.path}})

        def do_POST(self) -> None:
            server.seen.append(("POST", self.path))
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            headers = {k.lower(): v for k, v in self.headers.items()}
            path = self.path.split("?", 1)[0]
            readers = {
                "/v1/messages": server.read_anthropic,
                "/v1/responses": server.read_responses,
                "/v1/chat/completions": server.read_chat,
            }
            if path not in readers:
                self._json(404, {"error": {"type": "not_found_error", "message": path}})
                return
            ask = readers[path](body, headers)
            reply = server.record(ask)
            if reply.stall_before_headers:
                server.stopping.wait(reply.stall)
            if reply.status != 200:
                self._json(
                    reply.status,
                    {
                        "type": "error",
                        "error": {"type": "api_error", "message": f"scripted error {reply.status}"},
                    },
                )
                return
            self._answer(ask, str(body.get("model", "")), reply)

        def _answer(self, ask: Ask, model: str, reply: Reply) -> None:
            if ask.api == "anthropic":
                message = anthropic_message(server, model, reply)
                if not ask.stream:
                    self._json(200, message)
                    return
                self._stream(anthropic_events(message), reply)
            elif ask.api == "responses":
                self._stream(responses_events(server, model, reply), reply)
            else:
                completion = chat_completion(server, model, reply)
                if not ask.stream:
                    self._json(200, completion)
                    return
                self._stream(chat_events(completion), reply)

        def _json(self, status: int, obj: dict[str, Any]) -> None:
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, events: Iterator[bytes], reply: Reply) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            try:
                for i, chunk in enumerate(events):
                    self.wfile.write(chunk)
                    self.wfile.flush()
                    if i == 0 and reply.stall and not reply.stall_before_headers:
                        server.stopping.wait(reply.stall)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the CLI went away (killed): nothing to answer
            self.close_connection = True

    return Handler
