"""The code stays readable: no module of ``src/reins`` over 400 lines, no function over 60, and
no module of ``loop/`` over 300 (the loop grows with every driver: it is split before it does).

Counted as the house style counts them: a module's lines, a function's from ``def`` to its
last line (its docstring included).
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).parent.parent / "src" / "reins"
MAX_MODULE = 400
MAX_FUNCTION = 60
MAX_LOOP_MODULE = 300
ALONE = {"reins/packs/humaneval/harness.py": 440}
"""Programs run alone by ``python -I`` in a sandbox that may not see reins: one file each, as
they cannot import a sibling, so each has its own higher cap."""
CHECKED = sorted(SRC.rglob("*.py"))


def too_long(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    where = path.relative_to(SRC.parent)
    found = []
    if len(text.splitlines()) > ALONE.get(where.as_posix(), MAX_MODULE):
        found.append(f"{where}: {len(text.splitlines())} lines")
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > MAX_FUNCTION:
                found.append(f"{where}:{node.lineno} {node.name}: {length} lines")
    return found


def test_no_module_or_function_is_too_long() -> None:
    assert len(CHECKED) > 200
    found = [line for path in CHECKED for line in too_long(path)]
    assert not found, "split these into named helpers:\n" + "\n".join(found)


def test_no_module_of_the_loop_is_over_300_lines() -> None:
    loop = sorted((SRC / "loop").glob("*.py"))
    assert len(loop) > 20
    found = [
        f"{path.relative_to(SRC.parent)}: {n} lines"
        for path in loop
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LOOP_MODULE
    ]
    assert not found, "split these along their concepts:\n" + "\n".join(found)
