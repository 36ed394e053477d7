"""The dashboard's routes: board, items, item, review queue, re-judge preview, live pulse.

Every page reads through the Store protocol under one lock (a store is one connection or one
pool, used by one request at a time); every action goes through the human lane's functions,
exactly as ``reins resolve`` and ``reins reopen`` call them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar
from urllib.parse import parse_qsl, urlencode

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from reins.errors import ConfigError, NotFound, ReinsError
from reins.quest import Quest
from reins.store.model import State
from reins.store.protocol import Store
from reins.store.query import PageQuery
from reins.web.board import board, pulse
from reins.web.listing import listing, read_filter
from reins.web.queue import queue, rejudge_preview
from reins.web.render import STATIC, render
from reins.web.security import CSRF_FIELD, CSRF_HEADER, TOKEN_COOKIE, Guard
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
REJUDGE_PAGE = 50  # items re-judged per preview page: each may run AI or command checks


@dataclass(frozen=True, slots=True)
class Site:
    """What every route shares: the ledger and its lock, the quest, the guard, the options."""

    store: Store
    quest: Quest | None
    guard: Guard
    read_only: bool
    by: str
    publish: Callable[[], int] | None
    lock: threading.Lock

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
    """The Host check, the access token (and its one-time link), and the security headers."""

    def __init__(self, app: object, guard: Guard) -> None:
        super().__init__(app)  # type: ignore[arg-type]
        self.guard = guard

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        guard = self.guard
        if not guard.host_ok(request.headers.get("host")):
            return _secured(PlainTextResponse("unknown host", status_code=421))
        given = request.query_params.get("token")
        bearer = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        if not guard.admits(
            cookie=request.cookies.get(TOKEN_COOKIE), bearer=bearer or None, query=given
        ):
            return _secured(PlainTextResponse("a token is required", status_code=401))
        if given is not None and guard.token is not None:
            # The token leaves the address bar (and history) at once; the cookie carries it on.
            rest = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
            target = request.url.path + (f"?{urlencode(rest)}" if rest else "")
            response: Response = RedirectResponse(target, status_code=303)
            response.set_cookie(TOKEN_COOKIE, guard.token, httponly=True, samesite="strict")
            return _secured(response)
        return _secured(await call_next(request))


def _secured(response: Response) -> Response:
    response.headers.update(HEADERS)
    return response


def _page(site: Site, template: str, status: int = 200, **context: object) -> HTMLResponse:
    html = render(
        template,
        csrf=site.guard.csrf,
        can_act=site.can_act,
        read_only=site.read_only,
        quest=None if site.quest is None else site.quest.name,
        allowed=None if site.quest is None else site.quest.max_tries,
        by=site.by,
        now=time.time(),  # what "3 min ago" is counted back from: this server's clock
        report=False,
        **context,
    )
    return HTMLResponse(html, status_code=status)


def _problem(site: Site, status: int, message: str) -> HTMLResponse:
    return _page(site, "problem.html", status, message=message, title="error")


def create_app(
    store: Store,
    quest: Quest | None,
    guard: Guard,
    *,
    read_only: bool = False,
    by: str = "web",
    publish: Callable[[], int] | None = None,
) -> Starlette:
    """The dashboard over ``store``. ``publish`` exports what an action locked (as the CLI
    does after ``resolve``); ``by`` is the person named on actions unless the form names one."""
    pages = Pages(Site(store, quest, guard, read_only, by, publish, threading.Lock()))
    routes: list[BaseRoute] = [
        Route("/", pages.board),
        Route("/api/pulse", pages.pulse),
        Route("/items", pages.items),
        Route("/item", pages.item),
        Route("/review", pages.review),
        Route("/rejudge", pages.rejudge),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    if not read_only:
        routes += [
            Route("/review/resolve", pages.resolve, methods=["POST"]),
            Route("/item/reopen", pages.reopen, methods=["POST"]),
        ]
    return Starlette(routes=routes, middleware=[Middleware(GuardMiddleware, guard=guard)])


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
        name = "_board.html" if request.query_params.get("fragment") else "board.html"
        return _page(site, name, board=found, title="board")

    async def pulse(self, request: Request) -> Response:
        site = self.site
        return JSONResponse(Pulse(await site.read(lambda: pulse(site.store))).to_json())

    async def items(self, request: Request) -> Response:
        site = self.site
        try:
            wanted = read_filter(request.query_params)
        except ConfigError as exc:
            return _problem(site, 400, f"bad filter: {exc}")
        found = await site.read(lambda: listing(site.store, wanted))
        return _page(
            site, "items.html", listing=found, states=[s.value for s in State], title="items"
        )

    async def item(self, request: Request) -> Response:
        site = self.site
        key = request.query_params.get("key", "")
        try:
            found = await site.read(lambda: timeline(site.store, site.quest, key))
        except NotFound as exc:
            return _problem(site, 404, str(exc))
        return _page(site, "item.html", timeline=found, title=key)

    async def review(self, request: Request) -> Response:
        site = self.site
        given = {name: request.query_params.get(name) for name in ("rule", "after")}
        try:
            wanted = PageQuery.parse(given, base=PageQuery(limit=REVIEW_PAGE))
        except ConfigError as exc:
            return _problem(site, 400, f"bad filter: {exc}")
        found = await site.read(lambda: queue(site.store, site.quest, wanted))
        done = request.query_params.get("done")
        return _page(site, "review.html", queue=found, done=done, title="review")

    async def rejudge(self, request: Request) -> Response:
        site, quest = self.site, self.site.quest
        if quest is None:
            return _problem(site, 409, "a re-judge preview needs the quest (--quest)")
        # A preview runs the gate (AI and command checks included) and records nothing, so a
        # GET carries no CSRF token; what a browser says of its origin keeps another site (an
        # <img> on any page, or another port of this host) from setting it off.
        if request.headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
            return _problem(site, 403, "a re-judge preview runs only from this dashboard")
        try:
            wanted = read_filter(request.query_params)
        except ConfigError as exc:
            return _problem(site, 400, f"bad filter: {exc}")
        # Of the filter, the preview reads the state and the cursor only.
        page = PageQuery(
            state=wanted.state, after=wanted.after, limit=min(wanted.limit, REJUDGE_PAGE)
        )
        found = await site.read(lambda: rejudge_preview(site.store, quest, page))
        return _page(site, "rejudge.html", preview=found, filter=wanted, title="re-judge")

    async def resolve(self, request: Request) -> Response:
        return await self.act(request, self.resolved)

    async def reopen(self, request: Request) -> Response:
        return await self.act(request, self.reopened)

    # -- actions ------------------------------------------------------------------------

    async def form(self, request: Request) -> dict[str, str] | Response:
        """The posted form, once its CSRF token and origin are checked (else the refusal)."""
        site = self.site
        body = (await request.body()).decode("utf-8", "replace")
        fields = dict(parse_qsl(body, keep_blank_values=True))
        given = fields.get(CSRF_FIELD) or request.headers.get(CSRF_HEADER)
        origin = request.headers.get("origin")
        if not site.guard.csrf_ok(given, origin=origin, host=request.headers.get("host")):
            return _problem(site, 403, "refused: the form's CSRF token is missing or wrong")
        if not site.can_act or site.quest is None:
            return _problem(site, 403, "refused: this dashboard is read-only")
        return fields

    async def act(
        self, request: Request, action: Callable[[Quest, dict[str, str]], str]
    ) -> Response:
        site = self.site
        fields = await self.form(request)
        if isinstance(fields, Response):
            return fields
        quest = site.quest
        assert quest is not None  # form() refuses without one

        def run() -> str:
            target = action(quest, fields)
            if site.publish is not None:
                site.publish()
            return target

        try:
            target = await site.read(run)
        except NotFound as exc:
            return _problem(site, 404, str(exc))
        except ReinsError as exc:
            return _problem(site, 409, str(exc))
        return RedirectResponse(target, status_code=303)

    def resolved(self, quest: Quest, fields: dict[str, str]) -> str:
        from reins.turn.lane import resolve as resolve_item

        key, decision, note = fields.get("key", ""), fields.get("decision"), fields.get("note", "")
        if decision not in ("accept", "reject") or not note.strip():
            raise ReinsError("say accept or reject, with a note saying why")
        who = fields.get("by", "").strip() or self.site.by
        resolve_item(self.site.store, quest, key, accept=decision == "accept", note=note, by=who)
        # Back to the queue at the item that followed (reins.js selects it by ``at``).
        back = {"done": f"{key}: {decision}ed", "at": fields.get("then", "")}
        return "/review?" + urlencode({k: v for k, v in back.items() if v})

    def reopened(self, quest: Quest, fields: dict[str, str]) -> str:
        from reins.turn.lane import reopen as reopen_item

        key, reason = fields.get("key", ""), fields.get("reason", "")
        if not reason.strip():
            raise ReinsError("say why the item is reopened")
        who = fields.get("by", "").strip() or self.site.by
        reopen_item(self.site.store, quest, key, reason=reason, by=who)
        return "/item?" + urlencode({"key": key})
