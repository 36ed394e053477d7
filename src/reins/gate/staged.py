"""Staged evaluation: judge what needs no outside world first; reach out only when it can matter.

Stage 0 runs the counters that need no ground. If a FAIL remains that no ground-reading counter
supersedes, the verdict is FAIL whatever the grounds say, so none is resolved. Otherwise every
needed ground is resolved once, through one :class:`~reins.gate.ground.Snapshot`, and stage 1
runs the ground-reading counters with ``ctx.grounds`` filled. Stage-0 checks are not run twice.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from functools import partial
from types import MappingProxyType
from typing import Any, Protocol

from reins.errors import GroundError, JudgeError
from reins.gate.counter import Counter
from reins.gate.evaluate import excerpt
from reins.gate.ground import NetResolver, Provider, Resolver, Snapshot
from reins.gate.rule import Context, Fact, Level

Fired = dict[str, tuple[tuple[Fact, ...], Level]]
"""Counter id → the facts it left and its weight (the level of its strongest fact)."""


class Staged(Protocol):
    """What the stages read of a graph (:class:`reins.gate.graph.Graph` is one)."""

    @property
    def counters(self) -> Sequence[Counter]: ...

    @property
    def grounds(self) -> Mapping[str, Provider]: ...

    @property
    def resolver(self) -> Resolver | None: ...

    def fire(self, counter: Counter, ctx: Context) -> tuple[tuple[Fact, ...], Level] | None: ...

    def remaining(self, alive: Collection[str]) -> list[str]: ...


def judge_staged(graph: Staged, ctx: Context) -> tuple[Fired, tuple[str, ...]]:
    """The facts and weight of every counter that fired, and the ids of those not judged."""
    fired: Fired = {}
    later: list[Counter] = []
    for c in graph.counters:
        if c.needs:
            later.append(c)
        elif hit := graph.fire(c, ctx):
            fired[c.id] = hit
    if not later:
        return fired, ()
    if settled(graph, fired, later):
        return fired, tuple(c.id for c in later)
    names = list(dict.fromkeys(name for c in later for name in c.needs))
    snapshot = Snapshot(graph.resolver if graph.resolver is not None else NetResolver())
    values, failures = resolve(graph.grounds, names, ctx, snapshot)
    full = replace(ctx, grounds=MappingProxyType({**ctx.grounds, **values}))
    for c in later:
        failed = next((name for name in c.needs if name in failures), None)
        if failed is not None:
            # The outside world did not answer: the judge cannot judge, the generator is not
            # to blame. A judge error, never a verdict.
            label = f"ground {failed}"
            raise JudgeError(label, excerpt(failures[failed].removeprefix(f"{label}: ")))
        if hit := graph.fire(c, full):
            fired[c.id] = hit
    return fired, ()


def settled(
    graph: Staged, fired: Mapping[str, tuple[tuple[Fact, ...], Level]], later: Sequence[Counter]
) -> bool:
    """Whether stage 0 left a FAIL that no counter of ``later`` could supersede."""
    reachable = {down for c in later for down in c.supersedes}
    return any(
        fired[r][1] is Level.FAIL and r not in reachable for r in graph.remaining(fired.keys())
    )


def resolve(
    providers: Mapping[str, Provider], names: Sequence[str], ctx: Context, snapshot: Snapshot
) -> tuple[dict[str, Any], dict[str, str]]:
    """Each named ground computed once: the values, and the error text of those that failed."""
    values: dict[str, Any] = {}
    failures: dict[str, str] = {}
    for name in names:
        try:
            values[name] = snapshot.once(("ground", name), partial(providers[name], ctx, snapshot))
        except GroundError as exc:
            failures[name] = str(exc)
    return values, failures
