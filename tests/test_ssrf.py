"""The SSRF guard, as a table: every way of naming a non-public host is refused before any
connection is made — written directly in the URL, behind a DNS name, or as a redirect target.

Nothing here touches the network. ``socket.getaddrinfo`` answers the test's own names from a
table and everything else only as a numeric host (so ``0177.0.0.1`` resolves as the OS resolves
it, through inet_aton); every connection attempt is recorded, and only the test's own server
on 127.0.0.2 is ever really connected to.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from reins.gate import GroundError, NetResolver
from tests.kit import FakeServer, Reply, Seen

ORIGIN = "127.0.0.2"  # the test server: not 127.0.0.1, so that loopback targets stay refused

TEREDO = "2001:0:4136:e378:8000:63bf"  # server 65.54.227.120, flags and port

# (how the host is written in a URL, the address it means, the refusal's kind)
FORMS: list[tuple[str, str, str]] = [
    # IPv4 in the spellings inet_aton accepts
    ("127.0.0.1", "127.0.0.1", "loopback"),
    ("2130706433", "127.0.0.1", "loopback"),  # one decimal number
    ("0x7f.0.0.1", "127.0.0.1", "loopback"),  # hex part
    ("0x7f000001", "127.0.0.1", "loopback"),  # one hex number
    ("0177.0.0.1", "127.0.0.1", "loopback"),  # octal part: not 177.0.0.1
    ("127.1", "127.0.0.1", "loopback"),  # short form
    ("0", "0.0.0.0", "unspecified"),
    ("0.0.0.0", "0.0.0.0", "unspecified"),
    ("10.0.0.1", "10.0.0.1", "private"),
    ("172.16.0.1", "172.16.0.1", "private"),
    ("192.168.1.1", "192.168.1.1", "private"),
    ("169.254.169.254", "169.254.169.254", "link-local"),  # cloud metadata
    ("100.64.0.1", "100.64.0.1", "non-global"),  # carrier-grade NAT
    ("224.0.0.1", "224.0.0.1", "multicast"),
    ("240.0.0.1", "240.0.0.1", "reserved"),
    ("255.255.255.255", "255.255.255.255", "reserved"),
    # IPv6 proper
    ("[::1]", "::1", "loopback"),
    ("[::]", "::", "unspecified"),
    ("[fe80::1]", "fe80::1", "link-local"),
    ("[fec0::1]", "fec0::1", "site-local"),
    ("[fc00::1]", "fc00::1", "private"),  # unique local, fc00::/7
    ("[fd12:3456:789a::1]", "fd12:3456:789a::1", "private"),
    ("[ff02::1]", "ff02::1", "multicast"),
    ("[ff0e::1]", "ff0e::1", "multicast"),  # global scope, still multicast
    # IPv4 inside IPv6: the IPv4 host is what is reached
    ("[::ffff:127.0.0.1]", "::ffff:7f00:1", "loopback"),  # mapped
    ("[::ffff:169.254.169.254]", "::ffff:a9fe:a9fe", "link-local"),
    ("[::127.0.0.1]", "::7f00:1", "loopback"),  # compatible
    ("[::10.0.0.1]", "::a00:1", "private"),
    ("[2002:7f00:1::]", "2002:7f00:1::", "loopback"),  # 6to4 of 127.0.0.1
    ("[2002:a9fe:a9fe::1]", "2002:a9fe:a9fe::1", "link-local"),  # 6to4 of 169.254.169.254
    ("[2002:a00:1::]", "2002:a00:1::", "private"),  # 6to4 of 10.0.0.1
    ("[64:ff9b::7f00:1]", "64:ff9b::7f00:1", "loopback"),  # NAT64 of 127.0.0.1
    ("[64:ff9b::a9fe:a9fe]", "64:ff9b::a9fe:a9fe", "link-local"),
    ("[64:ff9b:1::a00:1]", "64:ff9b:1::a00:1", "private"),  # NAT64 local-use prefix
    ("[64:ff9b:1::808:808]", "64:ff9b:1::808:808", "reserved"),  # local-use, whatever it wraps
    # Teredo: the client address is stored inverted; these wrap 127.0.0.1 and 169.254.169.254
    (f"[{TEREDO}:80ff:fffe]", f"{TEREDO}:80ff:fffe", "loopback"),
    (f"[{TEREDO}:5601:5601]", f"{TEREDO}:5601:5601", "link-local"),
]  # fmt: skip

# Global unicast: the guard lets these through, to the (recorded, refused) connection.
PUBLIC = ["93.184.215.14", "[2606:4700:4700::1111]"]


@dataclass
class Net:
    """The test's view of the network: a DNS table and every connection attempted."""

    names: dict[str, list[str]] = field(default_factory=dict)
    looked_up: list[str] = field(default_factory=list)
    connects: list[tuple[str, int]] = field(default_factory=list)


