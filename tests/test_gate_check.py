"""``reins gate check``: a rule whose verdict depends on the process is found and named."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reins.turn.determinism import check
from tests.kit import ROOT

pytestmark = pytest.mark.slow  # every check judges again in fresh processes

QUEST = """
from reins import Context, Fact, Level, Quest, Seed, rule


@rule("set-order", Level.FAIL, "names the words in a set's order: the hash seed decides")
def set_order(ctx: Context) -> Fact | None:
    words = ",".join({"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"})
    return Fact(where="answer", expected="a stable order", actual=words)


@rule("steady", Level.REVIEW, "the answer is not 'meh'")
def steady(ctx: Context) -> Fact | None:
    return Fact(where="answer", expected="good", actual="meh") if "meh" in ctx.submission else None


quest = Quest(
    name="wobbly",
    seed=lambda args: [Seed("a", {}), Seed("b", {})],
    render=lambda item: "say something",
    prepare=lambda item, raw: Context(key=item.key, submission=raw),
    rules=[set_order, steady],
)
"""

STEADY = QUEST.replace("rules=[set_order, steady]", "rules=[steady]")


@pytest.fixture
def quest_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "wobbly.py").write_text(QUEST)
    (tmp_path / "steady_quest.py").write_text(STEADY)
    # The workers are fresh processes: they find the quest module through PYTHONPATH.
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}{os.pathsep}{ROOT}")
    return tmp_path


def test_a_rule_that_depends_on_the_hash_seed_is_named(quest_module: Path) -> None:
    found = check("wobbly:quest", [("a", {}, "meh"), ("b", {}, "fine")], seeds=(1, 2, 3, 4))
    assert [d.key for d in found] == ["a", "b"]
    assert all(d.rules == ("set-order",) for d in found)  # "steady" judged alike every time


def test_a_deterministic_gate_has_no_differences(quest_module: Path) -> None:
    assert check("steady_quest:quest", [("a", {}, "meh"), ("b", {}, "fine")]) == []


def test_the_cli_checks_the_ledger_s_submissions_and_exits_9(
    quest_module: Path,
) -> None:
    def reins(*args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "reins.cli", "--quest", "wobbly:quest", *args]
        return subprocess.run(argv, input=input, capture_output=True, text=True, check=False)

    assert reins("scan").returncode == 0
    assert reins("submit", "--key", "a", input="meh").returncode == 4
    out = reins("gate", "check", "--json")
    assert out.returncode == 9, out.stderr
    report = json.loads(out.stdout)
    assert report == {"judged": 1, "differences": [{"key": "a", "rules": ["set-order"]}]}
