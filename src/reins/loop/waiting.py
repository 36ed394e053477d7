"""Waiting for another driver's lease: what a slot does when every item left is leased.

The other driver may have crashed (its lease runs out) or a person may give the item up, so a
slot polls until an item is free or no TODO item is left, saying so now and then: which items
other drivers hold (never this run's own in flight), by whom, for how long, and how to give
each back; with ``--no-wait`` it stops when every item left is held longer than a loop lease
lasts, and the summary says the same.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Collection
from typing import Protocol

from reins.loop.ledger_thread import LedgerThread
from reins.loop.lines import clock
from reins.loop.options import LoopOptions
from reins.loop.progress import Reporter
from reins.loop.taking import Taker
from reins.store.model import Item, State, Stats
from reins.store.protocol import Store
from reins.store.query import PageQuery

# A slot with nothing free looks again this often while other loops hold the last items.
POLL = 0.2
# While waiting for others' leases, say so this often (seconds).
WAIT_NOTE_EVERY = 10.0
SHOWN = 3  # items held by others a note names
COUNTED = 1000  # items of one other owner counted at most


class Waiter(Protocol):
    """What waiting reads of the run: its ledger, options, counts, reporter and sleep."""

    store: Store
    options: LoopOptions
    stats: Stats | None
    reporter: Reporter
    db: LedgerThread
    taker: Taker  # the run's own lease owners: their leases are not waited for
    held: str  # what the last look found other drivers hold, for the summary

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
            n, held = await run.db(held_by_others, run.store, run.taker.owners)
            run.held = f"{n} item(s) left, all leased to other drivers: {held}" if n else ""
            return False
        now = time.monotonic()
        if wait > POLL and now - self._noted >= WAIT_NOTE_EVERY:
            self._noted = now
            n, held = await run.db(held_by_others, run.store, run.taker.owners)
            run.reporter.note(
                f"waiting for {n} item(s) leased to other drivers, not to this run: {held}; "
                f"the first lease runs out in {clock(wait)} (--no-wait stops instead)"
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


def held_by_others(
    store: Store, ours: Collection[str], now: float | None = None
) -> tuple[int, str]:
    """How many TODO items other drivers than ``ours`` hold a live lease on, and the first
    few by whom, for how long and how each is given back, said for a person (on the ledger
    thread)."""
    t = time.time() if now is None else now
    held: list[Item] = []
    for owner in store.lease_holders():
        if owner not in ours:
            page = store.page(PageQuery(state=State.TODO, leased_to=owner, limit=COUNTED))
            held += [i for i in page.items if (i.lease_expires or 0) > t]
    held.sort(key=lambda i: i.lease_expires or 0)
    shown = "; ".join(_held(i, t) for i in held[:SHOWN])
    more = f"; and {len(held) - SHOWN} more" if len(held) > SHOWN else ""
    return len(held), shown + more


def _held(item: Item, now: float) -> str:
    """``'a' by tester for 14:52 more (give it back: `reins release a --driver tester`)``."""
    owner = item.lease_owner or ""
    job = owner.removeprefix("batch:")
    if owner.startswith("batch:") and job.isdigit():
        back = f"a batch job's: `reins batch cancel {job} --model SPEC`"
    else:
        key, driver = shlex.quote(item.key), shlex.quote(owner)
        back = f"give it back: `reins release {key} --driver {driver}`"
    left = clock(max((item.lease_expires or now) - now, 0.0))
    return f"{item.key!r} by {owner} for {left} more ({back})"
