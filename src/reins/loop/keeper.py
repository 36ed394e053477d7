"""The keeper: beside the slots, it renews leases, exports, refreshes counts and redraws.

It says when; what each chore does is the run's (the :class:`Kept` it is given, the engine), so
the keeper imports no engine. A failure here stops the run: no lease may silently go unrenewed.
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol

from reins.loop.options import LoopOptions

# The keeper wakes this often to beat, export, refresh counts and redraw.
TICK = 0.25
STATS_EVERY = 1.0


class Kept(Protocol):
    """The chores the keeper runs on time (the engine does them)."""

    async def renew(self) -> None:
        """Renew the lease of every item in flight."""

    async def export_locked(self, *, final: bool = False) -> None:
        """Export what the run locked since the last export."""

    async def refresh(self) -> None:
        """Read the ledger's counters again."""

    def tick(self) -> None:
        """Redraw the progress display."""

    def fail(self, exc: Exception) -> None:
        """Stop the run with ``exc`` as its failure."""


async def keep(kept: Kept, options: LoopOptions) -> None:
    """Run until cancelled; on a failure, stop the run with it."""
    try:
        await _keep_going(kept, options)
    except Exception as exc:
        kept.fail(exc)


async def _keep_going(kept: Kept, options: LoopOptions) -> None:
    now = time.monotonic()
    next_beat = now + options.beat
    next_export = now + options.export_every
    next_stats = now + STATS_EVERY
    while True:
        await asyncio.sleep(min(TICK, options.beat))
        now = time.monotonic()
        if now >= next_beat:
            next_beat = now + options.beat
            await kept.renew()
        if now >= next_export:
            next_export = now + options.export_every
            await kept.export_locked()
        if now >= next_stats:
            next_stats = now + STATS_EVERY
            await kept.refresh()
        kept.tick()
