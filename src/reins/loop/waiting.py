"""Waiting for another driver's lease: what a slot does when every item left is leased.

The other driver may have crashed (its lease runs out) or a person may give the item up, so a
slot polls until an item is free or no TODO item is left, saying so now and then; with
``--no-wait`` it stops when every item left is held longer than a loop lease lasts.
"""

from __future__ import annotations

import time
from typing import Protocol

from reins.loop.ledger_thread import LedgerThread
from reins.loop.lines import clock
from reins.loop.options import LoopOptions
from reins.loop.progress import Reporter
from reins.loop.taking import Taker
from reins.store.model import Stats
from reins.store.protocol import Store

# A slot with nothing free looks again this often while other loops hold the last items.
POLL = 0.2
# While waiting for others' leases, say so this often (seconds).
WAIT_NOTE_EVERY = 10.0


class Waiter(Protocol):
    """What waiting reads of the run: its ledger, options, counts, reporter and sleep."""

    store: Store
    options: LoopOptions
    stats: Stats | None
    reporter: Reporter
    db: LedgerThread
    taker: Taker  # the run's own lease owners: their leases are not waited for

    async def _sleep(self, seconds: float) -> bool: ...


class LeaseWait:
    """One run's waiting: the last note's time, and the soonest expiry read for all slots."""

    def __init__(self) -> None:
        self._noted = float("-inf")
        self._expiry: tuple[float, float | None] = (float("-inf"), None)

    async def wait(self, run: Waiter) -> bool:
        """Nothing is free: wait for another driver's lease to run out, saying so now and then.

        Returns False when no TODO item is left, or with ``wait`` off (``--no-wait``) when
        every one left is held longer than a loop lease lasts: this run is done.
        """
        expires = await self._soonest_expiry(run)
        if expires is None:
            return False
        wait = expires - time.time()
        if wait > run.options.lease_ttl and not run.options.wait:
            return False
        now = time.monotonic()
        if wait > POLL and now - self._noted >= WAIT_NOTE_EVERY:
            self._noted = now
            left = run.stats.remaining if run.stats else 0
            run.reporter.note(
                f"waiting: {left} item(s) left are leased to other drivers; the first lease "
                f"runs out in {clock(wait)} (--no-wait stops instead)"
            )
        # Live drivers keep renewing; poll until their items lock or a lease runs out.
        return await run._sleep(min(max(wait, 0.0) + 0.05, POLL))

    async def _soonest_expiry(self, run: Waiter) -> float | None:
        """When the first lease of another driver runs out; read once per POLL for all the
        slots that wait."""
        at, value = self._expiry
        if time.monotonic() - at >= POLL:
            value = await run.db(run.store.soonest_expiry, excluding=run.taker.owners)
            self._expiry = (time.monotonic(), value)
        return value
