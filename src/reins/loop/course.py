"""A run's course, for both of the loop's drivers: why it stops, what it counted, the items it
set aside, and the events and summary that say so.

The engine (:mod:`reins.loop.engine`, turns of N items at once) and a batch run
(:mod:`reins.loop.batching`, rounds sent as provider batches) each extend :class:`Course` with
how they work; what a run keeps of its own course, and how it reports it, is written here once.
"""

from __future__ import annotations

import time

from reins.errors import describe
from reins.loop.events import AsideEvent, Status, StopReason, Summary
from reins.loop.exporting import export_locked
from reins.loop.ledger_thread import LedgerThread
from reins.loop.options import LoopOptions
from reins.loop.progress import NullReporter, Reporter
from reins.loop.tally import Tally, move_to_locked, turn_event
from reins.quest import Quest
from reins.store.model import AttemptKind, Item, Stats
from reins.store.protocol import Store
from reins.turn.record import Recorded


class Course:
    """One run over one ledger: its store, quest, ledger thread, options and reporter, and what
    it has done so far."""

    def __init__(
        self,
        store: Store,
        quest: Quest,
        db: LedgerThread,
        options: LoopOptions,
        reporter: Reporter | None,
    ) -> None:
        self.store, self.quest, self.db, self.options = store, quest, db, options
        self.reporter = reporter or NullReporter()
        self.tally = Tally()
        self.stats: Stats | None = None
        self.reason: StopReason | None = None
        self.message = ""
        self.signal: str | None = None
        self.failure: Exception | None = None
        self.set_aside: list[str] = []  # keys this run no longer takes, in order
        self.held = ""  # which items other drivers held when the run gave up waiting for them
        self._started = time.monotonic()

    def stop(self, reason: StopReason, message: str = "", *, signal: str | None = None) -> None:
        """Ask the run to stop. The first reason is kept, except that a hard stop overrides a
        soft one (a driver adds what a stop does to the work in flight)."""
        if self.reason is None or (reason.hard and not self.reason.hard):
            self.reason, self.message = reason, message
            if signal is not None:
                self.signal = signal

    def fail(self, exc: Exception) -> None:
        """Stop the run on a failure (a quest that cannot render, a ledger that fails): loudly.
        The run still winds up (leases released, summary) and then raises the first one."""
        if self.failure is None:
            self.failure = exc
        self.stop(StopReason.ERROR, describe(exc))

    def count_turn(
        self,
        recorded: Recorded,
        *,
        backend: str,
        seed: int,
        cause: str | None,
        unreachable: bool = False,
    ) -> None:
        """Count a recorded turn and report it (``cause``: the rule it escalated on)."""
        before = self.tally.unpriced
        self.tally.count(recorded, cause, unreachable=unreachable)
        killed = recorded.attempt.kind is AttemptKind.GENERATION_ERROR
        if killed and self.reason is not None and self.reason.hard:  # an agent the stop killed
            self.tally.cut_short += 1
        budget = self.options.budget
        capped = budget.max_cost is not None or budget.max_item_cost is not None
        if capped and before == 0 < self.tally.unpriced:
            self.reporter.note(
                f"{backend} recorded tokens and no cost for {recorded.item.key!r}: the cost caps "
                "cannot count it; give the model a price (--price, [prices] in reins.toml)"
            )
        move_to_locked(self.stats, recorded.item.state)
        event = turn_event(recorded, max_tries=self.quest.max_tries, backend=backend, seed=seed,
                           escalated_by=cause)  # fmt: skip
        self.reporter.turn(event, self.status())

    def report_aside(self, item: Item, errors: int, error: str | None) -> None:
        """Say that ``item`` is set aside for the run (the driver has put it in
        :attr:`set_aside`), after ``errors`` generation errors in a row (or 0: its own budget
        is spent)."""
        self.reporter.aside(AsideEvent(item.key, errors, error, item.tries, self.quest.max_tries))

    async def export_locked(self, *, final: bool = False) -> None:
        """Export what the run locked since the last export (see :mod:`reins.loop.exporting`)."""
        await export_locked(self.db, self.store, self.options, self.tally, self.reporter,
                            final=final)  # fmt: skip

    def status(self) -> Status:
        return self.tally.status(self.stats, time.monotonic() - self._started)

    def summary(self) -> Summary:
        """How the run ended, from its stop reason and counts."""
        return self.tally.summary(
            self.stats, self.reason, self.message, signal=self.signal,
            budget=self.options.budget, elapsed=time.monotonic() - self._started,
            set_aside=tuple(self.set_aside), held=self.held,
        )  # fmt: skip
