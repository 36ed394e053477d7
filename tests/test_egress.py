"""The egress proxy and its allow-list (:mod:`reins.sandbox.egress`, :mod:`reins.sandbox.allow`)
and the bridge that offers it inside a sandbox (:mod:`reins.sandbox.bridge`): what a program
may reach, what it may not, what is counted, and what a hostile request cannot do."""

from __future__ import annotations

import asyncio
import http.server
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reins.errors import ConfigError
from reins.sandbox.allow import Allowance, entry, of_url, target
from reins.sandbox.egress import BRIDGE, Egress


class Echo(http.server.BaseHTTPRequestHandler):
    """Says back the request line and body it got (HTTP/1.1, keep-alive)."""

    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        said = f"{self.command} {self.path} {body.decode()}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(said)))
        self.end_headers()
        self.wfile.write(said)

    do_GET = do_POST

    def log_message(self, *_: object) -> None:
        pass


@pytest.fixture
def upstream() -> Iterator[int]:
    """An HTTP server on 127.0.0.1: its port."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


async def ask(egress: Egress, request: bytes) -> bytes:
    """Send ``request`` to the proxy's socket; everything it answers until it closes."""
    reader, writer = await asyncio.open_unix_connection(egress.socket)
    writer.write(request)
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    return answer


def proxied(allowed: list[str], request: bytes) -> tuple[bytes, Egress]:
    async def go() -> tuple[bytes, Egress]:
        async with Egress(Allowance.of(allowed)) as egress:
            return await ask(egress, request), egress

    return asyncio.run(go())


# -- the allow-list -----------------------------------------------------------------------


def test_entries_as_written() -> None:
    assert entry("PyPI.org.").host == "pypi.org" and entry("pypi.org").ports == (443, 80)
    assert entry("127.0.0.1:8080").ports == (8080,)
    assert entry("[::1]:9").host == "::1" and entry("[::1]:9").ports == (9,)
    assert str(entry("*.example.com:8443")) == "*.example.com:8443"
    assert str(of_url("http://127.0.0.1:5/v1")) == "127.0.0.1:5"
    assert str(of_url("https://api.openai.com/v1")) == "api.openai.com:443"


@pytest.mark.parametrize(
    "written",
    ["", "http://pypi.org", "pypi.org/simple", "a b", "pypi.org:0", "pypi.org:65536", "x:y",
     "*", "*.", "a..b", "-x.org", "[::1]x", "host:80:90", "évil.org"],
)  # fmt: skip
def test_an_entry_that_is_no_host_is_refused(written: str) -> None:
    with pytest.raises(ConfigError):
        entry(written)


def test_what_an_allowance_permits() -> None:
    allowed = Allowance.of(["pypi.org", "*.example.com", "127.0.0.1:8080"])
    assert allowed.permits("PYPI.ORG", 443) and allowed.permits("pypi.org", 80)
    assert not allowed.permits("pypi.org", 8080)
    assert allowed.permits("a.b.example.com", 443) and not allowed.permits("example.com", 443)
    assert not allowed.permits("notexample.com", 443)
    assert allowed.permits("127.0.0.1", 8080) and not allowed.permits("127.0.0.1", 5432)
    assert not allowed.permits("localhost", 8080)  # as written: no widening by what it means
    assert allowed.loopback() == (("127.0.0.1", 8080),)


@pytest.mark.parametrize(
    "asked",
    ["evil.org:443\r\nHost: x", "a@b:80", "host:0", "host:65536", "host", ":80", "x" * 300 + ":1",
     "[::1:80", "host:80 ", "host:-1"],
)  # fmt: skip
def test_a_hostile_destination_is_no_target(asked: str) -> None:
    assert target(asked) is None


@given(st.text(max_size=80))
def test_a_target_is_a_plain_name_and_a_port_or_nothing(asked: str) -> None:
    found = target(asked)
    if found is not None:
        host, port = found
        assert 0 < port < 65536
        assert all(c.isascii() and (c.isalnum() or c in "._-:") for c in host), host


# -- the proxy ----------------------------------------------------------------------------


def test_an_allowed_connect_is_carried_both_ways(upstream: int) -> None:
    where = f"127.0.0.1:{upstream}"
    request = f"CONNECT {where} HTTP/1.1\r\nHost: {where}\r\n\r\n".encode()
    request += b"POST /v1/messages HTTP/1.1\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi"
    answer, egress = proxied([where], request)
    assert answer.startswith(b"HTTP/1.1 200 Connection established\r\n\r\nHTTP/1.1 200")
    assert answer.endswith(b"POST /v1/messages hi")
    assert egress.refusals().count == 0 and egress.passed[where] == 1


