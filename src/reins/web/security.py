"""Who may use the dashboard: the access token, the CSRF token, and the Host check.

- **Token**: bound to anything but loopback, every request must carry the token printed at
  start (a ``?token=`` link once, which sets a cookie; or an ``Authorization: Bearer`` header).
- **CSRF**: every state-changing request carries this process's CSRF token (a hidden form
  field or an ``X-CSRF-Token`` header) and, if the browser sent one, an Origin of this server.
  The token lives only in pages this server rendered, which another site cannot read.
- **Host**: bound to loopback, the Host header must name loopback too, so a site that points
  its own name at 127.0.0.1 (DNS rebinding) cannot read the pages and their CSRF token.
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from dataclasses import dataclass
from urllib.parse import urlsplit

TOKEN_COOKIE = "reins_token"
CSRF_FIELD = "csrf"
CSRF_HEADER = "x-csrf-token"
LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address, IPv6 maybe in brackets) is this machine only."""
    name = host.strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _same(a: str | None, b: str) -> bool:
    return a is not None and hmac.compare_digest(a.encode(), b.encode())


@dataclass(frozen=True, slots=True)
class Guard:
    """This server's secrets: ``token`` (None: no token needed) and ``csrf``."""

    token: str | None
    csrf: str
    loopback: bool

    @classmethod
    def for_host(cls, host: str, *, token: bool = False) -> Guard:
        """A guard for a server bound to ``host``: a token is made when ``token`` is asked or
        the host is not loopback (then it is required)."""
        loopback = is_loopback(host)
        made = secrets.token_urlsafe(24) if token or not loopback else None
        return cls(made, secrets.token_urlsafe(24), loopback)

    def admits(self, *, cookie: str | None, bearer: str | None, query: str | None) -> bool:
        """Whether a request carries the access token (always, when none is needed)."""
        if self.token is None:
            return True
        return any(_same(given, self.token) for given in (cookie, bearer, query))

    def host_ok(self, host_header: str | None) -> bool:
        """Bound to loopback, the request must be addressed to a loopback name."""
        if not self.loopback:
            return True  # the token stands guard instead
        if not host_header:
            return False
        return is_loopback(urlsplit(f"//{host_header}").hostname or "")

    def csrf_ok(self, given: str | None, *, origin: str | None, host: str | None) -> bool:
        """Whether a state-changing request carries our CSRF token and comes from our pages."""
        if not _same(given, self.csrf):
            return False
        if origin is None:
            return True  # older browsers and scripts send none: the token alone decides
        return urlsplit(origin).netloc == (host or "")
