"""The figures HumanEval's users quote, for ``reins -q humaneval report``.

- ``pass_at_1``: the share of problems whose first answer passed: HumanEval's pass@1 with one
  sample a problem (the unbiased estimator of the Codex paper is this share when n = k = 1).
- ``pass_after_2`` and ``pass_after_3``: the share passed by their second and by their third
  answer, each answer after the first written with the facts of the one before: what the
  retries bought.

Each is read from an item's latest judged answer and its number in the item's round
(:attr:`reins.figures.Answer.number`): an item that passed on answer k counts as passed
after k and after every later answer. Each share is counted over the problems settled for it:
passed by then, given that many answers, or locked (out of tries); an item still waiting for
its k-th answer is left out of the k-th share until it has it, so a run in progress never
counts an answer not yet given as a failure. Items not judged yet are not counted at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from reins.figures import Figure, ItemView, LedgerView

__all__ = ["ANSWERS", "pass_rates"]

ANSWERS = (1, 2, 3)


@dataclass(slots=True)
class Counts:
    """Per answer k: the problems passed by answer k, and those settled for k."""

    passed: dict[int, int] = field(default_factory=lambda: dict.fromkeys(ANSWERS, 0))
    settled: dict[int, int] = field(default_factory=lambda: dict.fromkeys(ANSWERS, 0))
    judged: int = 0
    not_judged: int = 0

    def add(self, item: ItemView) -> None:
        answer = item.answer
        if answer is None or answer.number < 1:
            self.not_judged += 1
            return
        self.judged += 1
        passed = answer.outcome == "PASS"
        for k in ANSWERS:
            if passed and answer.number <= k:
                self.passed[k] += 1
                self.settled[k] += 1
            elif passed or answer.number >= k or item.state != "TODO":
                self.settled[k] += 1


def pass_rates(view: LedgerView) -> list[Figure]:
    """``[report] figures`` of the pack's quest.toml."""
    tally = Counts()
    for item in view.items():
        tally.add(item)
    out = []
    for k in ANSWERS:
        settled, passed = tally.settled[k], tally.passed[k]
        if not settled:
            continue
        name = "pass_at_1" if k == 1 else f"pass_after_{k}"
        label = "pass@1: passed on answer 1" if k == 1 else f"passed by answer {k}"
        waiting = tally.judged - settled
        note = f"{passed:,} of {settled:,} problems" + (
            f"; {waiting:,} waiting for answer {k}" if waiting else ""
        )
        out.append(Figure(name, passed / settled, "fraction", label, note))
    later = f"; {tally.not_judged:,} not judged yet" if tally.not_judged else ""
    out.append(
        Figure(
            "problems_counted",
            tally.judged,
            "count",
            "problems counted",
            f"each by its latest judged answer{later}",
        )
    )
    return out
