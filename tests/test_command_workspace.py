"""The ``command`` check in a judge's tree, and the judge-error rule: what says the tool or its
environment broke is the judge's failure (no try), what the change broke is the agent's FAIL.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from reins.checks import BASE, spec_of, validate
from reins.errors import JudgeError
from reins.gate.rule import Context
from reins.values import Fact, JudgeTree
from tests.kit.codingkit import PYTHON, Judging, make_repo

PROJECT = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "tests/test_calc.py": (
        "from calc import add\n\n"
        "def test_add():\n    assert add(2, 2) == 4\n\n"
        "def test_zero():\n    assert add(0, 0) == 0\n"
    ),
}


def check(tmp_path: Path, **params: Any) -> Any:
    spec = spec_of("command")
    return spec.build(validate(spec, {**params, BASE: str(tmp_path)}))


def facts(found: Fact | Iterable[Fact] | None) -> list[Fact]:
    if found is None:
        return []
    return [found] if isinstance(found, Fact) else list(found)


@pytest.fixture
def trees(tmp_path: Path) -> Iterator[Judging]:
    repo = make_repo(tmp_path / "project", PROJECT)
    judging = Judging(repo, tmp_path / "trees")
    yield judging
    judging.close()


def worked(trees: Judging, key: str, files: dict[str, str]) -> JudgeTree:
    return trees.tree(key, files)


def ctx(tree: JudgeTree | None, key: str = "add") -> Context:
    return Context(key=key, submission="the agent's message and diff", workspace=tree)


PYTEST = ["{python}", "-m", "pytest", "-q", "-p", "no:randomly", "tests"]


def test_a_command_runs_in_the_worktree_and_names_each_failing_test(
    trees: Judging, tmp_path: Path
) -> None:
    run = check(tmp_path, run=PYTEST, workspace=True, timeout=120)
    tree = worked(trees, "add", {})
    found = facts(run(ctx(tree)))
    assert found[0].where == "test tests/test_calc.py::test_add"
    assert found[0].actual.startswith("failed: assert 0 == 4")
    assert found[-1].where == "command python -m pytest -q -p no:randomly tests"
    assert "exit code 1" in found[-1].actual and "assert 0 == 4" in found[-1].actual
    fixed = worked(trees, "add", {"calc.py": "def add(a, b):\n    return a + b\n"})
    assert run(ctx(fixed)) is None


def test_judging_writes_no_bytecode_or_cache_into_the_tree(trees: Judging, tmp_path: Path) -> None:
    """A judge's tree is reused: nothing one run writes may serve the next."""
    run = check(tmp_path, run=PYTEST, workspace=True, timeout=120)
    tree = worked(trees, "add", {})
    run(ctx(tree))
    leftovers = [p for p in Path(tree.path).rglob("*") if "__pycache__" in p.parts]
    assert leftovers == [] and not (Path(tree.path) / ".pytest_cache").exists()


def test_a_command_that_cannot_start_is_the_judge_s_error(trees: Judging, tmp_path: Path) -> None:
    tree = worked(trees, "add", {})
    with pytest.raises(JudgeError, match="not found on PATH"):
        check(tmp_path, run=["no-such-tool-here", "x"], workspace=True)(ctx(tree))
    script = tmp_path / "runner.sh"
    script.write_text("#!/bin/sh\nexec /no/such/python9 -m pytest\n")
    script.chmod(0o755)
    with pytest.raises(JudgeError, match=r"could not run \(exit code 127\)"):
        check(tmp_path, run=["./runner.sh"], workspace=True)(ctx(tree))


def test_a_missing_module_or_a_pytest_usage_error_is_the_judge_s_error(
    trees: Judging, tmp_path: Path
) -> None:
    tree = worked(trees, "add", {})
    with pytest.raises(JudgeError, match="has no module 'no_such_tool'"):
        check(tmp_path, run=["{python}", "-m", "no_such_tool"], workspace=True)(ctx(tree))
    missing = ["{python}", "-m", "pytest", "-q", "tests/test_nowhere.py"]
    with pytest.raises(JudgeError, match=r"exit code 4.*not found: tests/test_nowhere.py"):
        check(tmp_path, run=missing, workspace=True, timeout=120)(ctx(tree))


def test_a_collection_error_the_change_caused_is_the_agent_s_fail(
    trees: Judging, tmp_path: Path
) -> None:
    run = check(tmp_path, run=PYTEST, workspace=True, timeout=120)
    tree = worked(trees, "add", {"calc.py": "def add(a, b)\n    return a + b\n"})  # no colon
    found = facts(run(ctx(tree)))
    assert found and "exit code 2" in found[-1].actual
    assert found[0].where == "test tests/test_calc.py" and found[0].actual.startswith("error")


def test_a_collection_error_the_base_has_too_is_the_environment_s_a_judge_error(
    tmp_path: Path,
) -> None:
    """A test module needs a module the environment lacks: it fails to collect at the base too,
    so no change can be blamed for it."""
    broken = {**PROJECT, "tests/test_more.py": "import a_plugin_nobody_installed\n"}
    repo = make_repo(tmp_path / "project", broken)
    judging = Judging(repo, tmp_path / "trees")
    try:
        tree = worked(judging, "add", {"calc.py": "def add(a, b):\n    return a + b\n"})
        run = check(tmp_path, run=PYTEST, workspace=True, timeout=120)
        with pytest.raises(JudgeError, match=r"exits 2 at the base revision .* too") as caught:
            run(ctx(tree))
    finally:
        judging.close()
    assert "a_plugin_nobody_installed" in str(caught.value)
    judge = os.path.join(tree.root, ".reins", "judge")
    # Two judge's trees: the change's, held while it was judged, and one of the base alone.
    assert {"0", "1"} <= set(os.listdir(judge)) and "2" not in os.listdir(judge)


def test_in_workspace_mode_a_turn_without_a_workspace_is_a_judge_error(tmp_path: Path) -> None:
    with pytest.raises(JudgeError, match="only `reins loop` with a coding agent"):
        check(tmp_path, run=PYTEST, workspace=True)(ctx(None))


def test_a_file_placeholder_has_no_meaning_in_a_workspace(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no meaning with workspace = true"):
        check(tmp_path, run=["cat", "{file}"], workspace=True)


def test_the_key_and_the_judge_s_python_are_placeholders(trees: Judging, tmp_path: Path) -> None:
    tree = worked(trees, "zero", {})
    one_test = ["{python}", "-m", "pytest", "-q", "tests/test_calc.py::test_{key}"]
    assert check(tmp_path, run=one_test, workspace=True, timeout=120)(ctx(tree, "zero")) is None
    assert PYTHON  # the judge's own interpreter runs it: no pytest needed on PATH
