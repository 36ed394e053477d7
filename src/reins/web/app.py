"""The dashboard's routes: board, items, item, review queue, decisions, re-judge preview,
live pulse.

Every page reads through the Store protocol under one lock (a store is one connection or one
pool, used by one request at a time); every action (:mod:`reins.web.actions`) goes through the
human lane's functions, exactly as ``reins resolve`` and ``reins reopen`` call them.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypeVar
from urllib.parse import urlencode

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from reins.errors import ConfigError, NotFound
from reins.quest import Quest
from reins.store.model import State
from reins.store.protocol import Store
from reins.store.query import PageQuery
from reins.web.actions import Actions
from reins.web.board import board, own_figures, pulse
from reins.web.decided import decisions
from reins.web.desk import CLAIM_TTL, UNDO_WINDOW
from reins.web.listing import listing, read_filter
from reins.web.live import queue_now
from reins.web.queue import queue, rejudge_preview
from reins.web.render import STATIC, render
from reins.web.security import Guard, reviewer, signed_in
from reins.web.timeline import timeline

T = TypeVar("T")
# What a page may load: only this server's own script and styles, never a frame around it.
HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",  # "no-referrer" makes a form post's Origin "null"
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
REVIEW_PAGE = 20
DECIDED_PAGE = 50
REJUDGE_PAGE = 50  # items re-judged per preview page: each may run AI or command checks
NO_TOKEN = (
    "refused: this needs the dashboard's access token. Open the link `reins serve` printed "
    "when it started (it sets a cookie in this browser), or send `Authorization: Bearer TOKEN`."
)
STALE_LINK = (
    "refused: this link's token is not this server's (each start makes a new one). Open the "
    "link `reins serve` printed when it started."
)


@dataclass(frozen=True, slots=True)
class Site:
    """What every route shares: the ledger and its lock, the quest, the guard, the options."""

    store: Store
    quest: Quest | None
    guard: Guard
    read_only: bool
    by: str
    publish: Callable[[], object] | None
    lock: threading.Lock
    undo_window: float = UNDO_WINDOW

    @property
    def can_act(self) -> bool:
        """Actions need the quest (its human table decides them) and a writable server."""
        return not self.read_only and self.quest is not None

    def read(self, fn: Callable[[], T]) -> Awaitable[T]:
        def locked() -> T:
            with self.lock:
                return fn()

        return run_in_threadpool(locked)


class GuardMiddleware(BaseHTTPMiddleware):
    """The Host check, the access token (and its one-time link), and the security headers.

    A request that reads may go without the token where the guard allows it (on loopback);
    ``request.state.signed_in`` then tells the pages not to offer actions it could not take.
    """

    def __init__(self, app: object, guard: Guard) -> None:
        super().__init__(app)  # type: ignore[arg-type]
        self.guard = guard

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        guard = self.guard
        if not guard.host_ok(request.headers.get("host")):
            return _secured(PlainTextResponse("unknown host", status_code=421))
        given = request.query_params.get("token")
        bearer = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        carried = guard.admits(
            cookie=request.cookies.get(guard.cookie), bearer=bearer or None, query=given
        )
        if given is not None and not carried:
            # A link of an earlier start (each start makes a new token) says so, not "view only".
            return _secured(PlainTextResponse(STALE_LINK, status_code=401))
        if not carried and guard.needs_token(request.method):
            return _secured(PlainTextResponse(NO_TOKEN, status_code=401))
        request.state.signed_in = carried  # what security.signed_in reads
        # The reviewer the token names (None: the shared token, or none); a link just opened
        # signs in as its own person, whoever the cookie named before.
        found = [guard.signer(t) for t in (given, bearer, request.cookies.get(guard.cookie))]
        request.state.reviewer = next((n for n in found if n is not None), None) or None
        if given is not None:
            # The token leaves the address bar (and history) at once; the cookie carries it on.
            rest = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
            target = request.url.path + (f"?{urlencode(rest)}" if rest else "")
            response: Response = RedirectResponse(target, status_code=303)
            if found[0] is not None:  # an old link beside a good cookie keeps the cookie
                response.set_cookie(guard.cookie, given, httponly=True, samesite="strict")
            return _secured(response)
        return _secured(await call_next(request))


def _secured(response: Response) -> Response:
    response.headers.update(HEADERS)
    return response


def _page(
    site: Site, request: Request, template: str, status: int = 200, **context: object
) -> HTMLResponse:
    # Without the access token an action would be refused: the page offers none, and says why.
    token_missing = site.can_act and not signed_in(request)
    html = render(
        template,
        csrf=site.guard.csrf,
        can_act=site.can_act and not token_missing,
        token_missing=token_missing,
        read_only=site.read_only,
        quest=None if site.quest is None else site.quest.name,
        allowed=None if site.quest is None else site.quest.max_tries,
        by=site.by,
        # With reviewers named, who acts is the token's: no page offers a name to type.
        people=bool(site.guard.people),
        reviewer=reviewer(request),
        now=time.time(),  # what "3 min ago" is counted back from: this server's clock
        report=False,
        undo_window=site.undo_window,
        claim_ttl=CLAIM_TTL,
        **context,
    )
    return HTMLResponse(html, status_code=status)


def _problem(site: Site, request: Request, status: int, message: str) -> HTMLResponse:
    return _page(site, request, "problem.html", status, message=message, title="error")


def create_app(
    store: Store,
    quest: Quest | None,
    guard: Guard,
    *,
    read_only: bool = False,
    by: str = "web",
    publish: Callable[[], object] | None = None,
    undo_window: float = UNDO_WINDOW,
) -> Starlette:
    """The dashboard over ``store``. ``publish`` exports what an action locked (as the CLI
    does after ``resolve``); ``by`` is the person named on actions unless the form names one;
    ``undo_window``: seconds during which a decision can be undone from its banner."""
    site = Site(store, quest, guard, read_only, by, publish, threading.Lock(), undo_window)
    pages = Pages(site)
    routes: list[BaseRoute] = [
        Route("/", pages.board),
        Route("/api/pulse", pages.pulse),
        Route("/api/queue", pages.queue_now),
        Route("/items", pages.items),
        Route("/item", pages.item),
        Route("/review", pages.review),
        Route("/decided", pages.decided),
        Route("/rejudge", pages.rejudge),
        Route("/favicon.ico", favicon),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    if not read_only:
        actions = Actions(site, functools.partial(_problem, site))
        routes += [
            Route("/review/resolve", actions.resolve, methods=["POST"]),
            Route("/review/undo", actions.undo, methods=["POST"]),
            Route("/review/claim", actions.claim, methods=["POST"]),
            Route("/review/release", actions.release, methods=["POST"]),
            Route("/item/reopen", actions.reopen, methods=["POST"]),
        ]
    return Starlette(routes=routes, middleware=[Middleware(GuardMiddleware, guard=guard)])


async def favicon(request: Request) -> Response:
    """The icon a browser asks for at /favicon.ico whatever the page links: the dashboard's."""
    return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml")


