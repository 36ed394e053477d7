"""The engine: items in flight, each leased, each turn composed from the log.

The engine runs N slots (:mod:`reins.loop.slot`: each leases one item at a time and works it
until it locks; for a confined coding agent 2N, of which N generate at once) beside the keeper
(:mod:`reins.loop.keeper`: leases renewed, exports, counts), and winds the run up: leases given
back, the last export, the summary. Every turn is compose → generate → judge → record, the same
as under ``next``/``submit``: compose reads the ledger, the backend is chosen from the log
(escalation), a backend failure is recorded as a generation error (no try used, nothing locked),
and the record step writes the whole turn in one transaction on the ledger thread. An item whose
generation keeps failing is set aside for the rest of the run (it stays TODO, its tries
unchanged) so that it cannot hold the others hostage; the breaker trips when generation fails on
several items in a row. Nothing that decides a prompt or a backend lives in memory, so a
restarted run picks up exactly where the ledger stands.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Collection

from reins.errors import ReinsError
from reins.loop.course import Course
from reins.loop.events import StopReason, Summary
from reins.loop.generator import Bench, Generator, Site, TextSite, samples_as_told, suits
from reins.loop.inflight import InFlight
from reins.loop.keeper import keep
from reins.loop.ledger_thread import LedgerThread
from reins.loop.options import LoopOptions
from reins.loop.progress import Reporter
from reins.loop.recording import DRIVER, Recorder
from reins.loop.slot import slot
from reins.loop.taking import Taker
from reins.loop.waiting import LeaseWait
from reins.quest import Quest
from reins.store.holder import holder_name
from reins.store.protocol import Store


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
        for chosen in (generator, strong):
            if chosen is not None:
                samples_as_told(chosen, self.policy)
        # The process is in the name: a rerun on this host takes the leases over the moment
        # this process is gone (reins.store.holder), instead of when they run out.
        self.owner_prefix = holder_name(self.options.driver)
        self.recorder = Recorder(
            store, quest, self.db, driver=self.options.driver, policy=self.policy
        )
        self.inflight = InFlight()
        self.site: Site = TextSite()
        self.bench = Bench(self.inflight, self.options.timeout)
        if quest.workspace is not None:  # the agents' workspaces and the judge's trees
            from reins.loop.workshop import Workshop

            workshop = Workshop(quest, self.options, self.tally)
            self.site, self.bench = workshop, Bench(self.inflight, self.options.timeout, workshop)
        at_most = self.options.concurrency  # generations at once, each in a slot
        self.slots = self.site.slots(at_most)
        self.agents = asyncio.Semaphore(at_most)
        self.taker = Taker(
            store,
            self.db,
            self.owner_prefix,
            concurrency=at_most,
            ttl=self.options.lease_ttl,
            slots=self.slots,
        )
        self.waiting = LeaseWait()

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
            slots = [asyncio.create_task(slot(self)) for _ in range(self.slots)]
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

    async def _sleep(self, seconds: float) -> bool:
        """Sleep unless a hard stop comes first; True when the sleep ran its course."""
        if not await self.inflight.sleep(seconds):
            return False
        return seconds <= 0 or not self.stopping

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
