"""Who may use the dashboard: the access token, the CSRF token, and the Host check.

- **Token**: made at every start and printed as a ``?token=`` link, opened once, which sets a
  cookie (or sent as an ``Authorization: Bearer`` header). Every request that changes state must
  carry it, on loopback too: any local process can reach a loopback port and read a page's CSRF
  token, so only the token shows a request comes from someone given the printed link.
  Bound to anything but loopback (or asked with ``--token``), reading needs it too.
- **Reviewers**: given names (``reins serve --reviewer ann``), the one shared token is gone and
  each person has a token of their own, bound to their name (:mod:`reins.web.people`): the name
  an action records is the one its token carries (:meth:`Guard.signer`), never a typed one.
- **CSRF**: every state-changing request carries this process's CSRF token (a hidden form
  field or an ``X-CSRF-Token`` header) and, if the browser sent one, an Origin of this server.
  The token lives only in pages this server rendered, which another site cannot read.
- **Host**: bound to loopback, the Host header must name loopback too, so a site that points
  its own name at 127.0.0.1 (DNS rebinding) cannot read the pages and their CSRF token.
- **Seal**: what an action sends the person back to the queue with (the banner that says
  what was done, and the decision its Undo names) is signed with a secret of this start
  (:meth:`Guard.sign`); the queue shows a banner only under its signature, so no link can
  make a page say what the server did not do.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from starlette.requests import Request

TOKEN_COOKIE = "reins_token"
CSRF_FIELD = "csrf"
CSRF_HEADER = "x-csrf-token"
READING_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})  # change no state
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
    """This server's secrets: the access ``token`` and the ``cookie`` that carries it, and the
    ``csrf`` token. ``token_to_read``: pages need the token too, not only actions; ``seal``:
    the key this server signs what it says of its own actions with (:meth:`sign`)."""

    token: str
    csrf: str
    cookie: str
    loopback: bool
    token_to_read: bool
    seal: str = field(default_factory=lambda: secrets.token_urlsafe(24), repr=False)
    # (name, token) of each reviewer; none: the one shared ``token`` admits whoever holds it.
    people: tuple[tuple[str, str], ...] = field(default=(), repr=False)

    @classmethod
    def for_host(
        cls, host: str, *, token_to_read: bool = False, people: tuple[tuple[str, str], ...] = ()
    ) -> Guard:
        """A guard for a server bound to ``host``. Off loopback, reading needs the token too.
        ``people``: each reviewer's (name, token) (:func:`reins.web.people.roster`)."""
        loopback = is_loopback(host)
        # Cookies are shared by every port of a host: a cookie name of this server's own keeps
        # two dashboards on one machine from overwriting each other's token.
        cookie = f"{TOKEN_COOKIE}_{secrets.token_hex(4)}"
        return cls(
            token=secrets.token_urlsafe(24),
            csrf=secrets.token_urlsafe(24),
            cookie=cookie,
            loopback=loopback,
            token_to_read=token_to_read or not loopback,
            people=people,
        )

    def needs_token(self, method: str) -> bool:
        """Whether a request of ``method`` must carry the access token: one that changes state
        always; one that reads when :attr:`token_to_read`."""
        return self.token_to_read or method.upper() not in READING_METHODS

    def admits(self, *, cookie: str | None, bearer: str | None, query: str | None) -> bool:
        """Whether a request carries an access token (the shared one, or a reviewer's)."""
        return any(self.signer(given) is not None for given in (cookie, bearer, query))

    def signer(self, given: str | None) -> str | None:
        """Who ``given`` signs in: a reviewer's name for their token, "" for the shared token
        (whoever holds it), None for no token of this server's. With reviewers named, the
        shared token admits no one: every action is someone's."""
        if not given:
            return None
        if not self.people:
            return "" if _same(given, self.token) else None
        found = [name for name, token in self.people if _same(given, token)]
        return found[0] if found else None

    def host_ok(self, host_header: str | None) -> bool:
        """Bound to loopback, the request must be addressed to a loopback name."""
        if not self.loopback:
            return True  # the token stands guard instead
        if not host_header:
            return False
        return is_loopback(urlsplit(f"//{host_header}").hostname or "")

    def sign(self, *parts: str) -> str:
        """This server's signature of ``parts`` (a banner's text, the item and the turn its
        Undo names): only this start of the server can make it."""
        text = json.dumps(parts, ensure_ascii=True).encode()
        return hmac.new(self.seal.encode(), text, hashlib.sha256).hexdigest()[:32]

    def signed(self, signature: str | None, *parts: str) -> bool:
        """Whether ``signature`` is this server's :meth:`sign` of ``parts``."""
        return signature is not None and _same(signature, self.sign(*parts))

    def csrf_ok(self, given: str | None, *, origin: str | None, host: str | None) -> bool:
        """Whether a state-changing request carries our CSRF token and comes from our pages."""
        if not _same(given, self.csrf):
            return False
        if origin is None:
            return True  # older browsers and scripts send none: the token alone decides
        return urlsplit(origin).netloc == (host or "")


def signed_in(request: Request) -> bool:
    """Whether the dashboard's guard found the access token on ``request`` (false where no
    guard looked: an app served without it acts for no one)."""
    return getattr(request.state, "signed_in", False) is True


def reviewer(request: Request) -> str | None:
    """The reviewer whose own token ``request`` carries (None: the shared token, or none)."""
    name = getattr(request.state, "reviewer", None)
    return name if isinstance(name, str) and name else None
