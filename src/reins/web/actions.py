"""The dashboard's actions: a person's decisions and claims, each a posted form.

Every action posts the page's own form with its CSRF token (:mod:`reins.web.security`) and goes
through the human lane's functions, exactly as ``reins resolve`` and ``reins reopen`` call them,
or the store's claims (:mod:`reins.store.people`). After a decision the queue comes back at the
item that followed, under the same filter, with a banner that offers to undo it for a while:
an undo is a person's ``undo`` of their own decision, recorded as such (the item is REVIEW again
in the same round, back in the queue; the log keeps the decision), refused to anyone else (they
reopen it instead), and once the item moved or the while is over. The banner's words
and what its Undo names are signed by this server (:meth:`Guard.sign
<reins.web.security.Guard.sign>`): the queue shows no banner a link made up.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Protocol
from urllib.parse import parse_qsl, urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from reins.errors import LeaseConflict, NotFound, ReinsError, TurnMoved
from reins.quest import Quest
from reins.store.model import AttemptKind, State
from reins.store.protocol import Store
from reins.web.desk import CLAIM_TTL, clock, hold
from reins.web.security import CSRF_FIELD, CSRF_HEADER, Guard, reviewer, signed_in
from reins.web.words import DECIDED, state_text

Fields = dict[str, str]
DECISIONS = ("accept", "reject")


class Acting(Protocol):
    """What the actions need of the dashboard (:class:`reins.web.app.Site` is one)."""

    @property
    def store(self) -> Store: ...

    @property
    def quest(self) -> Quest | None: ...

    @property
    def guard(self) -> Guard: ...

    @property
    def by(self) -> str: ...

    @property
    def publish(self) -> Callable[[], object] | None: ...

    @property
    def undo_window(self) -> float: ...

    @property
    def can_act(self) -> bool: ...

    def read(self, fn: Callable[[], str]) -> Awaitable[str]: ...


Problem = Callable[[Request, int, str], Response]


class Actions:
    """The POST routes of one dashboard. ``problem`` renders a refusal page."""

    def __init__(self, site: Acting, problem: Problem) -> None:
        self.site = site
        self.problem = problem

    async def resolve(self, request: Request) -> Response:
        return await self.act(request, self.resolved)

    async def undo(self, request: Request) -> Response:
        return await self.act(request, self.undone)

    async def reopen(self, request: Request) -> Response:
        return await self.act(request, self.reopened)

    async def claim(self, request: Request) -> Response:
        return await self.act(request, self.claimed)

    async def release(self, request: Request) -> Response:
        return await self.act(request, self.released)

    async def form(self, request: Request) -> Fields | Response:
        """The posted form, once its access token, CSRF token and origin are checked (else the
        refusal)."""
        site = self.site
        if not signed_in(request):
            # The dashboard's guard refuses such a post before it comes here; this holds should
            # the app ever be served without it: nothing is recorded, by any name, unsigned.
            return self.problem(request, 401, "refused: this needs the dashboard's access token")
        body = (await request.body()).decode("utf-8", "replace")
        fields = dict(parse_qsl(body, keep_blank_values=True))
        given = fields.get(CSRF_FIELD) or request.headers.get(CSRF_HEADER)
        origin = request.headers.get("origin")
        if not site.guard.csrf_ok(given, origin=origin, host=request.headers.get("host")):
            return self.problem(request, 403, "refused: the form's CSRF token is missing or wrong")
        if not site.can_act or site.quest is None:
            return self.problem(request, 403, "refused: this dashboard is read-only")
        if site.guard.people:
            # Reviewers are named by their own tokens: the name acted under is the token's,
            # whatever the form says (a form of this server's offers no name to type).
            name = reviewer(request)
            if name is None:
                return self.problem(request, 401, "refused: this needs a reviewer's own link")
            fields["by"] = name
        return fields

    async def act(self, request: Request, action: Callable[[Quest, Fields], str]) -> Response:
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
            return self.problem(request, 404, str(exc))
        except ReinsError as exc:
            return self.problem(request, 409, str(exc))
        return RedirectResponse(target, status_code=303)

    def who(self, fields: Fields) -> str:
        """The person an action names: the form's "by", else the server's. A form reaches here
        only with the access token (:meth:`form`), so no one without it can name anybody."""
        return fields.get("by", "").strip() or self.site.by

    def resolved(self, quest: Quest, fields: Fields) -> str:
        from reins.turn.lane import resolve as resolve_item

        key, decision, note = fields.get("key", ""), fields.get("decision"), fields.get("note", "")
        if decision not in DECISIONS or not note.strip():
            raise ReinsError("say accept or reject, with a note saying why")
        self.unclaimed(key, self.who(fields), "decide")
        done = resolve_item(
            self.site.store, quest, key, accept=decision == "accept", note=note, by=self.who(fields)
        )
        locked = state_text(done.item.state, rejected=decision == "reject")
        said = f"{key}: {DECIDED[decision]}, locked {locked}"
        # Back to the queue at the item that followed (reins.js offers it to j), under the same
        # filter, with the decision's turn for the banner's undo.
        turn = str(done.attempt.turn)
        return self.back(fields, done=said, at=fields.get("then", ""), undo=key, turn=turn)

    def undone(self, quest: Quest, fields: Fields) -> str:
        from reins.turn.human import Action
        from reins.turn.lane import act

        key, turn, who = fields.get("key", ""), fields.get("turn", ""), self.who(fields)
        item, log = self.site.store.snapshot(key)
        last = log[-1] if log else None
        if last is None or str(last.turn) != turn or item.turns != last.turn:
            raise ReinsError(f"item {key!r} moved since that decision: nothing was undone")
        if last.kind is not AttemptKind.HUMAN or last.action not in DECISIONS:
            raise ReinsError(f"item {key!r}: its last turn is no decision to undo")
        if last.driver != who:
            raise ReinsError(
                f"item {key!r} was {DECIDED[last.action]} by {last.driver}, not {who}: only "
                f"{last.driver} may undo it. To take it back yourself, reopen it from its page "
                "(recorded as your reopen, for a new round)"
            )
        age = time.time() - datetime.fromisoformat(last.recorded_at).timestamp()
        if age > self.site.undo_window:
            minutes = self.site.undo_window / 60
            raise ReinsError(
                f"item {key!r}: a decision is undone within {minutes:.0f} min of it, and this one "
                "is older; reopen the item from its page instead"
            )
        reason = f"undo of the {last.action}" + (f" ({last.note})" if last.note else "")
        try:
            act(self.site.store, quest, key, Action.UNDO, note=reason, by=who,
                expected_turns=last.turn)  # fmt: skip
        except TurnMoved as exc:
            raise ReinsError(f"item {key!r} moved since that decision: nothing was undone") from exc
        said = f"{key}: the {last.action} was undone: REVIEW again, waiting for a decision"
        return self.back(fields, done=said, at=key)

    def reopened(self, quest: Quest, fields: Fields) -> str:
        from reins.turn.lane import reopen as reopen_item

        key, reason = fields.get("key", ""), fields.get("reason", "")
        if not reason.strip():
            raise ReinsError("say why the item is reopened")
        reopen_item(self.site.store, quest, key, reason=reason, by=self.who(fields))
        return "/item?" + urlencode({"key": key})

    def unclaimed(self, key: str, who: str, verb: str) -> None:
        """Refuse, saying who holds it and until when, when another person's claim is live on
        ``key`` (the ledger refuses their decision too; this says it in the desk's words)."""
        held = hold(self.site.store.get(key), time.time())
        if held is not None and held.owner != who:
            # Take over is offered where the page knows whose the claim is: reviewers named.
            take = ", or take it over (Take over, on its card)" if self.site.guard.people else ""
            raise LeaseConflict(
                f"item {key!r} is claimed by {held.owner} until {clock(held.until)}: theirs to "
                f"{verb}. Ask them to release it, or wait until then{take}"
            )

    def claimed(self, quest: Quest, fields: Fields) -> str:
        key, who = fields.get("key", ""), self.who(fields)
        taken = ""
        if fields.get("take") == "over":
            # An explicit take-over: the holder's claim ends, then the claim is made as any
            # other (refused should a third person have claimed it in between).
            held = hold(self.site.store.get(key), time.time())
            if held is not None and held.owner != who:
                self.site.store.release(key, held.owner)
                taken = f", taken over from {held.owner}"
        self.site.store.reserve(key, who, ttl=CLAIM_TTL)
        return self.back(
            fields, done=f"{key}: claimed by {who} for {CLAIM_TTL / 60:.0f} min{taken}", at=key
        )

    def released(self, quest: Quest, fields: Fields) -> str:
        key, who = fields.get("key", ""), self.who(fields)
        item = self.site.store.get(key)
        if item.state is not State.REVIEW or item.lease_owner != who:
            holder = item.lease_owner or "nobody"
            raise ReinsError(f"item {key!r} is claimed by {holder}, not {who}: nothing to release")
        self.site.store.release(key, who)
        return self.back(fields, done=f"{key}: released by {who}", at=key)

    def back(self, fields: Fields, *, done: str, at: str, undo: str = "", turn: str = "") -> str:
        """The review queue under the filter the form carried, at the item ``at``, with the
        banner ``done`` (and the decision its Undo names) signed by this server."""
        kept = {k: fields.get(k, "") for k in ("rule", "search")}
        sig = self.site.guard.sign(done, undo, turn)
        shown = {"done": done, "at": at, "undo": undo, "turn": turn, "sig": sig}
        query = {k: v for k, v in {**kept, **shown}.items() if v != ""}
        return "/review?" + urlencode(query)
