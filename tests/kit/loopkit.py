"""Helpers for the loop, replay and driver-swap tests: ledgers, quests and a fake registry."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from reins import Quest, SQLiteStore
from reins.backends import Completion, registry
from reins.loop import Budget, LoopOptions, Reporter, Summary, TextGenerator, drive, run
from reins.store import Attempt, AttemptKind, State
from reins.testing import FakeBackend, FakeCall
from reins.turn import Prompt
from tests.kit.quests import TINY

FAST: dict[str, Any] = {"error_backoff": 0.0, "export_every": 0.05}

# `reins loop` on a slow fake backend (0.2 s a call), for a process of its own: python -c SLOW_LOOP.
SLOW_LOOP = """
import sys
from reins.backends import registry
from reins.cli import main
from reins.testing import FakeBackend
from tests.kit.loopkit import FakeFactory
registry.register("fake", FakeFactory({"w": FakeBackend(lambda c: "good", latency=0.2)}))
sys.argv = ["reins", "--quest", "tests.kit:TINY", "loop", "-m", "fake:w", "-c", "2"]
main()
"""


def first_turn(lines: IO[str]) -> str:
    """The first line of a loop's plain output that tells a turn, skipping the notes before
    it (a ledger adopting its quest); an empty line if the output ends first."""
    for _ in range(20):
        line = lines.readline()
        if not line or line.startswith("turn "):
            return line
    return ""


def make_ledger(path: Path, keys: Sequence[str] = ("a", "b", "c")) -> Path:
    with SQLiteStore.open(path, create=True) as led:
        led.add((k, {"word": k}) for k in keys)
    return path


def loop(
    path: Path,
    backend: FakeBackend,
    quest: Quest = TINY,
    *,
    strong: FakeBackend | None = None,
    reporter: Reporter | None = None,
    **options: Any,
) -> Summary:
    """Run the loop on the ledger at ``path`` with fast defaults for tests.

    ``max_items``, ``max_turns``, ``max_tokens`` and ``max_cost`` go into the budget.
    """
    caps = {k: options.pop(k) for k in list(options) if k.startswith("max_")}
    if caps:
        options["budget"] = Budget(**caps)
    with SQLiteStore.open(path) as led:
        return run(
            led,
            quest,
            TextGenerator(backend),
            strong=None if strong is None else TextGenerator(strong),
            options=LoopOptions(**{**FAST, **options}),
            reporter=reporter,
            handle_signals=False,
        )


class FakeFactory:
    """A ``reins.backends`` factory handing out prepared fakes by model name."""

    def __init__(self, backends: dict[str, FakeBackend]) -> None:
        self.backends = backends
        self.options: dict[str, str] = {}

    def __call__(self, model: str, options: dict[str, str]) -> FakeBackend:
        return self.backends[model]


@contextmanager
def registered(**backends: FakeBackend) -> Iterator[dict[str, FakeBackend]]:
    """Register the fakes as ``fake:<name>`` model specs for the CLI, for one test."""
    registry.register("fake", FakeFactory(backends))
    try:
        yield backends
    finally:
        registry.unregister("fake")


class _Peek(FakeBackend):
    """Takes the prompt, then stops the run before the call returns: nothing is recorded."""

    def __init__(self, stop: asyncio.Event) -> None:
        super().__init__([])
        self.stop = stop

    async def complete(self, prompt: Prompt, *, seed: int, timeout: float) -> Completion:
        self.calls.append(FakeCall(len(self.calls), 0, prompt, seed, timeout, prompt.key, 0, 0.0))
        self.stop.set()
        await asyncio.sleep(3600)
        raise AssertionError("the peek was not stopped")


def peek_loop_prompt(path: Path, quest: Quest = TINY, **options: Any) -> tuple[Prompt, int]:
    """The prompt and seed the loop would send next for the ledger at ``path``, unrecorded."""

    async def go() -> tuple[Prompt, int]:
        stop = asyncio.Event()
        peek = _Peek(stop)
        with SQLiteStore.open(path) as led:
            summary = await drive(
                led,
                quest,
                TextGenerator(peek),
                options=LoopOptions(**{**FAST, **options}),
                stop=stop,
            )
        assert summary.turns == 0 and len(peek.calls) == 1
        return peek.calls[0].prompt, peek.calls[0].seed

    return asyncio.run(go())


def fail(turn: int, cause: str = "not-bad", submission: str = "bad") -> Attempt:
    """Item "a"'s judged FAIL at ``turn``, as the ledger records it (for compose's tests)."""
    feedback = f"a -> FAIL (state TODO, tries {turn}/3)\nroot cause: {cause}\n"
    return Attempt(
        "a", turn, AttemptKind.JUDGED, "d", State.TODO, turn, "t", outcome="FAIL",
        root_cause=cause, feedback=feedback, submission=submission,
    )  # fmt: skip
