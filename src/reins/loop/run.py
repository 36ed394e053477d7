"""Running a loop: the async entry point, and the blocking one that turns signals into a stop."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
import time
from collections.abc import Collection
from typing import TYPE_CHECKING, Protocol

from reins.backends.base import Backend
from reins.loop.engine import Engine
from reins.loop.events import StopReason, Summary
from reins.loop.options import LoopOptions
from reins.loop.progress import Reporter
from reins.quest import Quest
from reins.store.protocol import Store
from reins.workspace import scratch

if TYPE_CHECKING:
    from reins.loop.generator import Generator
    from reins.store.jobs import BatchJob

SIGNALS = (signal.SIGINT, signal.SIGTERM)
# The same signal again this soon (seconds) is the same request delivered twice: GNU timeout
# signals the process and then its whole group, and supervisors often do the same.
REPEAT_WINDOW = 1.0


async def drive(
    store: Store,
    quest: Quest,
    generator: Generator,
    *,
    strong: Generator | None = None,
    options: LoopOptions | None = None,
    reporter: Reporter | None = None,
    stop: asyncio.Event | None = None,
    handle_signals: bool = False,
) -> Summary:
    """Run the loop over ``store`` until nothing is left, a cap, the breaker, or a stop.

    ``generator`` makes each turn's answer: a text backend's
    (:class:`~reins.loop.generator.TextGenerator`), or for a quest with a workspace a coding
    agent's, run in a git repository of its own per item
    (:class:`~reins.loop.generator.AgentGenerator`); :func:`~reins.loop.generator
    .choose_generator` makes the one a model spec names for the quest.

    While it runs, the loop owns ``store``: every call goes through its ledger thread, so do
    not use the same store object elsewhere meanwhile (open another one).

    Args:
        strong: the generator an item moves to once it escalates.
        stop: set it to stop the run as SIGINT would (in-flight generations dropped).
        handle_signals: SIGINT and SIGTERM stop the run cleanly. The same signal again within
            ``REPEAT_WINDOW`` is the same request; any later (or other) one interrupts at once:
            the process dies of it, and recording stays whole (each turn is one transaction).

    Raises:
        ConfigError: a cost cap (``max_cost``, ``max_item_cost``) on a generator without a
            price (:func:`~reins.loop.pricing.refuse_unpriced`), before anything is leased.
        Exception: whatever stopped the run with reason ``error`` (a quest that cannot render,
            a failing ledger), after leases are released and the summary reported.
    """
    from reins.loop.pricing import refuse_unpriced

    budget = (options or LoopOptions()).budget
    refuse_unpriced(budget, [g for g in (generator, strong) if g is not None])
    scratch.sweep()  # the temporary folders of runs that died: a kill skips their cleanup
    engine = Engine(store, quest, generator, strong=strong, options=options, reporter=reporter)
    signals = _Signals(engine)
    if handle_signals:
        signals.install()
    watcher: asyncio.Task[None] | None = None
    if stop is not None:

        async def watch() -> None:
            await stop.wait()
            engine.stop(StopReason.INTERRUPTED, signal="stop")

        watcher = asyncio.create_task(watch())
    try:
        return await engine.run()
    finally:
        if watcher is not None:
            watcher.cancel()
            await asyncio.gather(watcher, return_exceptions=True)
        signals.remove()


class Stoppable(Protocol):
    """A run a signal can stop: the loop's engine, a batch run."""

    reporter: Reporter

    def stop(self, reason: StopReason, message: str = "", *, signal: str | None = None) -> None: ...


