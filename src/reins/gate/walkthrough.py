"""The walkthrough of a graph verdict: its feedback, saying why it came out so and what would
flip it, in the shape :func:`reins.gate.verdict.flat_walkthrough` gives a flat one.

It names the root cause and the facts of every remaining counter (at most
:data:`~reins.gate.bounds.FACTS_SHOWN` in all, counting the rest), what is superseded while its
upstream stands, what was not judged yet, and the rounds of FAILs to clear for the next outcome.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Protocol

from reins.gate.rule import Fact, Level
from reins.gate.verdict import PERSON_DECIDES, Outcome, and_list, cause_and_remaining
from reins.gate.wording import FLIP


class Walked(Protocol):
    """What a walkthrough reads of its graph (:class:`~reins.gate.graph.Graph` is one)."""

    def reach(self, node: str) -> int: ...

    def position(self, node: str) -> int: ...

    def remaining(self, alive: Collection[str]) -> list[str]: ...


def walkthrough(
    graph: Walked,
    outcome: Outcome,
    root: str,
    remaining: Sequence[str],
    superseded: Mapping[str, tuple[str, ...]],
    facts: Mapping[str, tuple[Fact, ...]],
    levels: Mapping[str, Level],
    skipped: Sequence[str],
) -> str:
    """Why the verdict came out as it did, and what would change it. One line per statement."""
    reach = graph.reach(root)
    upstream_of = f", upstream of {reach} rule{'' if reach == 1 else 's'}" if reach else ""
    head = f"{outcome}. Root cause: {root} ({levels[root]}{upstream_of})."
    lines = cause_and_remaining(head, root, [r for r in remaining if r != root], levels, facts)
    if superseded:
        lines.append("Superseded while their upstream stands:")
        by_upstream: dict[str, list[str]] = {}
        for down, ups in superseded.items():  # downs come in catalog order
            for up in ups:
                by_upstream.setdefault(up, []).append(down)
        for up in sorted(by_upstream, key=graph.position):
            lines.append(f"  {up} supersedes {and_list(by_upstream[up])}.")
    if skipped:
        lines.append(f"Not judged yet (they read grounds): {and_list(skipped)}.")
    if outcome is Outcome.REVIEW:
        # REVIEW locks the item: nothing the generator clears can flip it now, a person decides.
        lines.append(PERSON_DECIDES)
        return "\n".join(lines) + "\n"
    alive = set(levels)
    rounds: list[str] = []
    while pick := [r for r in graph.remaining(alive) if levels[r] is Level.FAIL]:
        rounds.append(and_list(pick))
        alive.difference_update(pick)
    after = Outcome.REVIEW if graph.remaining(alive) else Outcome.PASS
    lines.append(f"{FLIP}{after}, clear {', then '.join(rounds)}.")
    return "\n".join(lines) + "\n"
