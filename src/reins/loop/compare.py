"""Retry policies compared on the same items with the same generator.

What ``reins report --retry-compare`` and ``bench/bench_retry.py`` run: each policy works its
own fresh ledger of the same items (keys and payloads copied from the user's), with a fresh
backend, under the same loop options; the figure that matters is how many items pass by each
try. Nothing is written to the user's ledger.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from reins.errors import ConfigError
from reins.loop.generator import Generator
from reins.loop.options import LoopOptions
from reins.loop.run import run
from reins.quest import Quest
from reins.retry import RETRY_POLICIES, SYNTAX, canonical_retry
from reins.store.model import State
from reins.store.protocol import Store
from reins.store.query import PageQuery
from reins.store.walk import iter_items, passes_by_try


@dataclass(frozen=True, slots=True)
class PolicyRun:
    """One policy's run: passes by the judged try on which they came, and what it cost.

    ``passes[t - 1]`` counts the items that passed on try ``t``; ``cumulative`` sums them.
    """

    policy: str
    items: int
    passes: tuple[int, ...]
    review: int
    done: int
    turns: int
    input_tokens: int
    output_tokens: int
    stopped: str
    message: str
    solved: tuple[tuple[str, int], ...] = ()
    """Each passed item's key and the answer it passed on, by key: what a paired comparison
    of two policies reads."""

    @property
    def cumulative(self) -> tuple[int, ...]:
        total, out = 0, []
        for n in self.passes:
            total += n
            out.append(total)
        return tuple(out)

    def to_json(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "items": self.items,
            "passes_by_try": list(self.passes),
            "cumulative": list(self.cumulative),
            "review": self.review,
            "done": self.done,
            "turns": self.turns,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "stopped": self.stopped,
            "message": self.message,
            "solved": dict(self.solved),
        }


def compare_retry(
    quest: Quest,
    items: Iterable[tuple[str, Any]],
    generator_for: Callable[[], Generator],
    policies: Sequence[str],
    *,
    options: LoopOptions | None = None,
    open_store: Callable[[Path], Store] | None = None,
) -> list[PolicyRun]:
    """Run ``items`` under each of ``policies``, each on a fresh temporary ledger.

    Args:
        generator_for: a new generator per policy (so no state carries over between runs).
        open_store: opens (creating) a ledger at a path; SQLite by default.

    Raises:
        ConfigError: an unknown policy, or no items.
    """
    policies = _known(policies)
    seeds = list(items)
    if not seeds:
        raise ConfigError("retry-compare: no items to run")
    if open_store is None:
        from reins.store.owner import Owner
        from reins.store.sqlite import SQLiteStore

        def open_store(path: Path) -> Store:
            # made for this quest alone, like any ledger, and removed after its run
            return SQLiteStore.open(path, create=True, owner=Owner(quest.name, "retry-compare"))

    base = options or LoopOptions()
    runs = []
    for policy in policies:
        with tempfile.TemporaryDirectory(prefix="reins-retry-") as folder:
            store = open_store(Path(folder) / f"{quest.name}.reins.db")
            try:
                store.add(seeds)
                generator = generator_for()
                runs.append(_run(store, quest, generator, replace(base, retry=policy), len(seeds)))
            finally:
                store.close()
    return runs


def _known(policies: Sequence[str]) -> list[str]:
    """The policies in their canonical form (as each attempt records them)."""
    known, unknown = [], []
    for policy in policies:
        try:
            known.append(canonical_retry(policy))
        except ConfigError as exc:
            unknown.append((policy, exc))
    if unknown:
        raise ConfigError(
            f"unknown retry polic{'y' if len(unknown) == 1 else 'ies'} "
            f"{', '.join(p for p, _ in unknown)}; known: {', '.join(RETRY_POLICIES)}, or a "
            f"schedule of them ({SYNTAX}): {unknown[0][1]}"
        )
    return known


def _run(
    store: Store, quest: Quest, generator: Generator, options: LoopOptions, items: int
) -> PolicyRun:
    """One policy's run (``options.retry``) on its own ledger of ``items`` seeds, already
    seeded, and what it came to."""
    summary = run(store, quest, generator, options=options, handle_signals=False)
    stats = store.stats()
    return PolicyRun(
        policy=str(options.retry),
        items=items,
        passes=passes_by_try(store, quest.max_tries),
        review=stats.counts.get(State.REVIEW, 0),
        done=stats.counts.get(State.DONE, 0),
        turns=summary.turns,
        input_tokens=summary.input_tokens,
        output_tokens=summary.output_tokens,
        stopped=summary.reason.value,
        message=summary.message,
        solved=solved_on(store),
    )


def solved_on(store: Store) -> tuple[tuple[str, int], ...]:
    """Each PASS item's key and the answer it passed on (``tries`` counts the FAILs before)."""
    passed = iter_items(store, PageQuery(state=State.PASS))
    return tuple(sorted((item.key, item.tries + 1) for item in passed))
