"""What a defeat graph must be before it judges: its nodes, edges, needs and acyclicity.

Each check raises :class:`~reins.errors.ConfigError` naming what is wrong, so a graph that
could drop a node from the tally, or supersede its way to PASS, is never built.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from reins.errors import ConfigError
from reins.gate.ai import is_ai
from reins.gate.counter import Counter
from reins.gate.ground import Provider
from reins.gate.rule import Level

RESERVED = "reins:"
"""Node ids starting with this belong to reins (the warrant, the graph's own failure)."""


def words(value: Iterable[str]) -> Iterable[str]:
    return (value,) if isinstance(value, str) else value


def check_nodes(counters: Sequence[Counter]) -> dict[str, int]:
    index: dict[str, int] = {}
    dupes: list[str] = []
    for i, c in enumerate(counters):
        if not isinstance(c, Counter):
            raise ConfigError(f"graph nodes must be Counters, got {type(c).__name__}")
        if c.id.startswith(RESERVED):
            raise ConfigError(f"graph node {c.id}: ids starting with {RESERVED!r} belong to reins")
        if is_ai(c.rule) and c.rule.level is not Level.REVIEW:
            raise ConfigError(f"graph node {c.id}: an AI check may raise REVIEW at most, not FAIL")
        if c.id in index:
            dupes.append(c.id)
        index.setdefault(c.id, i)
    if dupes:
        raise ConfigError(f"graph has duplicate nodes: {', '.join(dict.fromkeys(dupes))}")
    return index


def check_edges(counters: Sequence[Counter], grounds: Mapping[str, Provider]) -> None:
    ids = {c.id for c in counters}
    for name, provider in grounds.items():
        if not isinstance(name, str) or not name or any(ch.isspace() for ch in name):
            raise ConfigError(f"a ground name must be a non-empty word, got {name!r}")
        if not callable(provider):
            raise ConfigError(f"ground {name}: the provider must be callable (ctx, snapshot)")
    for c in counters:
        for down in c.supersedes:
            if down not in ids:
                raise ConfigError(
                    f"graph node {c.id} supersedes {down!r}, which is not a node. "
                    f"Known: {', '.join(sorted(ids))}"
                )
        for need in c.needs:
            if need not in grounds:
                known = ", ".join(sorted(grounds)) or "none"
                raise ConfigError(
                    f"graph node {c.id} needs ground {need!r}, which the graph does not define. "
                    f"Defined: {known}"
                )
        if c.supersedes and is_ai(c.rule):
            raise ConfigError(
                f"graph node {c.id}: an AI check may raise doubt but not supersede "
                f"{', '.join(c.supersedes)}"
            )


def check_acyclic(counters: Sequence[Counter]) -> None:
    """Raise ConfigError naming a cycle in ``supersedes``, if there is one."""
    edges = {c.id: c.supersedes for c in counters}
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    for start in edges:
        if start in state:
            continue
        path = [start]
        stack = [iter(edges[start])]
        state[start] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                cycle = [*path[path.index(nxt) :], nxt]
                raise ConfigError(f"graph supersedes has a cycle: {' → '.join(cycle)}")
            elif nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(edges[nxt]))


def reaches(counters: Sequence[Counter]) -> dict[str, int]:
    edges = {c.id: c.supersedes for c in counters}
    reach: dict[str, int] = {}
    for c in counters:
        seen: set[str] = set()
        todo = list(c.supersedes)
        while todo:
            node = todo.pop()
            if node not in seen and node != c.id:
                seen.add(node)
                todo.extend(edges[node])
        reach[c.id] = len(seen)
    return reach
