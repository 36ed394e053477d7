"""The keeper: beside the slots, it renews leases, exports, refreshes counts and redraws.

A failure here stops the run: no lease may silently go unrenewed.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from reins.loop.events import StopReason

if TYPE_CHECKING:
    from reins.loop.engine import Engine

# The keeper wakes this often to beat, export, refresh counts and redraw.
TICK = 0.25
STATS_EVERY = 1.0


async def keep(engine: Engine) -> None:
    """Run until cancelled; on a failure, stop the run with it."""
    try:
        await _keep_going(engine)
    except Exception as exc:
        from reins.loop.engine import describe

        if engine.failure is None:
            engine.failure = exc
        engine.stop(StopReason.ERROR, describe(exc))


async def _keep_going(engine: Engine) -> None:
    options = engine.options
    now = time.monotonic()
    next_beat = now + options.beat
    next_export = now + options.export_every
    next_stats = now + STATS_EVERY
    while True:
        await asyncio.sleep(min(TICK, options.beat))
        now = time.monotonic()
        if now >= next_beat:
            next_beat = now + options.beat
            await engine.db(_renew, engine, dict(engine.held))
        if now >= next_export:
            next_export = now + options.export_every
            await engine.export_locked()
        if now >= next_stats:
            next_stats = now + STATS_EVERY
            engine.stats = await engine.db(engine.store.stats)
        engine.reporter.tick(engine.status())


def _renew(engine: Engine, held: dict[str, str]) -> None:
    for owner, key in held.items():
        engine.store.heartbeat(key, owner, ttl=engine.options.lease_ttl)
