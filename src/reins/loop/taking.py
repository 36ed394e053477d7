"""Taking items for the slots: leases for several slots in one ledger call.

A slot that needs an item takes one leased already, if any is waiting; else the taker leases
for several owners at once (``Store.lease_many``: one transaction, one statement on PostgreSQL,
each item with its log). Leases are held per owner, one item each, so the taker keeps a pool of
owner names: one per slot and, when the concurrency is above one, as many again as it, so that
a refill can lease up to ``concurrency`` items for the slots to come while every slot is busy.
Leased items wait at most until a slot is free, renewed like the items in flight
(:attr:`Taker.held`); the run gives back whatever is left when it ends. At concurrency one the
taker leases one item per call (with its log: still one call instead of two) and holds nothing
in advance.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Collection

from reins.loop.ledger_thread import LedgerThread
from reins.store.model import Attempt, Item
from reins.store.protocol import Store

Taken = tuple[str, Item, list[Attempt]]  # the owner that holds the lease, the item, its log
# After a refill found nothing free, slots asking within this many seconds are told so without
# asking the ledger again (each of them polls while other drivers hold the last items).
EMPTY_FOR = 0.2


class Taker:
    """The leases of one loop run's slots: owners named ``prefix#N``."""

    def __init__(
        self,
        store: Store,
        db: LedgerThread,
        prefix: str,
        *,
        concurrency: int,
        ttl: float,
        slots: int | None = None,
    ) -> None:
        self.store, self.db, self.ttl = store, db, ttl
        self.batch = concurrency
        # an owner for each slot's item, and for as many leased ahead (none at concurrency 1)
        slots = concurrency if slots is None else slots
        pool = slots + concurrency if concurrency > 1 else slots
        self.owners = tuple(f"{prefix}#{i}" for i in range(pool))
        self.held: dict[str, str] = {}  # owner → key: every lease taken and not yet done
        self._loose: set[str] = set()  # owners done with an item whose lease may stand
        self._ready: deque[Taken] = deque()
        self._lock = asyncio.Lock()
        self._empty_at = float("-inf")

    async def take(self, *, excluding: Collection[str], room: int | None) -> Taken | None:
        """An item for a slot, leased to a free owner of the pool; None if none is free.

        ``room``: how many more items the run may start (a budget), None for no cap.
        """
        async with self._lock:  # one refill at a time: two would lease to the same owners
            if not self._ready and time.monotonic() - self._empty_at >= EMPTY_FOR:
                free = [o for o in self.owners if o not in self.held]
                want = self.batch if room is None else min(self.batch, room)
                owners = free[: max(1, want)]
                got = await self.db(
                    self.store.lease_many, owners, ttl=self.ttl, excluding=tuple(excluding)
                )
                for lease, log in got:
                    owner = lease.item.lease_owner or ""
                    self.held[owner] = lease.item.key
                    self._ready.append((owner, lease.item, log))
                if not got:
                    self._empty_at = time.monotonic()
            return self._ready.popleft() if self._ready else None

    def done(self, owner: str, *, holding: bool) -> None:
        """The slot working ``owner``'s item is done with it; ``holding``: the lease may still
        stand (the run stopped), as opposed to ended (the item locked) or given back."""
        self.held.pop(owner, None)
        if holding:
            self._loose.add(owner)
        else:
            self._loose.discard(owner)

    def holding(self) -> list[str]:
        """The owners that may hold a lease: to give back when the run ends."""
        return [o for o in self.owners if o in self.held or o in self._loose]
