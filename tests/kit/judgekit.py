"""A judgment by the ``pytest`` check in a judge's tree, for the tests of the confined judge:
a small project whose honest verdict is FAIL (``WRONG``) or PASS (``RIGHT``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reins.checks import BASE, spec_of, validate
from reins.gate.rule import Context
from reins.values import Fact, JudgeTree

WRONG = "def add(a, b):\n    return a - b\n"
RIGHT = "def add(a, b):\n    return a + b\n"
TESTS = "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n"


def verdict(tree: JudgeTree, tmp_path: Path, **params: Any) -> list[Fact]:
    """Every fact of a judgment by a ``pytest`` rule (``tests/test_calc.py::test_add`` by
    default): reins' own facts of the tree first."""
    spec = spec_of("pytest")
    params = params or {"tests": ["tests/test_calc.py::test_add"]}
    check = spec.build(validate(spec, {**params, BASE: str(tmp_path)}))
    found = check(Context(key="add", submission="", workspace=tree))
    more = [] if found is None else [found] if isinstance(found, Fact) else list(found)
    return [*tree.facts, *more]
