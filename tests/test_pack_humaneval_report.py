"""``reins -q humaneval report``: pass@1 and the pass rates after answers 2 and 3.

A scripted generator answers each problem through the real loop (wrong, then right, on the
answer the script says), the gate judges every answer by running the problem's tests, and
``report`` gives the figures; they are checked against a count made from the ledger's log, and
the log against the script. An official samples file (``{"task_id", "completion"}``) replays
as it is, and its pass@1 is the package's own harness's on the same file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reins import SQLiteStore
from reins.store.model import AttemptKind
from reins.testing import FakeBackend
from tests.kit import Cli
from tests.kit.humaneval import need_the_extra, reference
from tests.kit.loopkit import loop

need_the_extra()

from reins.packs import load_pack  # noqa: E402 - after the extra is known present
from reins.packs.humaneval.problems import problem  # noqa: E402

WRONG = "    pass\n"
# task → its answers in order: WRONG until the canonical solution (or never right)
SCRIPT = {
    "HumanEval/0": ["right"],
    "HumanEval/1": [WRONG, "right"],
    "HumanEval/2": [WRONG, WRONG, "right"],
    "HumanEval/3": [WRONG, WRONG, WRONG],
    "HumanEval/4": ["fenced"],
    "HumanEval/5": [WRONG, "fenced"],
}


def _answers(task: str) -> list[str]:
    given = problem(task)
    fenced = f"```python\n{given.prompt}{given.canonical_solution}```"
    named = {"right": given.canonical_solution, "fenced": fenced}
    return [named.get(a, a) for a in SCRIPT[task]]


@pytest.fixture
def looped(tmp_path: Path) -> tuple[Cli, FakeBackend]:
    cli = Cli(tmp_path, quest="humaneval")
    assert cli("scan", *SCRIPT).exit_code == 0
    fake = FakeBackend({task: _answers(task) for task in SCRIPT})
    summary = loop(tmp_path / "humaneval.reins.db", fake, load_pack("humaneval"), concurrency=2)
    assert summary.generation_errors == 0
    return cli, fake


def _passed_on(path: Path) -> dict[str, int | None]:
    """Each item's answer that passed (None: none did), counted from its log."""
    found: dict[str, int | None] = {}
    with SQLiteStore.open(path) as led:
        for task in SCRIPT:
            judged = [a for a in led.snapshot(task)[1] if a.kind is AttemptKind.JUDGED]
            outcomes = [a.outcome for a in judged]
            found[task] = outcomes.index("PASS") + 1 if "PASS" in outcomes else None
    return found


def _figures(cli: Cli) -> dict[str, dict[str, object]]:
    out = cli("report", "--json")
    assert out.exit_code == 0, out.output
    figures: dict[str, dict[str, object]] = json.loads(out.stdout)["quest_figures"]
    return figures


def test_report_gives_pass_at_1_and_the_pass_rates_after_answers_2_and_3(
    looped: tuple[Cli, FakeBackend],
) -> None:
    cli, _ = looped
    passed_on = _passed_on(cli.folder / "humaneval.reins.db")
    scripted = {
        t: next((i + 1 for i, a in enumerate(SCRIPT[t]) if a != WRONG), None) for t in SCRIPT
    }
    assert passed_on == scripted
    figures = _figures(cli)
    for k, name in ((1, "pass_at_1"), (2, "pass_after_2"), (3, "pass_after_3")):
        by_k = sum(1 for n in passed_on.values() if n is not None and n <= k)
        assert figures[name]["value"] == by_k / len(SCRIPT), name
        assert figures[name]["note"] == f"{by_k} of {len(SCRIPT)} problems"
    assert figures["problems_counted"]["value"] == len(SCRIPT)
    text = cli("report").stdout
    assert "humaneval figures" in text and "pass@1: passed on answer 1" in text


def test_the_retries_follow_the_pack_s_schedule_with_the_failed_call_and_its_coaching(
    looped: tuple[Cli, FakeBackend],
) -> None:
    """The pack's policy is fresh,facts (the best bench_convergence measured): answer 2 is a
    new sample, answer 3 carries the facts, both at the backend's own temperature."""
    _, fake = looped
    quest = load_pack("humaneval")
    assert quest.retry == "fresh,facts"
    first, second, third = fake.calls_for("HumanEval/2")
    assert second.prompt.user == first.prompt.user and second.prompt.temperature is None
    user = third.prompt.user
    assert third.prompt.temperature is None and user != first.prompt.user
    test = problem("HumanEval/2").test
    failed = next(line.strip() for line in test.splitlines() if line.strip().startswith("assert"))
    # what the call returned, never the tests' code: a model shown an assert pastes it
    assert "returned None" in user and failed not in user and "assert " not in user
    assert str(quest.coaching["tests"]) in user


def test_a_run_in_progress_counts_only_the_answers_given(tmp_path: Path) -> None:
    """After one answer each, with retries still to come, pass_after_2 counts none of the
    items still waiting for their second answer as failed."""
    cli = Cli(tmp_path, quest="humaneval")
    assert cli("scan", "0", "1").exit_code == 0
    given = problem("HumanEval/0").canonical_solution
    assert cli("submit", "-k", "HumanEval/0", input=given).exit_code == 0
    assert cli("submit", "-k", "HumanEval/1", input=WRONG).exit_code == 4
    figures = _figures(cli)
    assert figures["pass_at_1"]["value"] == 0.5
    assert figures["pass_after_2"]["value"] == 1.0
    assert figures["pass_after_2"]["note"] == "1 of 1 problems; 1 waiting for answer 2"


def test_an_official_samples_file_replays_to_the_official_pass_at_1(tmp_path: Path) -> None:
    """A file in the form the package's evaluate_functional_correctness reads: one completion
    per task, some right, some empty, some off by one."""
    samples = []
    for n in range(12):
        task = f"HumanEval/{n}"
        right = problem(task).canonical_solution
        completion = [right, WRONG, right.replace("return ", "return 1 + ", 1)][n % 3]
        samples.append({"task_id": task, "completion": completion})
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in samples), encoding="utf-8")
    cli = Cli(tmp_path, quest="humaneval")
    assert cli("scan", *(s["task_id"] for s in samples)).exit_code == 0
    replay = ["replay", "--from", str(path), "--key-field", "task_id"]
    out = cli(*replay, "--output-field", "completion", "--max-tries", "1")
    assert out.exit_code == 0, out.output
    official = reference([(s["task_id"], s["completion"]) for s in samples])
    expected = sum(passed for passed, _ in official.values()) / len(samples)
    assert 0 < expected < 1
    assert _figures(cli)["pass_at_1"]["value"] == expected