def test_an_absolute_request_goes_in_origin_form_one_per_connection(upstream: int) -> None:
    where = f"127.0.0.1:{upstream}"
    request = (
        f"POST http://{where}/v1/chat?x=1 HTTP/1.1\r\nHost: {where}\r\nContent-Length: 4\r\n"
        "Proxy-Authorization: Basic c2VjcmV0\r\nConnection: keep-alive\r\n\r\nbody"
    ).encode()
    answer, _ = proxied([where], request)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert body == b"POST /v1/chat?x=1 body"
    assert b"Connection: close" in head.split(b"\r\n")


@pytest.mark.parametrize(
    ("request_line", "status", "counted"),
    [
        ("CONNECT 127.0.0.1:{other} HTTP/1.1", b"403", "127.0.0.1:{other}"),
        ("GET http://127.0.0.1:{other}/ HTTP/1.1", b"403", "127.0.0.1:{other}"),
        ("CONNECT example.com:443 HTTP/1.1", b"403", "example.com:443"),
        ("CONNECT localhost:{port} HTTP/1.1", b"403", "localhost:{port}"),
        ("GET https://127.0.0.1:{port}/ HTTP/1.1", b"400", "(not an absolute http:// request)"),
        ("GET / HTTP/1.1", b"400", "(not an absolute http:// request)"),
        ("CONNECT evil.org:443@127.0.0.1:{port} HTTP/1.1", b"400", "(malformed CONNECT)"),
        ("HELLO", b"400", "(not a proxy request)"),
    ],
)
def test_anything_else_is_refused_counted_and_told_why(
    upstream: int, request_line: str, status: bytes, counted: str
) -> None:
    other = upstream + 1 if upstream < 65535 else upstream - 1
    line = request_line.format(port=upstream, other=other)
    answer, egress = proxied([f"127.0.0.1:{upstream}"], f"{line}\r\nHost: x\r\n\r\n".encode())
    assert answer.split(b" ")[1] == status, answer
    assert b"is not allowed for this agent" in answer
    assert egress.refusals().count == 1
    assert egress.refusals().destinations == (counted.format(port=upstream, other=other),)
    assert not egress.passed


def test_a_name_of_another_host_that_resolves_here_is_refused() -> None:
    """A DNS answer is not a permit: an allowed name that resolves to loopback is refused
    (the dashboard, a ledger's port). This machine's own name stands in for such a name."""
    name = socket.gethostname()
    try:
        here = {str(a[4][0]) for a in socket.getaddrinfo(name, 80, type=socket.SOCK_STREAM)}
    except OSError:
        pytest.skip(f"{name} does not resolve here")
    if not any(a.startswith("127.") or a == "::1" for a in here):
        pytest.skip(f"{name} does not resolve to loopback here")
    answer, _ = proxied([f"{name}:80"], f"CONNECT {name}:80 HTTP/1.1\r\n\r\n".encode())
    assert answer.startswith(b"HTTP/1.1 403") and b"resolves to this machine" in answer


def test_refusals_say_how_often_and_where() -> None:
    async def go() -> Egress:
        async with Egress(Allowance()) as egress:
            for _ in range(3):
                await ask(egress, b"CONNECT a.org:443 HTTP/1.1\r\n\r\n")
            await ask(egress, b"CONNECT b.org:80 HTTP/1.1\r\n\r\n")
            return egress

    egress = asyncio.run(go())
    assert str(egress.refusals()) == "4 refused: a.org:443 x3, b.org:80"
    assert not os.path.exists(egress.folder)  # the socket's folder went with it


# -- the bridge ---------------------------------------------------------------------------


def bridged(child: str, *forwards: str) -> subprocess.CompletedProcess[str]:
    """``child`` (Python code) run by the bridge on this host, its proxy an Egress allowing
    ``forwards`` (its loopback destinations, forwarded as they are)."""

    async def go() -> subprocess.CompletedProcess[str]:
        async with Egress(Allowance.of(list(forwards))) as egress:
            argv = [sys.executable, "-I", "-S", BRIDGE, egress.socket, *forwards, "--",
                    sys.executable, "-c", child]  # fmt: skip
            proc = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.PIPE)
            out, _ = await asyncio.wait_for(proc.communicate(), 60)
            assert proc.returncode is not None
            return subprocess.CompletedProcess(argv, proc.returncode, out.decode(), "")

    return asyncio.run(go())


def test_the_bridge_offers_the_proxy_and_ends_as_its_program_ended(upstream: int) -> None:
    child = (
        "import os, urllib.request\n"
        "print(os.environ['HTTPS_PROXY'] == os.environ['http_proxy'], 'NO_PROXY' in os.environ)\n"
        f"print(urllib.request.urlopen('http://127.0.0.1:{upstream}/x').read().decode())\n"
        "raise SystemExit(3)\n"
    )
    done = bridged(child, f"127.0.0.1:{upstream}")
    assert done.returncode == 3
    assert done.stdout.splitlines() == ["True False", "GET /x "]


def test_a_program_killed_by_a_signal_ends_the_bridge_by_it() -> None:
    done = bridged("import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n")
    assert done.returncode == -signal.SIGTERM
