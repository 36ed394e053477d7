"""The state machine's model and state: what the ledger should hold, item by item, and the
check, after every step, that it does (``machine.py`` holds the steps)."""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from hypothesis.stateful import RuleBasedStateMachine, invariant

from reins.store.model import Attempt, Claim, Draft, Item, State
from reins.store.protocol import Store
from reins.testing.conformance._kit import ERROR, QUEST, T0, TTL, assert_sound, live_holder
from reins.testing.harness import StoreHarness

OWNERS = ("ann", "bob")
KEYS = ("a", "b", "c", "d", "e")
# Outcomes the machine records: the gate's three commonest, and a generation error.
RESULTS = ("PASS", "FAIL", "FAIL", "REVIEW", ERROR)
STEPS = (1.0, 20.0, TTL - 1, TTL, TTL + 1, 5 * TTL)


@dataclass
class Model:
    """What the ledger should hold for one item."""

    state: State = State.TODO
    tries: int = 0
    turns: int = 0
    round: int = 1
    owner: str | None = None
    expires: float | None = None

    def holder(self, now: float) -> str | None:
        if self.owner is not None and (self.expires or 0.0) > now:
            return self.owner
        return None


def after_turn(m: Model, result: str) -> tuple[State, int]:
    """The record table, written out by hand: the state and tries a turn leaves."""
    if result == "PASS":
        return State.PASS, m.tries
    if result == "REVIEW":
        return State.REVIEW, m.tries
    if result == "FAIL":
        tries = m.tries + 1
        return (State.DONE if tries >= QUEST.max_tries else State.TODO), tries
    return State.TODO, m.tries  # a generation error consumes no try and locks nothing


class MachineState(RuleBasedStateMachine):
    """The two owners' stores on one ledger, the clock, the model and what was exported; the
    steps are :class:`~reins.testing.conformance.machine.LedgerMachine`'s."""

    harness: StoreHarness
    folder: Path
    runs = itertools.count()

    def __init__(self) -> None:
        super().__init__()
        location = self.harness.create()
        self.stores: dict[str, Store] = {}
        for owner in OWNERS:  # one store each, as two processes would have
            self.stores[owner] = self.harness.open(location)
        self.stores["ann"].add((k, {"word": k}) for k in KEYS)
        self.clock = T0
        self.model = {k: Model() for k in KEYS}
        self.given: dict[str, str | None] = {o: None for o in OWNERS}
        self.nexts = dict.fromkeys(OWNERS, 0)
        self.out = self.folder / f"machine-{next(self.runs)}.jsonl"
        self.exported: set[str] = set()  # marked as exported, in a finished batch
        self.lines: Counter[str] = Counter()  # the export file's lines per key
        self.crashed: set[str] = set()  # claimed by a writer that died, not yet exported
        # Reopened after their lock was claimed for the file: a withdrawal is owed to it (until
        # the next claim, which writes it, or drops it if the item locked again).
        self.owed: set[str] = set()
        self.locked: dict[str, tuple[Item, list[Attempt]]] = {}
        self.remaining = len(KEYS)
        self.last: tuple[str, Draft, Claim, Attempt] | None = None
        self.nonces = itertools.count()

    def teardown(self) -> None:
        for store in self.stores.values():
            store.close()

    # -- what holds after every step ------------------------------------------------------

    @invariant()
    def the_ledger_matches_the_model(self) -> None:
        store = self.stores["bob"]
        for key in KEYS:
            item, m = store.get(key), self.model[key]
            assert (item.state, item.tries, item.turns, item.round) == (
                m.state,
                m.tries,
                m.turns,
                m.round,
            ), key
            assert live_holder(item, self.clock) == m.holder(self.clock), key
            assert item.exported == (key in self.exported or key in self.crashed), key
            if m.holder(self.clock) is not None:
                assert item.lease_expires == m.expires, key
        stats = store.stats(now=self.clock)
        todo = sum(1 for m in self.model.values() if m.state is State.TODO)
        assert stats.remaining == todo <= self.remaining  # remaining never grows
        self.remaining = todo
        held = [m.holder(self.clock) for m in self.model.values()]
        assert stats.leased == sum(1 for h in held if h is not None)
        for key, (item, log) in self.locked.items():  # a locked item never changes
            now_item, now_log = store.snapshot(key)
            assert now_log == log, key
            assert (now_item.state, now_item.tries, now_item.turns, now_item.locked_at) == (
                item.state,
                item.tries,
                item.turns,
                item.locked_at,
            )
        assert_sound(store)
