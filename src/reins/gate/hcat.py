"""The weighted h-Categoriser: a graded acceptability for every node of an attack graph.

Amgoud & Ben-Naim (2013), weighted form::

    Deg(a) = w(a) / (1 + Σ Deg(b) for every attacker b of a)

computed as the limit of the sequence that starts at ``Deg₀(a) = w(a)`` and applies the equation
to the previous round. The sequence converges on every finite graph, cycles included (Pu et al.
2014; Amgoud et al. 2017 for weights in [0, 1]); its odd and even rounds bracket the limit, so a
stop after ``rounds`` rounds returns the midpoint of the last two. On an acyclic graph the values
are exact after (longest attack chain + 2) rounds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

TOLERANCE = 1e-12
ROUNDS = 1000


def h_categoriser(
    weights: Mapping[str, float],
    attacks: Iterable[tuple[str, str]],
    *,
    tolerance: float = TOLERANCE,
    rounds: int = ROUNDS,
) -> dict[str, float]:
    """The acceptability of each node in ``weights``, in the same order.

    Args:
        weights: node → intrinsic weight in [0, 1].
        attacks: ``(attacker, target)`` pairs; both must be nodes of ``weights``.
        tolerance: stop once no value moves by more than this.
        rounds: stop after this many rounds at the latest.

    Raises:
        ValueError: a weight outside [0, 1], or an attack naming an unknown node.
    """
    for node, w in weights.items():
        if not 0.0 <= w <= 1.0:
            raise ValueError(f"the weight of {node!r} must be in [0, 1], got {w}")
    attackers: dict[str, list[str]] = {node: [] for node in weights}
    for attacker, target in attacks:
        if attacker not in weights or target not in weights:
            unknown = attacker if attacker not in weights else target
            raise ValueError(f"an attack names {unknown!r}, which is not a node")
        attackers[target].append(attacker)
    now = dict(weights)
    before = now
    for _ in range(rounds):
        before, now = (
            now,
            {a: weights[a] / (1.0 + sum(now[b] for b in attackers[a])) for a in weights},
        )
        if all(abs(now[a] - before[a]) <= tolerance for a in weights):
            return now
    return {a: (now[a] + before[a]) / 2.0 for a in weights}
