"""Where a confined program may connect: the allow-list its egress proxy keeps.

An entry is ``host`` (ports 443 and 80), ``host:port``, or ``*.domain`` / ``*.domain:port``
(every name below the domain, not the domain itself); an IPv6 address is written in brackets
(``[::1]:8080``). Names match as written, case aside: no entry is widened by what a name
resolves to, and a name that is not this machine's own may not resolve to a loopback address
(:meth:`Allowance.loopback_ok`), so a DNS answer cannot open the dashboard or a ledger's port.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from reins.errors import ConfigError

DEFAULT_PORTS = (443, 80)
LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})
_NAME = re.compile(r"(?:\*\.)?[a-z0-9_](?:[a-z0-9_.-]{0,251}[a-z0-9_])?")
_TARGET = re.compile(r"[A-Za-z0-9_.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\]")


@dataclass(frozen=True, slots=True)
class Entry:
    """One allowed destination: ``host`` (lower case, an IPv6 address without brackets, or
    ``*.domain``) on ``ports``."""

    host: str
    ports: tuple[int, ...]

    def permits(self, host: str, port: int) -> bool:
        if port not in self.ports:
            return False
        if self.host.startswith("*."):
            return host.endswith(self.host[1:])
        return host == self.host

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.ports == DEFAULT_PORTS else f"{host}:{self.ports[0]}"


@dataclass(frozen=True, slots=True)
class Allowance:
    """The destinations a program may reach, each an :class:`Entry`."""

    entries: tuple[Entry, ...] = ()

    @classmethod
    def of(cls, written: tuple[str, ...] | list[str], *, where: str = "network") -> Allowance:
        """The allowance ``written`` says (entries as :func:`entry` reads them).

        Raises:
            ConfigError: an entry is not a host, ``host:port`` or ``*.domain``.
        """
        return cls(tuple(dict.fromkeys(entry(text, where=where) for text in written)))

    def __add__(self, other: Allowance) -> Allowance:
        return Allowance(tuple(dict.fromkeys((*self.entries, *other.entries))))

    def permits(self, host: str, port: int) -> bool:
        """Whether a connection to ``host`` (as the program named it) and ``port`` may go."""
        name = plain(host)
        return any(e.permits(name, port) for e in self.entries)

    def loopback_ok(self, host: str) -> bool:
        """Whether ``host`` may reach this machine: only a loopback name or address may; a
        name of another host that resolves here is refused (a DNS answer is not a permit)."""
        return is_loopback(plain(host))

    def loopback(self) -> tuple[tuple[str, int], ...]:
        """The allowed destinations on this machine, (host, port): a program that ignores a
        proxy reaches these through a forward of the same port inside its sandbox."""
        return tuple(
            (e.host, port)
            for e in self.entries
            if not e.host.startswith("*.") and is_loopback(e.host)
            for port in e.ports
        )

    def __str__(self) -> str:
        return ", ".join(str(e) for e in self.entries) or "nothing"


def entry(text: str, *, where: str = "network") -> Entry:
    """One entry as written: ``host``, ``host:port``, ``*.domain``, ``[v6]:port``.

    Raises:
        ConfigError: it is none of these.
    """
    if not isinstance(text, str):
        raise ConfigError(f"{where}: expected a host or host:port, not {text!r:.60}")
    written = text.strip().lower()
    if "://" in written or "/" in written:
        raise ConfigError(f"{where}: {text!r:.60} is not a host: write the host alone, as "
                          '"pypi.org" or "pypi.org:443"')  # fmt: skip
    host, port = written, None
    if written.startswith("["):
        inside, _, rest = written[1:].partition("]")
        host = inside
        if rest:
            port = rest.removeprefix(":") if rest.startswith(":") else "bad"
    elif written.count(":") == 1:
        host, port = written.split(":")
    host = host.rstrip(".")
    if not _valid_host(host):
        raise ConfigError(
            f"{where}: {text!r:.60} is not a host, host:port or *.domain (as "
            '"api.example.com", "127.0.0.1:8080", "*.example.com")'
        )
    if port is None:
        return Entry(host, DEFAULT_PORTS)
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"{where}: {text!r:.60}: the port must be a number from 1 to 65535")
    return Entry(host, (int(port),))


def of_url(url: str) -> Entry:
    """The destination of an http(s) URL (its port, else the scheme's).

    Raises:
        ConfigError: not an http(s) URL with a host.
    """
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
        parts = parts._replace(netloc="")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{url!r:.80} is not an http:// or https:// URL with a host")
    port = port or (443 if parts.scheme == "https" else 80)
    host = parts.hostname.rstrip(".")
    return entry(f"[{host}]:{port}" if ":" in host else f"{host}:{port}", where="url")


def target(text: str) -> tuple[str, int] | None:
    """A ``host:port`` a program asked the proxy for, or None when it is not one (hostile
    input: only a name's or an address's characters, and a port)."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536 or not _TARGET.fullmatch(host):
        return None
    return plain(host), int(port)


def plain(host: str) -> str:
    """A host as matched: lower case, no brackets, no final dot."""
    return host.strip("[]").lower().rstrip(".")


def is_loopback(host: str) -> bool:
    """Whether ``host`` (plain) names this machine only."""
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _valid_host(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return bool(_NAME.fullmatch(host)) and ".." not in host
