"""An agent's session: the MCP tools' work over the Store, one driver, no SDK.

Each tool answers with the very texts the CLI prints (:mod:`reins.turn.views`, the verdict of
:func:`reins.turn.submit.submit`), then what to do next. The session keeps the lease token of
the item it holds, so the agent never handles one. Every call is counted for the reminders
(:mod:`.reminders`); every error an agent can cause is a :class:`Reply` marked as an error,
never an exception out of :meth:`AgentSession.call`.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from reins.errors import ConfigError, NotFound, ReinsError
from reins.gate.wording import answer_of, answers_left, state_short
from reins.host import reminders
from reins.host.tools import BY_NAME, check_arguments
from reins.quest import Quest
from reins.store.model import AttemptKind, Item, State
from reins.store.protocol import Store
from reins.store.query import PageQuery

PROPOSED = "agents.proposed."  # + item key → the driver that proposed it
BOARD_LIMIT = 50
MAX_KEY = 200


@dataclass(frozen=True, slots=True)
class Reply:
    """A tool's answer: text blocks (the first is what the CLI prints), and whether it failed."""

    blocks: tuple[str, ...]
    is_error: bool = False


@dataclass(frozen=True, slots=True)
class Options:
    """What the CLI settings decide for a session: lease length, submission cap, results file."""

    lease: float
    max_submission: int
    results: str | os.PathLike[str] | None = None


def held_by(store: Store, driver: str, now: float | None = None) -> Item | None:
    """The TODO item ``driver`` holds a live lease on, if any.

    Asked by lease holder alone: a holder has a handful of rows (a locked item holds no
    lease), so the state and the expiry are checked on the few found.
    """
    t = time.time() if now is None else now
    page = store.page(PageQuery(leased_to=driver, limit=5))
    return next(
        (i for i in page.items if i.state is State.TODO and (i.lease_expires or 0) > t), None
    )


def proposer(store: Store, key: str) -> str | None:
    """The driver that proposed item ``key``, or None for an item the quest seeded."""
    return store.meta(PROPOSED + key) or None


