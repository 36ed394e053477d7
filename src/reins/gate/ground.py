"""Grounds: the outside facts a rule may read, resolved once per evaluation and never by a rule.

A rule that reads a web page or a DNS record does not fetch it: it declares that it *needs* a
named ground, and the gate resolves the ground through a :class:`Resolver` into the context
before the rule runs. One :class:`Snapshot` per evaluation keeps every answer (value or error), so
several readers cost one call, and a retry of the same read sees the same answer.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar
from urllib.parse import urlsplit

from reins.errors import ConfigError, GroundError

if TYPE_CHECKING:
    import ipaddress

    import httpx

    from reins.gate.rule import Context

T = TypeVar("T")

Provider = Callable[["Context", "Snapshot"], Any]
"""Computes one named ground for a context, reading the outside world only through the snapshot."""


class Resolver(Protocol):
    """Reach outside the process. The only place a gate's side effects happen."""

    def fetch(self, url: str) -> str:
        """The body of ``url`` (a successful GET), as text. Raises on any failure."""
        ...

    def mx(self, domain: str) -> bool:
        """Whether ``domain`` publishes a usable MX record. Raises when it cannot tell."""
        ...


class _Cell:
    """One key's answer, computed by the first reader while the others wait."""

    __slots__ = ("busy", "done", "error", "lock", "value")

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.busy = False
        self.done = False
        self.value: Any = None
        self.error: BaseException | None = None


