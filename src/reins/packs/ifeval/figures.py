"""The four figures IFEval's users quote, for ``reins -q ifeval report``.

Prompt-level and instruction-level accuracy, strict and loose, counted as the official
evaluation counts them (``evaluation_main``'s ``print_report``; lm-eval's ``ifeval`` metrics)
and named and shown as lm-eval's results table shows them: ``prompt_level_strict_acc 0.7671``.
They are read from the facts of each item's latest judged answer, which the pack's rules leave
one per instruction not followed (``checks.py``):

- no fact: the instruction is followed, strictly and loosely;
- a REVIEW fact: followed loosely only;
- a FAIL fact: followed neither way;
- a REVIEW fact of a coin flip (the official checker is random there): counted as not
  followed either way, since the pack does not flip the coin.

An item not judged yet is not counted; ``prompts_counted`` says how many were.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from reins.figures import Figure, ItemView, LedgerView
from reins.packs.ifeval.checks import NOT_JUDGED

__all__ = ["official_figures"]


@dataclass(slots=True)
class Counts:
    """The official counts: prompts and instructions, each followed strictly and loosely."""

    prompts: int = 0
    prompts_strict: int = 0
    prompts_loose: int = 0
    instructions: int = 0
    strict: int = 0
    loose: int = 0
    coin_flips: int = 0
    not_judged: int = 0

    def add(self, item: ItemView) -> None:
        """Count ``item`` by its latest judged answer (not at all when it has none)."""
        payload = item.payload
        ids = payload.get("instruction_id_list") if isinstance(payload, Mapping) else None
        if not isinstance(ids, list) or not ids:
            return  # not an IFEval prompt: nothing the official figures count
        if item.answer is None:
            self.not_judged += 1
            return
        listed = {i for i in ids if isinstance(i, str)}
        facts = [f for f in item.answer.facts if f.where.split(" ", 1)[0] in listed]
        coin = sum(1 for f in facts if f.actual.startswith(NOT_JUDGED))
        unloose = coin + sum(1 for f in facts if f.level == "FAIL")
        n = len(ids)
        self.prompts += 1
        self.prompts_strict += not facts
        self.prompts_loose += not unloose
        self.instructions += n
        self.strict += max(n - len(facts), 0)
        self.loose += max(n - unloose, 0)
        self.coin_flips += coin


def official_figures(view: LedgerView) -> list[Figure]:
    """``[report] figures`` of the pack's quest.toml: the four figures, then what was counted."""
    tally = Counts()
    for item in view.items():
        tally.add(item)
    if not tally.prompts:
        return [_counted(tally)]
    prompts, instructions = tally.prompts, tally.instructions
    return [
        _fraction(
            "prompt_level_strict_acc",
            "prompt-level strict accuracy",
            tally.prompts_strict,
            prompts,
            "prompts",
        ),
        _fraction(
            "inst_level_strict_acc",
            "instruction-level strict accuracy",
            tally.strict,
            instructions,
            "instructions",
        ),
        _fraction(
            "prompt_level_loose_acc",
            "prompt-level loose accuracy",
            tally.prompts_loose,
            prompts,
            "prompts",
        ),
        _fraction(
            "inst_level_loose_acc",
            "instruction-level loose accuracy",
            tally.loose,
            instructions,
            "instructions",
        ),
        _counted(tally),
        Figure(
            "coin_flips",
            tally.coin_flips,
            "count",
            "instructions whose official checker is random here",
            "judged REVIEW, counted as not followed",
        ),
    ]


def _fraction(name: str, label: str, followed: int, total: int, what: str) -> Figure:
    return Figure(name, followed / total, "fraction", label, f"{followed:,} of {total:,} {what}")


def _counted(tally: Counts) -> Figure:
    waiting = f"; {tally.not_judged:,} not judged yet" if tally.not_judged else ""
    return Figure(
        "prompts_counted",
        tally.prompts,
        "count",
        "prompts counted",
        f"the latest judged answer of each{waiting}",
    )
