"""A confined program's only way out: an HTTP proxy that reins runs outside the sandbox.

The program has a network namespace of its own (nothing but its loopback). The proxy listens
on a Unix socket that the sandbox shows it (:mod:`reins.sandbox.bridge` offers it inside as a
loopback ``HTTP(S)_PROXY``) and connects only where its :class:`~reins.sandbox.allow.Allowance`
says: ``CONNECT host:port`` (TLS, or any stream) and plain-HTTP requests in absolute form
(``GET http://host/…``), one request per connection. Everything else is refused with a 403
that says how to allow it, and counted (:class:`Refusals`): other loopback ports (the
dashboard, a PostgreSQL ledger), other hosts, names that resolve to this machine. The proxy
resolves names itself: the program has no DNS.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import ipaddress
import os
import shutil
import socket
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from reins.sandbox.allow import Allowance, target
from reins.sandbox.policy import Policy

HEAD_LIMIT = 64 * 1024
HEAD_SECONDS = 30.0
CONNECT_SECONDS = 30.0
CHUNK = 256 * 1024
KEPT = 20  # distinct destinations named in a refusal summary
DROPPED = ("connection", "keep-alive", "proxy-connection", "proxy-authorization", "te")
SOCKET_NAME = "egress.sock"
PATH_MAX = 100  # a Unix socket's path must fit in 108 bytes
BRIDGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bridge.py")
INSIDE = "/run/reins"
"""Where the sandbox shows the bridge and the proxy's socket (read-only: a socket connects)."""


@dataclass(frozen=True, slots=True)
class Refusals:
    """What a program's proxy refused: ``count`` connections, to ``destinations`` (the
    first :data:`KEPT` distinct ones, as the program named them, each ``host:port xN``)."""

    count: int = 0
    destinations: tuple[str, ...] = ()

    def __str__(self) -> str:
        if not self.count:
            return "none refused"
        return f"{self.count} refused: {', '.join(self.destinations)}"


class Egress:
    """One program run's proxy: start it (:meth:`start`), show :attr:`socket` to the program,
    :meth:`close` it after, read :meth:`refusals`."""

    def __init__(self, allowance: Allowance, folder: str | None = None) -> None:
        self.allowance = allowance
        self.folder = _socket_folder(folder)
        self.socket = os.path.join(self.folder, SOCKET_NAME)
        self.refused: Counter[str] = Counter()
        self.passed: Counter[str] = Counter()
        self._server: asyncio.base_events.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_unix_server(self._serve, self.socket, limit=HEAD_LIMIT)

    async def close(self) -> None:
        """Stop listening, end every connection still open, remove the socket's folder."""
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        shutil.rmtree(self.folder, ignore_errors=True)

    async def __aenter__(self) -> Egress:
        await self.start()
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    def behind(self, argv: Sequence[str], policy: Policy) -> tuple[list[str], Policy]:
        """``argv`` started by the bridge (:mod:`reins.sandbox.bridge`) under ``policy``
        without a network: its way out is this proxy, under the proxy's allowance."""
        python = os.path.realpath(sys.executable)  # the installation, not a virtual env
        forwards = [f"[{h}]:{p}" if ":" in h else f"{h}:{p}" for h, p in self.allowance.loopback()]
        inner = [python, "-I", "-S", f"{INSIDE}/bridge.py", f"{INSIDE}/egress/{SOCKET_NAME}",
                 *forwards, "--", *argv]  # fmt: skip
        placed = (
            *policy.placed,
            (BRIDGE, f"{INSIDE}/bridge.py"),
            (self.folder, f"{INSIDE}/egress"),
        )
        return inner, dataclasses.replace(policy, placed=placed, network=False)

    def refusals(self) -> Refusals:
        named = [f"{d} x{n}" if n > 1 else d for d, n in self.refused.most_common(KEPT)]
        return Refusals(sum(self.refused.values()), tuple(named))

    # -- one connection ------------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self._one(reader, writer)
        except (OSError, TimeoutError, asyncio.IncompleteReadError, ValueError):
            pass  # the program hung up, or asked something we cannot read: nothing to carry
        except asyncio.CancelledError:
            pass  # closed with the run: the connection ends here
        finally:
            self._tasks.discard(task)
            writer.close()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEAD_SECONDS)
        line, _, rest = head.partition(b"\r\n")
        words = line.decode("latin-1").split(" ")
        if len(words) != 3 or not words[2].startswith("HTTP/1."):
            return self._refuse(writer, "(not a proxy request)", 400)
        method, where, _version = words
        if method == "CONNECT":
            dest = target(where)
            if dest is None:
                return self._refuse(writer, "(malformed CONNECT)", 400)
            upstream = await self._open(writer, *dest)
            if upstream is None:
                return None
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            return await _splice(reader, writer, *upstream)
        parts = urlsplit(where)
        try:
            port = parts.port or 80
        except ValueError:
            port = 0
        dest = target(f"{parts.hostname or ''}:{port}") if parts.scheme == "http" else None
        if dest is None:
            return self._refuse(writer, "(not an absolute http:// request)", 400)
        upstream = await self._open(writer, *dest)
        if upstream is None:
            return None
        up_reader, up_writer = upstream
        path = parts.path or "/"
        path += f"?{parts.query}" if parts.query else ""
        up_writer.write(_head(f"{method} {path} HTTP/1.1", rest))
        return await _splice(reader, writer, up_reader, up_writer, rewrite=True)

    async def _open(
        self, writer: asyncio.StreamWriter, host: str, port: int
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        """The connection to ``host:port`` when allowed, else the refusal written."""
        shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        if not self.allowance.permits(host, port):
            self._refuse(writer, shown, 403)
            return None
        try:
            found = await _resolve(host, port)
        except OSError:
            self._fail(writer, f"cannot resolve {host}")
            return None
        addresses = [(f, a) for f, a in found if self.allowance.loopback_ok(host) or not _here(a)]
        if not addresses:
            self._refuse(writer, f"{shown} (resolves to this machine)", 403)
            return None
        family, address = addresses[0]
        try:
            opened = await asyncio.wait_for(
                asyncio.open_connection(address, port, family=family), CONNECT_SECONDS
            )
        except (TimeoutError, OSError) as exc:
            self._fail(writer, f"cannot connect to {shown}: {exc}")
            return None
        self.passed[shown] += 1
        return opened

    def _refuse(self, writer: asyncio.StreamWriter, shown: str, status: int) -> None:
        self.refused[shown if len(self.refused) < 100 or shown in self.refused else "…"] += 1
        hint = (
            f'; the quest may allow it: [workspace] network = ["{shown}"]'
            if status == 403 and "(" not in shown
            else ""
        )
        _answer(writer, status, f"reins: {shown} is not allowed for this agent{hint}\n")

    def _fail(self, writer: asyncio.StreamWriter, why: str) -> None:
        _answer(writer, 502, f"reins: {why}\n")


def _answer(writer: asyncio.StreamWriter, status: int, text: str) -> None:
    body = text.encode("utf-8", "replace")
    reason = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}[status]
    writer.write(
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
        + body
    )


