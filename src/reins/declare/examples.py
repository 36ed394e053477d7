"""Examples judged by their own quest's gate: a wrong example teaches the wrong answer.

Every example's output goes through the quest's ``prepare`` and gate when the quest loads, as
a submission for an item whose payload is the example's input. Anything but PASS refuses the
quest, with the facts.
"""

from __future__ import annotations

from collections.abc import Callable

from reins.errors import ConfigError, DocumentError, JudgeError
from reins.gate import Context, Outcome, Verdict
from reins.quest import Example, Quest
from reins.store.model import Item, State


def example_key(index: int, example: Example) -> str:
    """The key an example is judged (and rendered) under: its own, else ``example-N``."""
    return example.key or f"example-{index + 1}"


def example_item(index: int, example: Example) -> Item:
    return Item(example_key(index, example), State.TODO, 0, example.input)


def judge_example(quest: Quest, index: int, example: Example) -> str | None:
    """Why ``example`` does not pass ``quest``'s gate, on one line; None when it passes."""
    item = example_item(index, example)
    try:
        prepared = quest.prepare(item, example.output)
        verdict = prepared if isinstance(prepared, Verdict) else None
        if verdict is None:
            if not isinstance(prepared, Context):
                return f"prepare returned {type(prepared).__name__}, not a Context"
            verdict = quest.judge.evaluate(prepared)
    except JudgeError as exc:
        return f"the judge failed on it: {exc}"
    except Exception as exc:
        return f"the judge failed on it: {type(exc).__name__}: {exc}"
    if verdict.outcome is Outcome.PASS:
        return None
    facts = "; ".join(
        f"{f.rule}" + (f" ({f.level})" if f.level else "") + f" at {f.where or '-'}: "
        f"expected {f.expected!r}, actual {f.actual!r}"
        for f in verdict.facts
    )
    cause = f", root cause {verdict.root_cause}" if verdict.root_cause else ""
    return f"{verdict.outcome}{cause}: {facts}" if facts else f"{verdict.outcome}{cause}"


def check_examples(quest: Quest, locate: Callable[[int], tuple[str, int]] | None = None) -> None:
    """Refuse ``quest`` if any of its examples does not pass its own gate.

    Args:
        locate: example index → (file, line) where it is written, for a document's error.

    Raises:
        DocumentError: with ``locate``, at the failing example.
        ConfigError: without it (a Python quest), naming the quest and the example.
    """
    for index, example in enumerate(quest.examples):
        why = judge_example(quest, index, example)
        if why is None:
            continue
        what = f"example {example_key(index, example)!r} does not pass its own gate: {why}"
        if locate is not None:
            path, line = locate(index)
            raise DocumentError(path, line, 0, what)
        raise ConfigError(f"quest {quest.name}: {what}")
