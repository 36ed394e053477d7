"""A slot of the engine: one leased item at a time, worked turn by turn until it locks.

A slot leases an item with its log (:mod:`reins.loop.taking`), or waits for another driver's
lease to run out (:mod:`reins.loop.waiting`); then it works the item, a turn at a time
(compose from the log, generate with the backend the log escalates to, judge and record in one
transaction), until the item locks, its lease is lost, a cap or a breaker stops the run, or a
stop. A generation or judge error uses no try: the slot backs off and tries again, and an item
whose generation keeps failing, or whose own budget is spent, is set aside for the run (its
lease given back). What a slot reads of the run is a :class:`Slotted` (the engine implements
it), so this module imports no engine.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from typing import Protocol

from reins.errors import LeaseConflict, NotTodo
from reins.loop.breakers import sets_aside, tripped
from reins.loop.events import StopReason
from reins.loop.generate import GenerationError
from reins.loop.generator import Bench, Generator, Site
from reins.loop.options import MAX_BACKOFF
from reins.loop.recording import Recorder
from reins.loop.spend import RUN_COST, RUN_TOKENS, item_over, item_spent
from reins.loop.tally import Tally, budget_message
from reins.loop.waiting import LeaseWait, Waiter
from reins.quest import Quest
from reins.store.codec import now_iso
from reins.store.model import Attempt, AttemptKind, Item
from reins.turn.compose import compose
from reins.turn.escalate import choose
from reins.turn.record import Recorded

# The run's caps an agent can be killed at, and the stop each one is.
RUN_CAPS = {RUN_TOKENS: StopReason.MAX_TOKENS, RUN_COST: StopReason.MAX_COST}


class Slotted(Waiter, Protocol):
    """What a slot reads of its run (the engine): its quest and generators, counts, the items
    set aside, how turns are made and recorded, and its stop (beside what waiting reads)."""

    quest: Quest
    policy: str
    rules: Collection[str]
    generator: Generator
    strong: Generator | None
    bench: Bench
    recorder: Recorder
    site: Site
    waiting: LeaseWait
    agents: asyncio.Semaphore  # places for generations: --concurrency of them
    tally: Tally
    set_aside: list[str]

    @property
    def stopping(self) -> bool: ...

    def stop(self, reason: StopReason, message: str = "", *, signal: str | None = None) -> None: ...

    def fail(self, exc: Exception) -> None: ...

    def count_turn(
        self,
        recorded: Recorded,
        *,
        backend: str,
        seed: int,
        cause: str | None,
        unreachable: bool = False,
    ) -> None: ...

    def report_aside(self, item: Item, errors: int, error: str | None) -> None: ...


class Permit:
    """A slot's hold on one of the run's places for a generation (``--concurrency`` of them:
    more slots than places let an item be judged while the next one's agent runs)."""

    def __init__(self, places: asyncio.Semaphore) -> None:
        self.places, self.held = places, False

    async def take(self) -> None:
        if not self.held:
            await self.places.acquire()
            self.held = True

    def give(self) -> None:
        if self.held:
            self.places.release()
            self.held = False


async def slot(run: Slotted) -> None:
    """Lease items one at a time and work each until nothing is left to take, the run's
    item cap, or a stop; a failure stops the run with it. A slot leases a new item only once
    it holds a place to generate in, so no item waits leased for one."""
    permit = Permit(run.agents)
    try:
        while not run.stopping:
            await permit.take()
            b = run.options.budget
            if run.stopping or (b.max_items is not None and run.tally.items_started >= b.max_items):
                return
            run.tally.items_started += 1
            room = None if b.max_items is None else b.max_items - run.tally.items_started + 1
            # A leased item and its log, in one ledger call (see reins.loop.taking).
            taken = await run.taker.take(excluding=run.set_aside, room=room)
            if taken is None:
                run.tally.items_started -= 1
                permit.give()
                if await run.waiting.wait(run):
                    continue
                return
            owner, item, log = taken
            holding = True
            try:
                holding = await _work(run, owner, item, log, permit)
            finally:
                run.taker.done(owner, holding=holding)
    except Exception as exc:
        run.fail(exc)
    finally:
        permit.give()


async def _work(run: Slotted, owner: str, item: Item, log: list[Attempt], permit: Permit) -> bool:
    """Turns of one leased item until it locks, the lease is lost, or the run stops.
    Whether ``owner`` may still hold the lease (the run gives it back at its end).

    ``item`` and ``log`` are what the ledger holds: read when the lease was taken, then
    what each record transaction wrote. Another driver cannot write meanwhile (the lease),
    and if a lost lease let one in, the record step refuses (the claim's turn count).
    """
    failures = generation_failures = 0
    while not run.stopping:
        await permit.take()  # before the checks: none may pass while others start turns
        if run.stopping:
            break
        spent = run.tally.budget_spent(run.options.budget)
        if spent is not None:
            run.stop(spent, budget_message(run.options.budget, spent))
            return True
        if item.state.terminal or item.lease_owner != owner:
            return False  # it locked (which ends the lease), or another driver took it
        over = item_over(run.options.budget, item_spent(log))
        if over is not None:  # a cap is the operator's: set aside, never locked
            await _put_aside(run, owner, item, 0, over)
            return False  # given back
        turned = await _turn(run, owner, item, log, permit)
        if turned is None:
            return True
        recorded, budget = turned
        item, log = recorded.item, [*log, recorded.attempt]
        if recorded.attempt.judged:
            failures = generation_failures = 0
            continue
        if budget is not None:  # killed at a cap: the run stops, or the item is set aside
            if budget in RUN_CAPS:
                reason = RUN_CAPS[budget]
                run.stop(reason, budget_message(run.options.budget, reason, killed=True))
                return True
            continue
        # A generation or judge error: no try used. A breaker may trip, the item may be
        # set aside; else back off.
        if _tripped(run, recorded):
            return True
        if recorded.attempt.kind is AttemptKind.GENERATION_ERROR:
            generation_failures += 1
            if await _set_aside(run, owner, recorded, generation_failures):
                return False  # given back
        else:
            generation_failures = 0  # the generator answered; the judge failed
        failures += 1
        pause = min(run.options.error_backoff * 2 ** (failures - 1), MAX_BACKOFF)
        if not await run._sleep(pause):
            return True
    return True


async def _turn(
    run: Slotted, owner: str, item: Item, log: list[Attempt], permit: Permit
) -> tuple[Recorded, str | None] | None:
    """One turn of a leased item, recorded and counted, and the cap that killed its agent
    (if one did). None when a hard stop dropped its generation (not recorded, so not a
    turn) or the item moved under us. The generation holds one of the run's places; the
    judgment and the record do not."""
    assert permit.held
    generator, cause = choose(log, run.rules, run.generator, run.strong)
    prompt = compose(run.quest, item, log, policy=run.policy)
    started_at = now_iso()
    run.tally.turns_started += 1
    run.tally.in_flight += 1
    try:
        result = await generator.make(run.bench, item, log, prompt)
    finally:
        run.tally.in_flight -= 1
        permit.give()
    if result is None:
        run.tally.turns_started -= 1
        return None
    try:
        recorded = await run.recorder.turn(
            owner, item, result, prompt, generator.name, started_at, cause
        )
    except (LeaseConflict, NotTodo):
        return None  # the item moved under us (a lease lost while stalled): leave it
    if recorded.item.state.terminal:  # landed off the path
        run.site.locked(recorded.item, recorded.attempt, run.reporter.note)
    down = isinstance(result, GenerationError) and result.unreachable
    run.count_turn(recorded, backend=generator.name, seed=prompt.seed, cause=cause,
                    unreachable=down)  # fmt: skip
    return recorded, getattr(result, "budget", None)


def _tripped(run: Slotted, recorded: Recorded) -> bool:
    """Stop the run if this error trips a breaker (see :mod:`reins.loop.breakers`)."""
    trip = tripped(run.tally, run.options, recorded.attempt)
    if trip is not None:
        run.stop(*trip)
    return trip is not None


async def _set_aside(run: Slotted, owner: str, recorded: Recorded, errors: int) -> bool:
    """Set the item aside after ``errors`` generation errors in a row on it, if that is
    the option's count. True if so."""
    if not sets_aside(run.options, errors):
        return False
    await _put_aside(run, owner, recorded.item, errors, recorded.attempt.error)
    return True


async def _put_aside(run: Slotted, owner: str, item: Item, errors: int, error: str | None) -> None:
    """Set ``item`` aside for the run, after ``errors`` generation errors in a row (or 0:
    its own budget is spent): give its lease back and lease it no more this run."""
    run.set_aside.append(item.key)  # before the release: no other slot leases it then
    await run.db(run.store.release, item.key, owner)
    run.report_aside(item, errors, error)