@dataclass(frozen=True, slots=True)
class Pulse:
    """``/api/pulse``: the ledger's version, which changes whenever a turn is recorded."""

    version: int

    def to_json(self) -> dict[str, int]:
        return {"version": self.version}


class Pages:
    """The routes of one dashboard: each reads or acts on its :class:`Site`."""

    def __init__(self, site: Site) -> None:
        self.site = site

    async def board(self, request: Request) -> Response:
        site = self.site
        found = await site.read(lambda: board(site.store, site.quest))
        if request.query_params.get("fragment"):
            return _page(site, request, "_board.html", board=found, title="board")
        # The quest's own figures read every item: counted once per page load, not redrawn live.
        own = await site.read(lambda: own_figures(site.store, site.quest))
        return _page(site, request, "board.html", board=found, own=own, title="board")

    async def pulse(self, request: Request) -> Response:
        site = self.site
        return JSONResponse(Pulse(await site.read(lambda: pulse(site.store))).to_json())

    async def queue_now(self, request: Request) -> Response:
        """What changed in the review queue since a page showing the keys ``key`` was drawn
        under its filter (:mod:`reins.web.live`)."""
        site = self.site
        given = {name: request.query_params.get(name) for name in ("rule", "search", "after")}
        try:
            wanted = PageQuery.parse(given, base=PageQuery(limit=REVIEW_PAGE))
        except ConfigError as exc:
            return JSONResponse({"error": f"bad filter: {exc}"}, status_code=400)
        shown = request.query_params.getlist("key")
        found = await site.read(lambda: queue_now(site.store, wanted, shown))
        return JSONResponse(found.to_json())

    async def items(self, request: Request) -> Response:
        site = self.site
        try:
            wanted = read_filter(request.query_params)
        except ConfigError as exc:
            return _problem(site, request, 400, f"bad filter: {exc}")
        found = await site.read(lambda: listing(site.store, wanted))
        states = [s.value for s in State]
        return _page(site, request, "items.html", listing=found, states=states, title="items")

    async def item(self, request: Request) -> Response:
        site = self.site
        key = request.query_params.get("key", "")
        try:
            found = await site.read(lambda: timeline(site.store, site.quest, key))
        except NotFound as exc:
            return _problem(site, request, 404, str(exc))
        return _page(site, request, "item.html", timeline=found, title=key)

    async def review(self, request: Request) -> Response:
        site = self.site
        given = {name: request.query_params.get(name) for name in ("rule", "search", "after")}
        try:
            wanted = PageQuery.parse(given, base=PageQuery(limit=REVIEW_PAGE))
        except ConfigError as exc:
            return _problem(site, request, 400, f"bad filter: {exc}")
        found = await site.read(lambda: queue(site.store, site.quest, wanted))
        # The banner says what this server did, under its own signature; never a link's text.
        said = {k: request.query_params.get(k, "") for k in ("done", "undo", "turn")}
        ours = site.guard.signed(request.query_params.get("sig"), *said.values())
        shown = said if ours and said["done"] else {"done": None, "undo": None, "turn": None}
        return _page(site, request, "review.html", queue=found, title="review", **shown)

    async def decided(self, request: Request) -> Response:
        site = self.site
        before = request.query_params.get("before", "")
        if before and not (before.isascii() and before.isdigit()):
            return _problem(
                site, request, 400, f"bad cursor: before must be a whole number, not {before!r}"
            )
        today = datetime.now(UTC).strftime("%Y-%m-%dT00:00:00")  # the ledger's stamps are UTC
        found = await site.read(
            lambda: decisions(site.store, site.quest, int(before) if before else None,
                              DECIDED_PAGE, today)
        )  # fmt: skip
        return _page(site, request, "decided.html", decided=found, title="decided")

    async def rejudge(self, request: Request) -> Response:
        site, quest = self.site, self.site.quest
        if quest is None:
            return _problem(site, request, 409, "a re-judge preview needs the quest (--quest)")
        # A preview runs the gate (AI and command checks included) and records nothing, so a
        # GET carries no CSRF token; what a browser says of its origin keeps another site (an
        # <img> on any page, or another port of this host) from setting it off.
        if request.headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
            return _problem(site, request, 403, "a re-judge preview runs only from this dashboard")
        try:
            wanted = read_filter(request.query_params)
        except ConfigError as exc:
            return _problem(site, request, 400, f"bad filter: {exc}")
        # Of the filter, the preview reads the state and the cursor only.
        page = PageQuery(
            state=wanted.state, after=wanted.after, limit=min(wanted.limit, REJUDGE_PAGE)
        )
        found = await site.read(lambda: rejudge_preview(site.store, quest, page))
        return _page(site, request, "rejudge.html", preview=found, filter=wanted, title="re-judge")
