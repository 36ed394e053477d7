"""The ``pytest`` check: what must pass is read from pytest's own report in a judge's tree, so a
test that did not run is named as such, and nothing a run prints or exits with passes it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from reins.checks import BASE, spec_of, validate
from reins.errors import JudgeError
from reins.gate.rule import Context
from reins.values import Fact, JudgeTree
from tests.kit.codingkit import Judging, make_repo

CALC = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n"
TESTS = """import pytest
from calc import add, sub


def test_add():
    assert add(2, 2) == 4


def test_sub():
    assert sub(5, 3) == 2


@pytest.mark.parametrize("n", [1, 2])
def test_add_zero(n):
    assert add(0, n) == n


@pytest.mark.skip(reason="not today")
def test_skipped():
    pass


@pytest.mark.xfail(reason="known")
def test_expected_to_fail():
    assert add(1, 1) == 3
"""
FIXED = CALC.replace("return a - b\n\n\ndef sub", "return a + b\n\n\ndef sub")


@pytest.fixture
def judging(tmp_path: Path) -> Iterator[Judging]:
    repo = make_repo(tmp_path / "project", {"calc.py": CALC, "tests/test_calc.py": TESTS})
    judging = Judging(repo, tmp_path / "root", judge=["tests/**"])
    yield judging
    judging.close()


def rule(tmp_path: Path, **params: Any) -> Any:
    spec = spec_of("pytest")
    return spec.build(validate(spec, {**params, BASE: str(tmp_path)}))


def facts(found: Fact | Iterable[Fact] | None) -> list[Fact]:
    return [] if found is None else [found] if isinstance(found, Fact) else list(found)


def ctx(tree: JudgeTree, key: str = "add") -> Context:
    return Context(key=key, submission="", workspace=tree)


def said(found: list[Fact]) -> dict[str, str]:
    return {f.where: f.actual for f in found}


def test_a_named_test_must_have_run_and_passed_and_each_way_it_did_not_is_said(
    judging: Judging, tmp_path: Path
) -> None:
    tree = judging.tree("add", {})
    names = [
        "tests/test_calc.py::test_{key}",  # {key} is the item's
        "tests/test_calc.py::test_add_zero",  # every parametrisation of it
        "tests/test_calc.py::test_skipped",
        "tests/test_calc.py::test_expected_to_fail",
        "tests/test_calc.py::test_nowhere",
        "tests/test_calc.py::test_sub",
    ]
    found = said(facts(rule(tmp_path, tests=names)(ctx(tree))))
    assert found["test tests/test_calc.py::test_add"].startswith("failed: assert 0 == 4")
    assert found["test tests/test_calc.py::test_add_zero[1]"].startswith("failed:")
    assert found["test tests/test_calc.py::test_skipped"] == "skipped: not today"
    assert found["test tests/test_calc.py::test_expected_to_fail"].startswith("xfailed")
    assert found["test tests/test_calc.py::test_nowhere"] == "not run: no such test was collected"
    assert "test tests/test_calc.py::test_sub" not in found  # it passed
    fixed = judging.tree("add", {"calc.py": FIXED})
    assert rule(tmp_path, tests=names[:2])(ctx(fixed)) is None


def test_a_deselected_test_and_one_whose_file_does_not_collect_are_named_so(
    judging: Judging, tmp_path: Path
) -> None:
    tree = judging.tree("add", {"calc.py": FIXED})
    deselected = rule(tmp_path, tests=["tests/test_calc.py::test_add"], args=["-k", "not add"])
    [fact] = facts(deselected(ctx(tree)))
    assert fact.actual == "deselected: it was deselected (-k, -m or --deselect)"
    broken = judging.tree("add", {"calc.py": "def add(a, b)\n    return a + b\n"})
    [fact] = facts(rule(tmp_path, tests=["tests/test_calc.py::test_add"])(ctx(broken)))
    assert fact.actual.startswith("not run: collecting tests/test_calc.py failed:")
    assert "SyntaxError" in fact.actual or "invalid syntax" in fact.actual


def test_exit_zero_without_a_report_fails_and_printed_passes_count_for_nothing(
    judging: Judging, tmp_path: Path
) -> None:
    exits = FIXED.replace("def add", "import os\nos._exit(0)\n\n\ndef add", 1)
    tree = judging.tree("add", {"calc.py": exits})
    [fact] = facts(rule(tmp_path, tests=["tests/test_calc.py::test_add"])(ctx(tree)))
    assert fact.where == "pytest" and fact.expected == "pytest's report of the tests it ran"
    assert fact.actual.startswith("no report: pytest ended with exit code 0")
    prints = CALC.replace("def add", "print('tests/test_calc.py::test_add PASSED')\n\n\ndef add")
    tree = judging.tree("add", {"calc.py": prints})
    [fact] = facts(rule(tmp_path, tests=["tests/test_calc.py::test_add"])(ctx(tree)))
    assert fact.actual.startswith("failed:")


def test_passing_at_base_names_each_test_the_change_broke_and_no_other(
    judging: Judging, tmp_path: Path
) -> None:
    keep = rule(tmp_path, passing_at_base=True)
    assert keep(ctx(judging.tree("add", {"calc.py": FIXED}))) is None  # add fails at the base
    broke_sub = FIXED.replace("return a - b\n", "return b - a\n")
    found = said(facts(keep(ctx(judging.tree("sub", {"calc.py": broke_sub})))))
    assert list(found) == ["test tests/test_calc.py::test_sub"]


def test_with_no_test_named_every_test_that_runs_must_pass_and_one_must_run(
    judging: Judging, tmp_path: Path
) -> None:
    everything = rule(tmp_path)
    found = said(facts(everything(ctx(judging.tree("add", {})))))
    assert "test tests/test_calc.py::test_add" in found
    assert "test tests/test_calc.py::test_skipped" not in found  # skips and xfails are fine
    assert everything(ctx(judging.tree("add", {"calc.py": FIXED}))) is None
    none_ran = rule(tmp_path, args=["-k", "nothing_is_called_this"])
    [fact] = facts(none_ran(ctx(judging.tree("add", {"calc.py": FIXED}))))
    assert fact.expected == "at least one test runs and passes"


def test_rules_with_the_same_arguments_read_one_run(judging: Judging, tmp_path: Path) -> None:
    # The judged code may write only its tree: it counts its imports there.
    counted = FIXED + "\nopen(__file__ + '.runs', 'a').write('run\\n')\n"
    tree = judging.tree("add", {"calc.py": counted})
    task = rule(tmp_path, tests=["tests/test_calc.py::test_add"])
    suite = rule(tmp_path, passing_at_base=True)
    assert task(ctx(tree)) is None and suite(ctx(tree)) is None
    # One run for the two rules of this judgment (the base's own run imports the base's calc).
    assert (Path(tree.path) / "calc.py.runs").read_text() == "run\n"


def test_pytest_s_usage_error_and_a_module_the_environment_lacks_are_the_judge_s(
    tmp_path: Path,
) -> None:
    repo = make_repo(
        tmp_path / "p",
        {
            "calc.py": FIXED,
            "tests/test_calc.py": TESTS,
            "tests/test_more.py": "import a_module_nobody_installed\n\n\ndef test_x():\n    pass\n",
        },
    )
    judging = Judging(repo, tmp_path / "root")
    try:
        tree = judging.tree("add", {})
        with pytest.raises(JudgeError, match=r"could not run \(exit code 4\)"):
            rule(tmp_path, args=["--no-such-option"])(ctx(tree))
        with pytest.raises(JudgeError, match="a_module_nobody_installed"):
            rule(tmp_path, tests=["tests/test_more.py::test_x"])(ctx(tree))
        # A test of another file is judged as usual: the missing module is not its concern.
        assert rule(tmp_path, tests=["tests/test_calc.py::test_add"])(ctx(tree)) is None
    finally:
        judging.close()


def test_a_module_the_change_imports_but_nobody_installed_is_the_agent_s_fail(
    judging: Judging, tmp_path: Path
) -> None:
    imports = "import a_module_nobody_installed\n" + FIXED
    tree = judging.tree("add", {"calc.py": imports})
    [fact] = facts(rule(tmp_path, tests=["tests/test_calc.py::test_add"])(ctx(tree)))
    assert fact.actual.startswith("not run: collecting tests/test_calc.py failed:")


def test_a_fake_pytest_or_pluggy_in_the_tree_cannot_stand_in_for_the_real_ones(
    judging: Judging, tmp_path: Path
) -> None:
    fake = "def main(*args, **kwargs):\n    return 0\n"
    tree = judging.tree(
        "add",
        {"pytest/__init__.py": fake, "pluggy/__init__.py": "raise SystemExit(0)\n",
         "sitecustomize.py": "import os\nos._exit(0)\n"},
    )  # fmt: skip
    [fact] = facts(rule(tmp_path, tests=["tests/test_calc.py::test_add"])(ctx(tree)))
    assert fact.actual.startswith("failed: assert 0 == 4")  # the real pytest ran the real test


def test_without_a_judge_s_tree_the_rule_is_a_judge_error(tmp_path: Path) -> None:
    with pytest.raises(JudgeError, match="only `reins loop` with a coding agent"):
        rule(tmp_path, tests=["t.py::t"])(Context(key="k", submission=""))


SKIPS = """import pytest
from calc import add


