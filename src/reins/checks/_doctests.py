"""Doctest examples as the judge's: an example's expected output is the specification, so a
change that edits it (or drops the example) to make the doctest pass is a fact, not a fix.

pytest judges a doctest by comparing what the example prints with what its docstring says it
should. The docstring is in the code the agent changes, so without this an agent could pass a
failing doctest by writing the wrong answer in as the expected one.
"""

from __future__ import annotations

import ast
import doctest
import os
from collections.abc import Iterable

from reins.gate import excerpt
from reins.values import Fact, JudgeTree

MOST = 20


def doctest_facts(tree: JudgeTree, tests: Iterable[str]) -> list[Fact]:
    """A fact for each example of a judged doctest (a test of ``tests`` collected from a module
    that is not a test file) whose expected output the change edited."""
    from reins.workspace.judgetree import JudgeTrees
    from reins.workspace.treefacts import TEST_FILE

    files = {name.split("::", 1)[0] for name in tests}
    judged = sorted(f for f in files if f.endswith(".py") and not TEST_FILE.search(f)
                    and f in tree.changed)  # fmt: skip
    facts = []
    for path in judged:
        before = JudgeTrees.of(tree).at_base(path) or b""
        try:
            with open(os.path.join(tree.path, path), "rb") as f:
                after = f.read()
        except OSError:
            after = b""
        facts += edited_examples(path, before.decode("utf-8", "replace"),
                                 after.decode("utf-8", "replace"))  # fmt: skip
    return facts


def edited_examples(path: str, before: str, after: str) -> list[Fact]:
    """A fact for each example of ``path`` at the base (``before``) whose expected output the
    change rewrote, or which it dropped (``after``: the file as judged)."""
    old = _examples(before)
    new = _examples(after)
    facts = []
    for source, want in old.items():
        shown = f"{path}: the example `{excerpt(source, 80)}`"
        if source not in new:
            facts.append(Fact(where=shown, expected="kept: its expected output is the judge's",
                              actual="the change removed or rewrote it"))  # fmt: skip
        elif new[source] != want:
            facts.append(Fact(where=shown, expected=f"the output the base expects: {want!r:.200}",
                              actual=f"the change expects {new[source]!r:.200}"))  # fmt: skip
    return facts[:MOST]


def _examples(text: str) -> dict[str, str]:
    """Each example of the module's docstrings (its own, its classes' and functions', read
    with ``ast``: nothing runs) → its expected output (the first, for one written twice)."""
    found: dict[str, str] = {}
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):  # not Python: nothing the judge can hold it to
        return found
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    for node in ast.walk(tree):
        docstring = ast.get_docstring(node) if isinstance(node, kinds) else None
        try:
            examples = doctest.DocTestParser().get_examples(docstring or "")
        except ValueError:
            continue
        for example in examples:
            found.setdefault(example.source.strip(), example.want)
    return found
