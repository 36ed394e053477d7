"""Two retry policies compared item by item, and the policy a comparison recommends.

Counts alone hide how two policies differ on the same items: 37 and 36 passes may be 35
shared and 2 against 1, or 30 shared and 7 against 6. So each policy is set against a
baseline (``fresh``, a blind resample, when it ran) on the items that one solved and the other
did not, within the same answer budget, with a two-sided exact sign test on those. What
``reins report --retry-compare`` prints, and ``bench/bench_convergence.py``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from reins.loop.compare import PolicyRun

BASELINE = "fresh"
SIGNIFICANT = 0.05


def sign_test(wins: int, losses: int) -> float:
    """The two-sided exact sign test's p-value for ``wins`` against ``losses`` (ties left
    out): how likely a split at least this uneven is when neither policy is better."""
    n = wins + losses
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(wins, losses) + 1)) / 2**n
    return float(min(1.0, 2 * tail))


def solved_by(run: PolicyRun, answers: int) -> set[str]:
    """The items ``run`` passed on one of its first ``answers`` answers."""
    return {key for key, n in run.solved if n <= answers}


@dataclass(frozen=True, slots=True)
class Paired:
    """``policy`` against ``baseline`` within ``answers`` answers: the items each alone solved."""

    policy: str
    baseline: str
    answers: int
    only_policy: tuple[str, ...]
    only_baseline: tuple[str, ...]

    @property
    def p_value(self) -> float:
        return sign_test(len(self.only_policy), len(self.only_baseline))

    def to_json(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "baseline": self.baseline,
            "answers": self.answers,
            "only_policy": list(self.only_policy),
            "only_baseline": list(self.only_baseline),
            "sign_test_p": round(self.p_value, 4),
        }


def paired(run: PolicyRun, base: PolicyRun, answers: int) -> Paired:
    mine, theirs = solved_by(run, answers), solved_by(base, answers)
    return Paired(
        run.policy, base.policy, answers, tuple(sorted(mine - theirs)), tuple(sorted(theirs - mine))
    )


@dataclass(frozen=True, slots=True)
class Recommendation:
    """The policy that solved the most items within the answer budget (the fewest turns on a
    tie, then the one named first), its comparison with the baseline, and the word on it."""

    policy: str
    solved: int
    answers: int
    against: Paired | None
    pairs: tuple[Paired, ...]

    @property
    def said(self) -> str:
        head = f"recommended: --retry {self.policy} ({self.solved} solved by answer {self.answers}"
        p = self.against
        if p is None:
            return head + ")"
        vs = (
            f"; against {p.baseline}: {len(p.only_policy)} solved by it alone, "
            f"{len(p.only_baseline)} by {p.baseline} alone, sign test p = {p.p_value:.3f}"
        )
        if p.p_value >= SIGNIFICANT:
            vs += ": no clear difference on these items; compare on more of them"
        return head + vs + ")"

    def to_json(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "solved": self.solved,
            "answers": self.answers,
            "against": None if self.against is None else self.against.to_json(),
            "pairs": [p.to_json() for p in self.pairs],
            "said": self.said,
        }


def recommend(runs: Sequence[PolicyRun], answers: int | None = None) -> Recommendation:
    """The policy to recommend from ``runs`` of the same items, each paired with the baseline
    (``fresh`` when it ran, else the first run) within ``answers`` (default: every answer).

    Raises:
        ValueError: no runs.
    """
    if not runs:
        raise ValueError("no runs to compare")
    budget = answers or max(len(r.passes) for r in runs)
    base = next((r for r in runs if r.policy == BASELINE), runs[0])
    pairs = tuple(paired(r, base, budget) for r in runs if r is not base)
    order = sorted(
        range(len(runs)), key=lambda i: (-len(solved_by(runs[i], budget)), runs[i].turns, i)
    )
    best = runs[order[0]]
    against = next((p for p in pairs if p.policy == best.policy), None)
    return Recommendation(best.policy, len(solved_by(best, budget)), budget, against, pairs)