class Snapshot:
    """One evaluation's view of the outside world: each key resolved once, value or error kept.

    Safe to share between threads: concurrent readers of one key wait for a single resolver call;
    readers of different keys do not wait for each other.
    """

    def __init__(self, resolver: Resolver) -> None:
        self.resolver = resolver
        self._cells: dict[Hashable, _Cell] = {}
        self._lock = threading.Lock()

    def fetch(self, url: str) -> str:
        """The body at ``url``, fetched at most once per snapshot."""
        return self.once(("fetch", url), lambda: self.resolver.fetch(url))

    def mx(self, domain: str) -> bool:
        """Whether ``domain`` has an MX record, looked up at most once per snapshot."""
        name = domain.lower()
        return self.once(("mx", name), lambda: self.resolver.mx(name))

    def once(self, key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()`` the first time ``key`` is read; its value or its error ever after.

        Raises:
            GroundError: the computation failed (now or on the first read), or reads its own key.
        """
        with self._lock:
            cell = self._cells.setdefault(key, _Cell())
        with cell.lock:
            if not cell.done:
                if cell.busy:  # the RLock let this thread back in: the key depends on itself
                    raise GroundError(f"{_label(key)} depends on itself")
                cell.busy = True
                try:
                    try:
                        cell.value = compute()
                    except Exception as exc:
                        cell.error = exc
                    cell.done = True  # not on KeyboardInterrupt: the next reader tries again
                finally:
                    cell.busy = False
        if cell.error is not None:
            # A fresh error per read: the cached one is shared between threads.
            raise GroundError(_describe(key, cell.error)) from cell.error
        return cell.value  # type: ignore[no-any-return]


def _label(key: Hashable) -> str:
    if isinstance(key, tuple) and len(key) == 2:
        return f"{key[0]} {key[1]}"
    return str(key)


def _describe(key: Hashable, exc: BaseException) -> str:
    text = str(exc) if isinstance(exc, GroundError) else f"{type(exc).__name__}: {exc}"
    label = _label(key)
    return text if text.startswith(label) else f"{label}: {text}"


REDIRECTS = frozenset({301, 302, 303, 307, 308})


@dataclass(frozen=True, slots=True)
class NetResolver:
    """The default resolver: HTTP(S) GET through httpx, MX through dnspython, both guarded.

    A fetch refuses any host that resolves to a private, loopback, link-local, site-local,
    multicast, reserved or otherwise non-global address (SSRF) — an IPv6 address wrapping an IPv4
    one (mapped, compatible, 6to4, NAT64, Teredo) is judged by both — and a numeric host is read
    as the OS reads it (``0177.0.0.1`` is loopback). It checks every redirect target the same way,
    connects to the very address it checked (no second DNS answer can slip in), follows at most
    ``max_redirects`` redirects, reads at most ``max_bytes`` of body, and gives up after
    ``timeout`` seconds per network step and twice ``timeout`` in all for the body. Proxies from the
    environment are ignored.

    Args:
        timeout: seconds.
        max_bytes: the largest body accepted (after content decoding).
        max_redirects: redirects followed before giving up.
        allow: networks exempt from the address refusal, e.g. ``("127.0.0.1/32",)`` in tests.
        user_agent: sent with every request.
    """

    timeout: float = 10.0
    max_bytes: int = 2_000_000
    max_redirects: int = 5
    allow: tuple[str, ...] = ()
    user_agent: str = "reins-ground/1"
    _networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        import ipaddress

        if not self.timeout > 0:
            raise ConfigError(f"resolver timeout must be positive, got {self.timeout}")
        if self.max_bytes < 1 or self.max_redirects < 0:
            raise ConfigError("resolver max_bytes must be ≥ 1 and max_redirects ≥ 0")
        allow = (self.allow,) if isinstance(self.allow, str) else tuple(self.allow)
        try:
            networks = tuple(ipaddress.ip_network(n, strict=False) for n in allow)
        except ValueError as exc:
            raise ConfigError(f"resolver allow: {exc}") from exc
        object.__setattr__(self, "allow", allow)
        object.__setattr__(self, "_networks", networks)

    def fetch(self, url: str) -> str:
        """GET ``url`` and return its body as text.

        Raises:
            GroundError: refused address or scheme, non-2xx status, too many redirects, body too
                large, timeout, or any transport failure.
        """
        import httpx

        deadline = time.monotonic() + 2 * self.timeout
        try:
            target = httpx.URL(url)
        except httpx.InvalidURL as exc:
            self._check_numeric(url)
            raise GroundError(f"fetch {url}: not a URL ({exc})") from exc
        try:
            with httpx.Client(
                timeout=self.timeout,
                follow_redirects=False,
                trust_env=False,
                event_hooks={"response": [self._vet_location]},
            ) as client:
                for hop in range(self.max_redirects + 1):
                    response = self._open(client, target)
                    try:
                        if response.status_code in REDIRECTS and response.has_redirect_location:
                            if hop == self.max_redirects:
                                raise GroundError(
                                    f"fetch {url}: more than {self.max_redirects} redirects"
                                )
                            target = target.join(response.headers["location"])
                            continue
                        if not response.is_success:
                            raise GroundError(f"fetch {target}: status {response.status_code}")
                        return self._body(response, target, deadline)
                    finally:
                        response.close()
        except httpx.TimeoutException as exc:
            raise GroundError(f"fetch {target}: timed out after {self.timeout:g} s") from exc
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            raise GroundError(f"fetch {target}: {type(exc).__name__}: {exc}") from exc
        raise AssertionError("unreachable: the redirect loop always returns or raises")

    def mx(self, domain: str) -> bool:
        """Whether ``domain`` has an MX record other than the RFC 7505 null MX.

        No such domain, or no MX record, is False; a lookup that fails (timeout, no answer from
        any name server) raises.

        Raises:
            ConfigError: dnspython is not installed.
            GroundError: the lookup failed.
        """
        resolver, exception = _dnspython()
        try:
            answer = resolver.resolve(domain, "MX", lifetime=self.timeout)
        except (resolver.NXDOMAIN, resolver.NoAnswer):
            return False
        except exception.DNSException as exc:
            raise GroundError(f"mx {domain}: {type(exc).__name__}: {exc}") from exc
        return any(str(record.exchange) != "." for record in answer)

    def _open(self, client: httpx.Client, target: httpx.URL) -> httpx.Response:
        """Send a GET for ``target`` to an address checked here, never to a second DNS answer.

        Each checked address is tried in turn until one accepts the connection.
        """
        import httpx

        if target.scheme not in ("http", "https"):
            raise GroundError(f"fetch {target}: only http and https may be fetched")
        host = target.raw_host.decode("ascii")
        if not host:
            raise GroundError(f"fetch {target}: no host")
        port = target.port or (443 if target.scheme == "https" else 80)
        headers = {"Host": target.netloc.decode("ascii"), "User-Agent": self.user_agent}
        failure: httpx.ConnectError | None = None
        for address in self._addresses(host, port):
            request = client.build_request(
                "GET",
                target.copy_with(host=address),
                headers=headers,
                extensions={} if address == host else {"sni_hostname": host},
            )
            try:
                return client.send(request, stream=True)
            except httpx.ConnectError as exc:
                failure = exc
        assert failure is not None  # _addresses returns at least one address
        raise failure

    def _vet_location(self, response: httpx.Response) -> None:
        """Refuse a redirect to a numeric host that may not be reached, by what the host is.

        httpx parses the Location of every redirect as it receives it, before this resolver's
        own redirect handling sees the response, and fails on ``0177.0.0.1``; the target is
        checked again, like any other, when the redirect is followed.
        """
        if response.status_code in REDIRECTS and "location" in response.headers:
            self._check_numeric(response.headers["location"])

    def _check_numeric(self, url: str) -> None:
        """Refuse the host of ``url`` if it is a number the OS reads as a non-public address.

        For hosts httpx will not parse but the OS would reach: ``0177.0.0.1`` is 127.0.0.1 to
        inet_aton, an invalid address to httpx. Nothing is fetched either way, but the refusal
        should say loopback rather than "not a URL". Names are left alone: a name in a URL httpx
        refused is never sent to DNS.
        """
        import socket

        try:
            host = urlsplit(url).hostname
            if not host:
                return
            infos = socket.getaddrinfo(
                host, None, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICHOST
            )
        except (OSError, UnicodeError, ValueError):
            return  # not a number to the OS either: the caller's "not a URL" stands
        self._check(host, infos)

    def _addresses(self, host: str, port: int) -> list[str]:
        """Every address of ``host``, once each, after checking that all may be reached."""
        import socket

        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:
            raise GroundError(f"fetch: cannot resolve {host}: {exc}") from exc
        return self._check(host, infos)

    def _check(self, host: str, infos: list[Any]) -> list[str]:
        """The distinct addresses in getaddrinfo's ``infos``; raises unless all may be reached."""
        import ipaddress

        from reins.gate.address import forbidden

        addresses = list(dict.fromkeys(str(info[4][0]).partition("%")[0] for info in infos))
        if not addresses:
            raise GroundError(f"fetch: {host} has no address")
        for text in addresses:
            ip = ipaddress.ip_address(text)
            kind = forbidden(ip)
            if kind and not any(ip.version == n.version and ip in n for n in self._networks):
                shown = host if host == text else f"{host} ({text})"
                raise GroundError(f"fetch: refused {shown}: a {kind} address")
        return addresses

    def _body(self, response: httpx.Response, target: httpx.URL, deadline: float) -> str:
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_bytes:
            raise GroundError(f"fetch {target}: body of {declared} bytes exceeds {self.max_bytes}")
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > self.max_bytes:
                raise GroundError(f"fetch {target}: body exceeds {self.max_bytes} bytes")
            if time.monotonic() > deadline:
                raise GroundError(f"fetch {target}: body took longer than {2 * self.timeout:g} s")
            chunks.append(chunk)
        data = b"".join(chunks)
        try:
            return data.decode(response.encoding or "utf-8", "replace")
        except LookupError:
            return data.decode("utf-8", "replace")


def _dnspython() -> tuple[Any, Any]:
    """dnspython's resolver and exception modules, imported on first use."""
    import importlib

    try:
        return importlib.import_module("dns.resolver"), importlib.import_module("dns.exception")
    except ImportError as exc:
        raise ConfigError(
            "MX lookups need dnspython, which is not installed: pip install dnspython"
        ) from exc


def require_dnspython() -> None:
    """Fail at configuration time, not per item, when MX lookups cannot work.

    Raises:
        ConfigError: dnspython is not installed.
    """
    _dnspython()


@dataclass(frozen=True, slots=True, eq=False)
class FakeResolver:
    """A resolver that answers from tables and records every call, for tests. Thread-safe.

    Args:
        pages: URL → body, or an exception to raise.
        domains: domain → whether it has an MX record, or an exception to raise.
        delay: seconds each call sleeps first (to let concurrent readers pile up).

    An unknown URL or domain raises :class:`GroundError`.
    """

    pages: Mapping[str, str | Exception] = field(default_factory=dict)
    domains: Mapping[str, bool | Exception] = field(default_factory=dict)
    delay: float = 0.0
    calls: list[tuple[str, str]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def fetch(self, url: str) -> str:
        answer = self._answer("fetch", url, self.pages)
        if not isinstance(answer, str):
            raise TypeError(f"FakeResolver pages[{url!r}] must be text, got {answer!r}")
        return answer

    def mx(self, domain: str) -> bool:
        return bool(self._answer("mx", domain, self.domains))

    def _answer(self, kind: str, key: str, table: Mapping[str, T | Exception]) -> T:
        with self._lock:
            self.calls.append((kind, key))
        if self.delay:
            time.sleep(self.delay)
        if key not in table:
            raise GroundError(f"{kind} {key}: the fake resolver has no answer")
        answer = table[key]
        if isinstance(answer, Exception):
            raise answer
        return answer