def _head(first: str, rest: bytes) -> bytes:
    """A request or response head with ``first`` as its first line, the hop-by-hop headers
    dropped and ``Connection: close`` said: one request per connection."""
    kept = [
        h
        for h in rest.split(b"\r\n")
        if h and h.split(b":", 1)[0].strip().lower().decode("latin-1") not in DROPPED
    ]
    return b"\r\n".join([first.encode("latin-1"), *kept, b"Connection: close", b"", b""])


async def _splice(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    up_reader: asyncio.StreamReader,
    up_writer: asyncio.StreamWriter,
    *,
    rewrite: bool = False,
) -> None:
    """Copy both ways until both ends are done (``rewrite``: the response's head says
    ``Connection: close``, so the program asks its next request on a new connection)."""
    try:
        if rewrite:
            to_server = asyncio.ensure_future(_copy(reader, up_writer))  # the request's body
            try:
                response = await up_reader.readuntil(b"\r\n\r\n")
                first, _, rest = response.partition(b"\r\n")
                writer.write(_head(first.decode("latin-1"), rest))
                await _copy(up_reader, writer)
            finally:
                to_server.cancel()
        else:
            await asyncio.gather(_copy(reader, up_writer), _copy(up_reader, writer))
    finally:
        up_writer.close()


async def _copy(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    try:
        while data := await source.read(CHUNK):
            sink.write(data)
            await sink.drain()
        if sink.can_write_eof():
            sink.write_eof()
    except (OSError, RuntimeError):
        pass


async def _resolve(host: str, port: int) -> list[tuple[int, str]]:
    """``host``'s addresses, (family, address): an address as it is (the resolver's thread
    costs a loopback call more than all the rest), a name through the system's resolver."""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        found = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
        return [(family, str(address[0])) for family, _, _, _, address in found]
    return [(socket.AF_INET6 if ip.version == 6 else socket.AF_INET, str(ip))]


def _here(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    return ip.is_loopback or ip.is_unspecified


def _socket_folder(preferred: str | None) -> str:
    """A fresh private folder for the socket: below ``preferred`` where the path fits a
    Unix socket's, else in the system's temporary folder."""
    if preferred is not None and len(preferred) + 30 < PATH_MAX:
        os.makedirs(preferred, exist_ok=True)
        return tempfile.mkdtemp(prefix="egress-", dir=preferred)
    with contextlib.suppress(OSError):
        if len(tempfile.gettempdir()) + 30 < PATH_MAX:
            return tempfile.mkdtemp(prefix="reins-egress-")
    return tempfile.mkdtemp(prefix="reins-egress-", dir="/tmp")
