"""A fake HTTP server in the test process: it answers from a script and records every request.

The ``http_server`` fixture is one on 127.0.0.1, started and stopped around the test. Each
request gets the next scripted :class:`Reply` (:meth:`FakeServer.add`), else what
``answer(seen)`` returns (a route table of the test's own), else ``default``, else a 500. A reply
can be late, cut short, dripped byte by byte, chunked, or echo the request's headers (a leaky
server), so a client's timeouts, caps and redaction meet real sockets.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


@dataclass
class Reply:
    """One scripted answer."""

    status: int = 200
    body: Any = None  # dict/list → JSON, str/bytes → as is
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before the status line
    truncate: bool = False  # promise more bytes than are sent, then hang up
    echo_headers: bool = False  # put the request's headers into the body (a leaky server)
    chunk: int = 0  # send the body in chunks of this many bytes (Transfer-Encoding: chunked)
    drip: float = 0.0  # seconds between the body's bytes


@dataclass
class Seen:
    """One request the server received."""

    method: str
    path: str  # with its query string
    headers: dict[str, str]  # names in lower case
    body: Any  # JSON-decoded when it is JSON, else the bytes (b"" without a body)
    at: float  # time.monotonic() when it arrived


def _encoded(body: Any) -> bytes:
    if isinstance(body, dict | list):
        return json.dumps(body).encode()
    if isinstance(body, str):
        return body.encode()
    return bytes(body or b"")


class FakeServer:
    """A threaded HTTP/1.1 server on ``host`` (any free port) answering from a script."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.script: deque[Reply] = deque()
        self.answer: Callable[[Seen], Reply] | None = None
        self.default: Reply | None = None
        self.seen: list[Seen] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.httpd = ThreadingHTTPServer((host, 0), _handler(self))
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{self.httpd.server_address[0]!s}:{self.port}"

    def add(self, *replies: Reply) -> None:
        self.script.extend(replies)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)

    def __enter__(self) -> FakeServer:
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()

    def reply_to(self, seen: Seen) -> Reply:
        """Record ``seen`` and pick its reply."""
        with self.lock:
            self.seen.append(seen)
            reply = self.script.popleft() if self.script else None
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        if reply is None and self.answer is not None:
            reply = self.answer(seen)
        return reply or self.default or Reply(500, {"error": "no scripted reply"})


def _handler(server: FakeServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self._serve()

        def do_POST(self) -> None:
            self._serve()

        def _serve(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            try:
                body: Any = json.loads(raw)
            except ValueError:
                body = raw
            headers = {k.lower(): v for k, v in self.headers.items()}
            seen = Seen(self.command, self.path, headers, body, time.monotonic())
            try:
                self._answer(server.reply_to(seen), headers)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up: a timeout or a cap it was testing
            finally:
                with server.lock:
                    server.in_flight -= 1

        def _answer(self, reply: Reply, headers: dict[str, str]) -> None:
            if reply.delay:
                server.stopping.wait(reply.delay)
            body = reply.body
            if reply.echo_headers:
                body = {"error": {"message": f"rejected request with headers {headers}"}}
            data = _encoded(body)
            self.send_response(reply.status)
            for k, v in reply.headers.items():
                self.send_header(k, v)
            self.send_header("content-type", "application/json")
            if reply.chunk:
                self.send_header("transfer-encoding", "chunked")
            else:
                self.send_header("content-length", str(len(data) + (100 if reply.truncate else 0)))
            self.end_headers()
            if reply.chunk:
                for at in range(0, len(data), reply.chunk):
                    piece = data[at : at + reply.chunk]
                    self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                self.wfile.write(b"0\r\n\r\n")
            elif reply.drip:
                for byte in data:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    if server.stopping.wait(reply.drip):
                        break
            else:
                self.wfile.write(data)
            self.wfile.flush()
            if reply.truncate:
                self.close_connection = True

    return Handler


def openai_ok(text: str = "good", **usage: Any) -> Reply:
    """What an OpenAI-compatible server answers to a chat completion: ``text``, and usage."""
    body = {
        "id": "x",
        "model": "served-model",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 12, "completion_tokens": 3, **usage},
    }
    return Reply(200, body)
