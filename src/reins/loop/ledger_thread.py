"""The ledger thread: every ledger call of a loop runs off the event loop, one call at a time
on each of a few threads.

sqlite3 calls block. Running them on the event loop would stall every generation in flight
whenever another process holds SQLite's write lock; running them on many threads would
interleave transactions on one connection. One thread keeps each call a whole transaction and
the event loop free. A store whose calls may run side by side (PostgreSQL's, a pool of
connections: ``calls_at_once``) gets as many threads, so that one slot's turn does not wait
for another's commit to reach the disk.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


class LedgerThread:
    """Runs callables on ``workers`` threads (one unless the store allows more) and awaits
    them."""

    def __init__(self, workers: int = 1) -> None:
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="reins-ledger")

    async def __call__(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """Run ``fn(*args, **kwargs)`` on the ledger thread.

        The call is shielded: a task cancelled while waiting leaves the call to finish, so a
        transaction that started is always completed or rolled back by SQLite, never cut.
        """
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self._pool, functools.partial(fn, *args, **kwargs))
        return await asyncio.shield(future)

    def close(self) -> None:
        """Wait for the calls already queued, then stop the thread."""
        self._pool.shutdown(wait=True)
