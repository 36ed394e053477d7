"""The loop's export of what it locked: one function both drivers (turns, batch rounds) call.

It appends the run's newly locked items to the results file, on the ledger thread, and says
each lock the export refused (one no attempt produced: :mod:`reins.store.export`) as an event.
"""

from __future__ import annotations

import os

from reins.loop.events import RefusedEvent
from reins.loop.ledger_thread import LedgerThread
from reins.loop.options import LoopOptions
from reins.loop.progress import Reporter
from reins.loop.tally import Tally
from reins.store.export import export
from reins.store.protocol import Store


async def export_locked(
    db: LedgerThread,
    store: Store,
    options: LoopOptions,
    tally: Tally,
    reporter: Reporter,
    *,
    final: bool = False,
) -> None:
    """Export what this run locked since the last export; at the ``final`` one, also when it
    locked nothing but the file holds records (a withdrawal a person's reopen owes it)."""
    results = options.results
    if results is None or not (tally.unexported or (final and os.path.exists(results))):
        return
    tally.unexported = 0
    for fault in tally.exported_now(await db(export, store, results)):
        reporter.refused(RefusedEvent(fault.key, fault.state, fault.words()))
