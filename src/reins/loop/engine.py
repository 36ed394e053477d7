"""The engine: up to N items in flight, each leased, each turn composed from the log.

Every turn is compose → generate → judge → record, the same as under ``next``/``submit``:
compose reads the ledger, the backend is chosen from the log (escalation), a backend failure is
recorded as a generation error (no try used, nothing locked), and the record step writes the
whole turn in one transaction on the ledger thread. An item whose generation keeps failing is
set aside for the rest of the run (it stays TODO, its tries unchanged) so that it cannot hold
the others hostage; the breaker trips when generation fails on several items in a row. Nothing
that decides a prompt or a backend lives in memory, so a restarted run picks up exactly where
the ledger stands.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Collection

from reins.errors import LeaseConflict, NotTodo, ReinsError
from reins.loop.breakers import sets_aside, tripped
from reins.loop.course import Course
from reins.loop.events import StopReason, Summary
from reins.loop.generate import GenerationError
from reins.loop.generator import Bench, Generator, Site, TextSite, suits
from reins.loop.inflight import InFlight
from reins.loop.keeper import keep
from reins.loop.ledger_thread import LedgerThread
from reins.loop.options import MAX_BACKOFF, LoopOptions
from reins.loop.progress import Reporter
from reins.loop.recording import DRIVER, Recorder
from reins.loop.spend import item_over, item_spent
from reins.loop.taking import Taker
from reins.loop.tally import budget_message
from reins.loop.waiting import LeaseWait
from reins.quest import Quest
from reins.store.codec import now_iso
from reins.store.holder import holder_name
from reins.store.model import Attempt, AttemptKind, Item
from reins.store.protocol import Store
from reins.turn.compose import compose
from reins.turn.escalate import choose
from reins.turn.record import Recorded

# The run's caps an agent can be killed at, and the stop each one is.
RUN_CAPS = {"run-tokens": StopReason.MAX_TOKENS, "run-cost": StopReason.MAX_COST}


class Engine(Course):
    """One loop run over one ledger. Use :func:`reins.loop.drive` or :func:`reins.loop.run`."""

    def __init__(
        self,
        store: Store,
        quest: Quest,
        generator: Generator,
        *,
        strong: Generator | None = None,
        options: LoopOptions | None = None,
        reporter: Reporter | None = None,
    ) -> None:
        if not DRIVER.leases:  # the driver table says how this driver works; it must lease
            raise ReinsError("turn.md: the loop driver must lease its items")
        for chosen in (generator, strong):
            if chosen is not None:
                suits(chosen, quest)
        options = options or LoopOptions()
        # Calls side by side where the store allows them (see reins.store.ledger.Ledger).
        at_once = getattr(store, "calls_at_once", 1)
        db = LedgerThread(max(1, min(options.concurrency, at_once)))
        super().__init__(store, quest, db, options, reporter)
        self.generator = generator
        self.strong = strong
        self.rules: Collection[str] = quest.escalate_on | self.options.escalate_on
        self.policy = self.options.retry or quest.retry
        # The process is in the name: a rerun on this host takes the leases over the moment
        # this process is gone (reins.store.holder), instead of when they run out.
        self.owner_prefix = holder_name(self.options.driver)
        self.recorder = Recorder(
            store, quest, self.db, driver=self.options.driver, policy=self.policy
        )
        self.inflight = InFlight()
        self.taker = Taker(
            store,
            self.db,
            self.owner_prefix,
            concurrency=self.options.concurrency,
            ttl=self.options.lease_ttl,
        )
        self.waiting = LeaseWait()
        self.site: Site = TextSite()
        self.bench = Bench(self.inflight, self.options.timeout)
        if quest.workspace is not None:  # the agents' workspaces and the judge's trees
            from reins.loop.workshop import Workshop

            workshop = Workshop(quest, self.options, self.tally)
            self.site, self.bench = workshop, Bench(self.inflight, self.options.timeout, workshop)

    # -- stopping --------------------------------------------------------------------------

    def stop(self, reason: StopReason, message: str = "", *, signal: str | None = None) -> None:
        """Ask the run to stop (see :meth:`Course.stop`). A hard reason also drops the
        generations in flight."""
        super().stop(reason, message, signal=signal)
        if reason.hard:
            self.inflight.drop()
            self.site.stop(f"the run stopped ({(self.reason or reason).value})")

    @property
    def stopping(self) -> bool:
        return self.reason is not None

    # -- the run ---------------------------------------------------------------------------

    async def run(self) -> Summary:
        """Work until nothing is left, a cap is reached, the breaker trips, or a stop."""
        self.inflight.open()
        self._started = time.monotonic()
        self.recorder.start(workers=self.site.gate_threads(self.options.concurrency))
        keeper: asyncio.Task[None] | None = None
        try:
            self.stats = await self.db(self.store.stats)
            for note in await self.db(self.site.open, self.store):
                self.reporter.note(note)
            self.reporter.start(self.status())
            if self.rules and self.strong is None:
                self.reporter.note(
                    f"escalation on {', '.join(sorted(self.rules))} has no stronger backend "
                    "(--strong): every turn uses the primary one"
                )
            keeper = asyncio.create_task(keep(self, self.options))
            slots = [asyncio.create_task(self._slot()) for _ in range(self.options.concurrency)]
            await asyncio.gather(*slots)
        finally:
            if keeper is not None:
                keeper.cancel()
                await asyncio.gather(keeper, return_exceptions=True)
            try:
                await self._wind_up()
            finally:
                self.db.close()
                self.recorder.close()
        summary = self.summary()
        self.reporter.finish(summary)
        if self.failure is not None:
            raise self.failure
        return summary

    async def _wind_up(self) -> None:
        def release() -> None:
            for owner in self.taker.holding():  # in flight, leased in advance, or left held
                self.store.release_all(owner)

        await self.db(release)
        await asyncio.to_thread(self.site.close)  # the landings still under way
        await self.export_locked(final=True)
        self.stats = await self.db(self.store.stats)

    async def _slot(self) -> None:
        try:
            while not self.stopping:
                b = self.options.budget
                if b.max_items is not None and self.tally.items_started >= b.max_items:
                    return
                self.tally.items_started += 1
                room = None if b.max_items is None else b.max_items - self.tally.items_started + 1
                # A leased item and its log, in one ledger call (see reins.loop.taking).
                taken = await self.taker.take(excluding=self.set_aside, room=room)
                if taken is None:
                    self.tally.items_started -= 1
                    if await self.waiting.wait(self):
                        continue
                    return
                owner, item, log = taken
                holding = True
                try:
                    holding = await self._work(owner, item, log)
                finally:
                    self.taker.done(owner, holding=holding)
        except Exception as exc:
            self.fail(exc)

    async def _sleep(self, seconds: float) -> bool:
        """Sleep unless a hard stop comes first; True when the sleep ran its course."""
        if not await self.inflight.sleep(seconds):
            return False
        return seconds <= 0 or not self.stopping

    async def _work(self, owner: str, item: Item, log: list[Attempt]) -> bool:
        """Turns of one leased item until it locks, the lease is lost, or the run stops.
        Whether ``owner`` may still hold the lease (the run gives it back at its end).

        ``item`` and ``log`` are what the ledger holds: read when the lease was taken, then
        what each record transaction wrote. Another driver cannot write meanwhile (the lease),
        and if a lost lease let one in, the record step refuses (the claim's turn count).
        """
        failures = generation_failures = 0
        while not self.stopping:
            spent = self.tally.budget_spent(self.options.budget)
            if spent is not None:
                self.stop(spent, budget_message(self.options.budget, spent))
                return True
            if item.state.terminal or item.lease_owner != owner:
                return False  # it locked (which ends the lease), or another driver took it
            over = item_over(self.options.budget, item_spent(log))
            if over is not None:  # a cap is the operator's: set aside, never locked
                await self._put_aside(owner, item, 0, over)
                return False  # given back
            turned = await self._turn(owner, item, log)
            if turned is None:
                return True
            recorded, budget = turned
            item, log = recorded.item, [*log, recorded.attempt]
            if recorded.attempt.judged:
                failures = generation_failures = 0
                continue
            if budget is not None:  # killed at a cap: the run stops, or the item is set aside
                if budget in RUN_CAPS:
                    reason = RUN_CAPS[budget]
                    self.stop(reason, budget_message(self.options.budget, reason, killed=True))
                    return True
                continue
            # A generation or judge error: no try used. A breaker may trip, the item may be
            # set aside; else back off.
            if self._tripped(recorded):
                return True
            if recorded.attempt.kind is AttemptKind.GENERATION_ERROR:
                generation_failures += 1
                if await self._set_aside(owner, recorded, generation_failures):
                    return False  # given back
            else:
                generation_failures = 0  # the generator answered; the judge failed
            failures += 1
            pause = min(self.options.error_backoff * 2 ** (failures - 1), MAX_BACKOFF)
            if not await self._sleep(pause):
                return True
        return True

    async def _turn(
        self, owner: str, item: Item, log: list[Attempt]
    ) -> tuple[Recorded, str | None] | None:
        """One turn of a leased item, recorded and counted, and the cap that killed its agent
        (if one did). None when a hard stop dropped its generation (not recorded, so not a
        turn) or the item moved under us."""
        generator, cause = choose(log, self.rules, self.generator, self.strong)
        prompt = compose(self.quest, item, log, policy=self.policy)
        started_at = now_iso()
        self.tally.turns_started += 1
        self.tally.in_flight += 1
        try:
            result = await generator.make(self.bench, item, log, prompt)
        finally:
            self.tally.in_flight -= 1
        if result is None:
            self.tally.turns_started -= 1
            return None
        try:
            recorded = await self.recorder.turn(
                owner, item, result, prompt, generator.name, started_at, cause
            )
        except (LeaseConflict, NotTodo):
            return None  # the item moved under us (a lease lost while stalled): leave it
        if recorded.item.state.terminal:  # landed off the path
            self.site.locked(recorded.item, recorded.attempt, self.reporter.note)
        down = isinstance(result, GenerationError) and result.unreachable
        self.count_turn(recorded, backend=generator.name, seed=prompt.seed, cause=cause,
                        unreachable=down)  # fmt: skip
        return recorded, getattr(result, "budget", None)

    def _tripped(self, recorded: Recorded) -> bool:
        """Stop the run if this error trips a breaker (see :mod:`reins.loop.breakers`)."""
        trip = tripped(self.tally, self.options, recorded.attempt)
        if trip is not None:
            self.stop(*trip)
        return trip is not None

    async def _set_aside(self, owner: str, recorded: Recorded, errors: int) -> bool:
        """Set the item aside after ``errors`` generation errors in a row on it, if that is
        the option's count. True if so."""
        if not sets_aside(self.options, errors):
            return False
        await self._put_aside(owner, recorded.item, errors, recorded.attempt.error)
        return True

    async def _put_aside(self, owner: str, item: Item, errors: int, error: str | None) -> None:
        """Set ``item`` aside for the run, after ``errors`` generation errors in a row (or 0:
        its own budget is spent): give its lease back and lease it no more this run."""
        self.set_aside.append(item.key)  # before the release: no other slot leases it then
        await self.db(self.store.release, item.key, owner)
        self.report_aside(item, errors, error)

    # -- the keeper's chores (see :mod:`reins.loop.keeper`) -----------------------------------

    async def renew(self) -> None:
        """Renew the lease of every item in flight (on the ledger thread)."""
        held, ttl = dict(self.taker.held), self.options.lease_ttl

        def beat() -> None:
            for owner, key in held.items():
                self.store.heartbeat(key, owner, ttl=ttl)

        await self.db(beat)

    async def refresh(self) -> None:
        self.stats = await self.db(self.store.stats)

    def tick(self) -> None:
        self.reporter.tick(self.status())