class _Signals:
    """SIGINT and SIGTERM as a stop of ``engine``: the first asks it to stop; the same signal
    again within ``REPEAT_WINDOW`` is the same request; any later (or other) one kills."""

    def __init__(self, engine: Stoppable) -> None:
        self.engine = engine
        self.loop = asyncio.get_running_loop()
        self.installed: list[signal.Signals] = []
        self.first: tuple[signal.Signals, float] | None = None  # the one that asked, and when

    def install(self) -> None:
        """Handle the signals, in the main thread only (no other may)."""
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in SIGNALS:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                self.loop.add_signal_handler(sig, self.on_signal, sig)
                self.installed.append(sig)

    def remove(self) -> None:
        for sig in self.installed:
            self.loop.remove_signal_handler(sig)
        self.installed.clear()

    def on_signal(self, sig: signal.Signals) -> None:
        now = time.monotonic()
        if self.first is None:
            self.first = (sig, now)
            self.engine.stop(StopReason.INTERRUPTED, signal=sig.name)
            return
        if self.first[0] == sig and now - self.first[1] < REPEAT_WINDOW:
            return  # the same request, delivered twice
        # A deliberate second one is not ours to soften: die of it now, as if unhandled.
        self.engine.reporter.note(
            f"interrupted at once by a second {sig.name}: nothing is half-recorded; the leases "
            "this loop held run out by themselves (a batch sent runs on at the provider)"
        )
        self.remove()
        signal.signal(sig, signal.SIG_DFL)
        signal.raise_signal(sig)


def run(
    store: Store,
    quest: Quest,
    generator: Generator,
    *,
    strong: Generator | None = None,
    options: LoopOptions | None = None,
    reporter: Reporter | None = None,
    handle_signals: bool = True,
) -> Summary:
    """Blocking :func:`drive` in a new event loop; SIGINT/SIGTERM stop it cleanly."""
    return asyncio.run(
        drive(
            store,
            quest,
            generator,
            strong=strong,
            options=options,
            reporter=reporter,
            handle_signals=handle_signals,
        )
    )


async def drive_batches(
    store: Store,
    quest: Quest,
    backend: Backend,
    *,
    options: LoopOptions | None = None,
    reporter: Reporter | None = None,
    handle_signals: bool = False,
) -> Summary:
    """Work ``store`` in batch rounds (:mod:`reins.loop.batching`) until nothing is left, a
    cap, a breaker, or a stop; open batch jobs of this backend are carried on first.

    ``handle_signals``: SIGINT and SIGTERM stop the run as in :func:`drive`; a batch already
    sent runs on at the provider, its items leased to it, and a rerun records its results.

    Raises:
        ConfigError: the backend has no batch API; a cost cap on a backend without a price.
        Exception: whatever stopped the run with reason ``error``, after the summary.
    """
    from reins.loop.batching import BatchRun
    from reins.loop.generator import TextGenerator
    from reins.loop.pricing import refuse_unpriced

    refuse_unpriced((options or LoopOptions()).budget, [TextGenerator(backend)])

    batches = BatchRun(store, quest, backend, options=options, reporter=reporter)
    signals = _Signals(batches)
    if handle_signals:
        signals.install()
    try:
        return await batches.run()
    finally:
        signals.remove()


def run_batches(
    store: Store,
    quest: Quest,
    backend: Backend,
    *,
    options: LoopOptions | None = None,
    reporter: Reporter | None = None,
    handle_signals: bool = True,
) -> Summary:
    """Blocking :func:`drive_batches` in a new event loop; SIGINT/SIGTERM stop it cleanly."""
    return asyncio.run(
        drive_batches(
            store, quest, backend, options=options, reporter=reporter,
            handle_signals=handle_signals,
        )
    )  # fmt: skip


def cancel_batches(
    store: Store,
    quest: Quest,
    backend: Backend,
    jobs: Collection[int] = (),
    *,
    wait: bool = True,
    options: LoopOptions | None = None,
    reporter: Reporter | None = None,
) -> list[tuple[BatchJob, str]]:
    """Cancel the open batch jobs ``jobs`` (none: every open one of ``backend``): at the
    provider, then (with ``wait``) record what finished before the cancel took. A job never
    sent is discarded. Returns each job as it ended, and how (``cancelled``, ``collected``:
    it had ended already, ``discarded``, ``left``: the cancel is under way)."""
    from reins.loop.batching import BatchRun

    async def go() -> list[tuple[BatchJob, str]]:
        batches = BatchRun(store, quest, backend, options=options, reporter=reporter)
        signals = _Signals(batches)
        signals.install()
        try:
            return [(job, ended.value) for job, ended in await batches.cancel(jobs, wait=wait)]
        finally:
            signals.remove()

    return asyncio.run(go())