@pytest.mark.parametrize("n", [1, 2, 3])
def test_add_to(n):
    if n == 3:
        pytest.skip("three is for later")
    assert add(n, 1) == n + 1
"""


def test_a_function_s_case_the_project_always_skips_is_not_the_item_s_but_a_new_skip_is(
    tmp_path: Path,
) -> None:
    """A name without ``[…]`` selects every case; one the base skips too (its reason the same)
    is no fact, so the item can pass; a case the change makes skip is one, and a name whose
    cases all skip as at the base passed nothing."""
    repo = make_repo(tmp_path / "project", {"calc.py": CALC, "tests/test_calc.py": SKIPS})
    judging = Judging(repo, tmp_path / "root", judge=["tests/**"])
    try:
        named = rule(tmp_path, tests=["tests/test_calc.py::test_add_to"])
        assert named(ctx(judging.tree("add", {"calc.py": FIXED}))) is None
        skipping = FIXED.replace(
            "return a + b",
            "import pytest\n    if a == 2:\n        pytest.skip('not me')\n    return a + b",
        )
        found = said(facts(named(ctx(judging.tree("add", {"calc.py": skipping})))))
        assert found == {"test tests/test_calc.py::test_add_to[2]": "skipped: not me"}
        only_skip = rule(tmp_path, tests=["tests/test_calc.py::test_add_to[3]"])
        [fact] = facts(only_skip(ctx(judging.tree("add", {"calc.py": FIXED}))))
        assert fact.actual == "skipped: three is for later"  # one case named: it must pass
    finally:
        judging.close()
