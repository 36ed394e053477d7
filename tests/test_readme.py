"""The README's Python blocks run as written, in order, in one namespace."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_every_python_block_of_the_readme_runs() -> None:
    blocks = python_blocks()
    assert len(blocks) >= 3
    namespace: dict[str, object] = {"__name__": "readme"}
    for n, block in enumerate(blocks, start=1):
        try:
            exec(compile(block, f"README.md python block {n}", "exec"), namespace)
        except Exception as exc:  # pragma: no cover - the message is the point
            raise AssertionError(f"README python block {n} fails: {exc!r}\n{block}") from exc


def test_the_readme_quest_judges_as_it_says() -> None:
    from reins import Item, Quest, State, Verdict
    from reins.turn.judge import judge

    namespace: dict[str, object] = {"__name__": "readme"}
    exec(compile(python_blocks()[0], "README.md python block 1", "exec"), namespace)
    quest = namespace["quest"]
    assert isinstance(quest, Quest)
    item = Item("apple", State.TODO, 0, {"word": "apple"})
    passed, failed = judge(quest, item, "APPLE")[0], judge(quest, item, "Apple")[0]
    assert isinstance(passed, Verdict) and passed.outcome.value == "PASS"
    assert isinstance(failed, Verdict) and failed.root_cause == "upper-case"