@pytest.fixture
def net(monkeypatch: pytest.MonkeyPatch) -> Net:
    state = Net()
    real_getaddrinfo = socket.getaddrinfo
    real_connect = socket.socket.connect

    def getaddrinfo(
        host: Any, port: Any, family: int = 0, type: int = 0, proto: int = 0, flags: int = 0
    ) -> Any:
        name = host.decode() if isinstance(host, bytes) else str(host)
        state.looked_up.append(name)
        if name in state.names:
            return [
                (socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))
                if ipaddress.ip_address(address).version == 4
                else (socket.AF_INET6, socket.SOCK_STREAM, 6, "", (address, port, 0, 0))
                for address in state.names[name]
            ]
        # a numeric host as the OS reads it; any other name fails here, never reaching DNS
        return real_getaddrinfo(host, port, family, type, proto, flags | socket.AI_NUMERICHOST)

    def connect(sock: socket.socket, address: Any) -> None:
        state.connects.append((str(address[0]), int(address[1])))
        if address[0] != ORIGIN:
            raise ConnectionRefusedError("the test lets no connection leave the machine")
        real_connect(sock, address)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", connect)
    return state


def redirector(seen: Seen) -> Reply:
    """Answers ``/away?to=URL`` with a redirect to URL."""
    return Reply(302, headers={"Location": parse_qs(urlsplit(seen.path).query)["to"][0]})


@pytest.fixture
def origin() -> Iterator[str]:
    try:
        server = FakeServer(host=ORIGIN)
    except OSError as exc:  # pragma: no cover - every Linux routes all of 127.0.0.0/8
        pytest.skip(f"cannot listen on {ORIGIN}: {exc}")
    server.answer = redirector
    with server:
        yield server.url


def ids(forms: list[tuple[str, str, str]]) -> list[str]:
    return [host for host, _, _ in forms]


@pytest.mark.parametrize(("host", "address", "kind"), FORMS, ids=ids(FORMS))
def test_a_non_public_host_in_the_url_is_refused_unconnected(
    net: Net, host: str, address: str, kind: str
) -> None:
    with pytest.raises(GroundError, match=f"refused .*: a {kind} address"):
        NetResolver(timeout=1).fetch(f"http://{host}/latest/meta-data/")
    assert net.connects == []


@pytest.mark.parametrize(("host", "address", "kind"), FORMS, ids=ids(FORMS))
def test_a_name_resolving_to_a_non_public_address_is_refused_unconnected(
    net: Net, host: str, address: str, kind: str
) -> None:
    net.names["inside.example"] = [address]
    with pytest.raises(
        GroundError, match=rf"refused inside\.example \({address}\): a {kind} address"
    ):
        NetResolver(timeout=1).fetch("http://inside.example/")
    assert net.looked_up == ["inside.example"]
    assert net.connects == []


@pytest.mark.parametrize(("host", "address", "kind"), FORMS, ids=ids(FORMS))
def test_a_name_with_one_non_public_address_among_public_ones_is_refused(
    net: Net, host: str, address: str, kind: str
) -> None:
    net.names["mixed.example"] = ["93.184.215.14", address, "2606:4700:4700::1111"]
    with pytest.raises(GroundError, match=f"a {kind} address"):
        NetResolver(timeout=1).fetch("http://mixed.example/")
    assert net.connects == []


@pytest.mark.parametrize(("host", "address", "kind"), FORMS, ids=ids(FORMS))
def test_a_redirect_to_a_non_public_host_is_refused_before_following_it(
    net: Net, origin: str, host: str, address: str, kind: str
) -> None:
    net.names["inside.example"] = [address]
    resolver = NetResolver(timeout=2, allow=(f"{ORIGIN}/32",))
    for target in (f"http://{host}/", "http://inside.example/"):
        net.connects.clear()
        with pytest.raises(GroundError, match=f"refused .*: a {kind} address"):
            resolver.fetch(f"{origin}/away?to={target}")
        assert [a for a, _ in net.connects] == [ORIGIN]  # the origin only, never the target


@pytest.mark.parametrize("host", PUBLIC)
def test_a_public_address_passes_the_guard_to_the_connection(net: Net, host: str) -> None:
    """The control: the guard is not refusing everything, and connects are really seen."""
    with pytest.raises(GroundError, match="ConnectError"):
        NetResolver(timeout=1).fetch(f"http://{host}/")
    assert [a for a, _ in net.connects] == [host.strip("[]")]


def test_the_fake_network_resolves_numeric_hosts_as_the_os_does(net: Net) -> None:
    """0177.0.0.1 is octal to inet_aton: the table above rests on that."""
    for host, address, _ in FORMS:
        if not host.startswith("["):
            [info] = {i[4][0] for i in socket.getaddrinfo(host, 80, type=socket.SOCK_STREAM)}
            assert info == address, host
    with pytest.raises(socket.gaierror):
        socket.getaddrinfo("not-in-the-table.example", 80)