class AgentSession:
    """The tools of one driver over one ledger and quest."""

    def __init__(self, store: Store, quest: Quest, driver: str, options: Options) -> None:
        self.store = store
        self.quest = quest
        self.driver = driver
        self.options = options
        self.tokens: dict[str, str] = {}  # item key → the lease token next_item got for it
        self._tools: dict[str, Callable[[dict[str, Any]], Reply]] = {
            "next_item": self.next_item,
            "submit": self.submit,
            "board": self.board,
            "item_log": self.item_log,
            "rules": self.rules,
            "release": self.release,
            "propose_item": self.propose_item,
        }

    def tool_names(self) -> list[str]:
        allowed = self.quest.allow_proposals
        return [n for n in self._tools if allowed or not BY_NAME[n].only_with_proposals]

    def call(self, name: str, arguments: Mapping[str, Any] | None) -> Reply:
        """Run tool ``name``; count the call; add a reminder when one is due.

        Raises:
            NotFound: no tool of that name (a protocol error, not a tool's).
        """
        if name not in self.tool_names():
            raise NotFound(f"no tool named {name!r}. Known: {', '.join(self.tool_names())}")
        try:
            reply = self._tools[name](check_arguments(BY_NAME[name], arguments))
        except ReinsError as exc:
            reply = Reply((f"error: {exc}",), is_error=True)
        except Exception as exc:  # the quest's own code (render, seed) or a bug: never a crash
            reply = Reply((f"error: {name} failed: {type(exc).__name__}: {exc}",), is_error=True)
        submitted = name == "submit" and not reply.is_error
        count = reminders.tick(self.store, self.driver, submitted=submitted)
        if reminders.due(count):
            note = reminders.reminder(count, self.held(), self.store.stats(), self.quest.max_tries)
            reply = Reply((*reply.blocks, note), reply.is_error)
        return reply

    # -- state ----------------------------------------------------------------------------

    def held(self) -> Item | None:
        """The item this driver holds a live lease on, from the ledger (it outlives a restart)."""
        return held_by(self.store, self.driver)

    def heartbeat(self) -> None:
        """Keep the held item's lease alive while the session is."""
        for key in list(self.tokens):
            if not self.store.heartbeat(key, self.driver, ttl=self.options.lease):
                self.tokens.pop(key, None)

    def close(self) -> int:
        """The session ended: give back every lease it holds at once."""
        self.tokens.clear()
        return self.store.release_all(self.driver)

    # -- tools ----------------------------------------------------------------------------

    def next_item(self, _args: dict[str, Any]) -> Reply:
        from reins.turn.compose import compose
        from reins.turn.views import leased_prompt

        held = self.store.lease(self.driver, ttl=self.options.lease)
        if held is None:
            stats = self.store.stats()
            if stats.remaining:
                text = (
                    f"nothing free: the {stats.remaining} item(s) left are leased to other drivers"
                )
                return Reply((text + "\n", "Nothing for you to do now: you may stop."))
            return Reply((f"nothing left: all {stats.total} item(s) are locked\n", "All done."))
        item, log = self.store.snapshot(held.item.key)
        self.tokens = {item.key: held.token}
        prompt = compose(self.quest, item, log)
        answer = f"# answer with the submit tool: key {item.key!r}, submission = your answer"
        return Reply((leased_prompt(self.quest, item, prompt, self.driver), answer))

    def submit(self, args: dict[str, Any]) -> Reply:
        from reins.turn.submit import submit

        key = args.get("key")
        if key is None:
            held = self.held()
            if held is None:
                raise ConfigError("no item in progress: call next_item first, or give its key")
            key = held.key
        raw: str = args["submission"]
        if not raw.strip():
            raise ConfigError("the submission is empty: nothing was recorded")
        recorded, exported = submit(
            self.store,
            self.quest,
            key,
            raw,
            driver=self.driver,
            limit=self.options.max_submission,
            results=self.options.results,
            token=self.tokens.get(key),
        )
        refusal = exported.refusal()
        if refusal is not None:  # for the person who runs the server, not in the agent's reply
            print(f"reins mcp: {refusal}", file=sys.stderr)
        item, attempt = recorded.item, recorded.attempt
        if item.state.terminal:
            self.tokens.pop(key, None)
        left = self.store.stats().remaining
        if attempt.kind is AttemptKind.JUDGE_ERROR:
            step = (
                "next: the gate itself failed (no answer counted). Tell the person running reins; "
                "submit again once the gate is fixed, or call next_item."
            )
        elif not item.state.terminal:
            allowed = self.quest.max_tries
            step = (
                f"next: read the facts, fix your answer and submit {key!r} again "
                f"({answer_of(item.tries + 1, allowed)} next, "
                f"{answers_left(item.tries, allowed)})."
            )
        else:
            final = "PASS" if item.state is State.PASS else f"{state_short(item.state)}, no pass"
            step = f"next: {key!r} locked {final}; {left} item(s) remain: call next_item."
        return Reply((recorded.text, step))

    def board(self, args: dict[str, Any]) -> Reply:
        from reins.turn.views import board_lines

        # Read as the CLI's options and the dashboard's filters are; as long as the agent asks.
        try:
            wanted = PageQuery.parse(args, base=PageQuery(limit=BOARD_LIMIT), most=None)
        except ConfigError as exc:
            raise ConfigError(f"board: {exc}") from None
        stats, now = self.store.stats(), time.time()
        page = self.store.page(wanted)
        lines = board_lines(page.items, now, max_tries=self.quest.max_tries)
        if stats.total > len(lines):
            lines.append(f"… and {stats.total - len(lines)} more (limit)")
        held = self.held()
        summary = f"remaining {stats.remaining} of {stats.total} ({stats.leased} in progress); " + (
            f"yours: {held.key}" if held else "you hold no item"
        )
        return Reply(("".join(line + "\n" for line in lines), summary))

    def item_log(self, args: dict[str, Any]) -> Reply:
        from reins.turn.views import log_text

        item, attempts = self.store.snapshot(args["key"])
        full = bool(args.get("full", False))
        text = log_text(item, attempts, max_tries=self.quest.max_tries, full=full)
        by = proposer(self.store, item.key)
        return Reply((text,) + ((f"proposed by {by}",) if by else ()))

    def rules(self, _args: dict[str, Any]) -> Reply:
        from reins.turn.raised import raised_beside_the_gate
        from reins.turn.views import rules_text

        quest = self.quest
        text = rules_text(quest.judge.catalog(), raised_beside_the_gate(quest), quest.coaching)
        return Reply((text,))

    def release(self, args: dict[str, Any]) -> Reply:
        key = args.get("key")
        if key is None:
            keys = [i.key for i in self.store.page(PageQuery(leased_to=self.driver)).items]
            self.store.release_all(self.driver)
            released = keys
        else:
            item = self.store.get(key)
            if item.lease_owner not in (None, self.driver):
                raise ConfigError(f"item {key!r} is not yours: only its holder releases it")
            released = [key] if self.store.release(key, self.driver) else []
        for k in released:
            self.tokens.pop(k, None)
        text = f"released {len(released)} lease(s)" + (
            f": {', '.join(released)}" if released else ""
        )
        return Reply((text + "\n",))

    def propose_item(self, args: dict[str, Any]) -> Reply:
        if not self.quest.allow_proposals:
            raise ConfigError(f"quest {self.quest.name} does not take proposals")
        key: str = args["key"].strip()
        if not key or len(key) > MAX_KEY or not key.isprintable():
            raise ConfigError(f"propose_item: a key is 1 to {MAX_KEY} printable characters")
        payload = args["payload"]
        # Render it once now: a payload the quest cannot render would break next_item later.
        try:
            self.quest.render(Item(key=key, state=State.TODO, tries=0, payload=payload))
        except Exception as exc:
            raise ConfigError(
                f"propose_item: the quest cannot render this payload ({type(exc).__name__}: "
                f"{exc}); give one shaped like its other items'"
            ) from exc
        added, _ = self.store.add([(key, payload)])
        if not added:
            raise ConfigError(f"propose_item: an item {key!r} exists already")
        self.store.set_meta(PROPOSED + key, self.driver)
        left = self.store.stats().remaining
        why = f" ({args['why']})" if args.get("why") else ""
        text = f"proposed {key}{why}: added to do, proposed by {self.driver}; {left} item(s) remain"
        return Reply((text + "\n",))
