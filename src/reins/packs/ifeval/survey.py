"""Which of the pack's prompts the official code judges at random, computed, never listed by hand.

``python -m reins.packs.ifeval.survey`` prints the block the pack's README carries between its
``<!-- random:begin -->`` and ``<!-- random:end -->`` markers; a test keeps the two equal.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from reins.values import readable_json

__all__ = ["ITEMS", "RandomInstruction", "random_instructions", "readme_block"]

ITEMS = Path(__file__).with_name("items.jsonl")
BEGIN, END = "<!-- random:begin -->", "<!-- random:end -->"


@dataclass(frozen=True, slots=True)
class RandomInstruction:
    """One instruction of one prompt whose official checker draws a parameter at random."""

    key: str
    instruction_id: str
    kwargs: str
    drawn: tuple[str, ...]


def random_instructions(path: Path = ITEMS) -> Iterator[RandomInstruction]:
    """Every instruction in the JSONL prompts at ``path`` whose official checker is random."""
    from reins.packs.ifeval.checks import build

    with path.open(encoding="utf-8") as lines:
        for line in lines:
            item = json.loads(line)
            for instruction_id, kwargs in zip(
                item["instruction_id_list"], item["kwargs"], strict=True
            ):
                built = build(instruction_id, kwargs, item["prompt"])
                if built.random:
                    yield RandomInstruction(
                        str(item["key"]), instruction_id, readable_json(kwargs), built.drawn
                    )


def readme_block(path: Path = ITEMS) -> str:
    """The README's list of random prompts, between its markers."""
    rows = [
        f"| {r.key} | `{r.instruction_id}` | `{r.kwargs}` | {', '.join(r.drawn)} |"
        for r in random_instructions(path)
    ]
    table = ["| key | instruction | parameters | drawn at random |", "|---|---|---|---|", *rows]
    return "\n".join([BEGIN, *table, END])


if __name__ == "__main__":  # pragma: no cover - a maintenance command
    print(readme_block())
