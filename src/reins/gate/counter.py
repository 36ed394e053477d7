"""A node of the defeat graph: a rule whose facts attack the one PASS warrant.

``supersedes`` names the counters this one removes from the tally while it is active; ``needs``
the grounds its check reads, which put it in the second stage (:mod:`reins.gate.staged`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from reins.gate.ai import cap
from reins.gate.rule import Level, Rule


@dataclass(frozen=True, slots=True)
class Counter:
    """One node: a rule whose fact attacks the PASS warrant.

    Args:
        rule: the rule; its id is the node id and its level the weight of its attack.
        supersedes: ids of the counters this one removes from the tally while it is active.
        needs: names of the grounds its check reads from ``ctx.grounds``.
    """

    rule: Rule
    supersedes: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()
    id: str = field(init=False, repr=False, compare=False)  # the rule's id, read on every tally

    def __post_init__(self) -> None:
        for name in ("supersedes", "needs"):
            value = getattr(self, name)
            items = (value,) if isinstance(value, str) else tuple(value)
            object.__setattr__(self, name, tuple(dict.fromkeys(items)))
        object.__setattr__(self, "id", self.rule.id)

    @property
    def level(self) -> Level:
        """The level this counter's fact counts at (REVIEW at most for an AI check)."""
        return cap(self.rule, self.rule.level)
