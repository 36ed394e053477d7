"""turn.md is the record table the code executes: total, unambiguous, and obeyed."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import reins
from reins import Quest, SQLiteStore, State
from reins.errors import TurnTableError
from reins.gate import Fact, Outcome, Verdict
from reins.store import AttemptKind
from reins.turn import TABLE, GenerationFailure, Origin, record
from reins.turn.failures import JudgeFailure, Result
from reins.turn.table import DOCUMENT, domain, parse

GOOD = DOCUMENT.read_text(encoding="utf-8")


def test_the_table_covers_every_attempt_exactly_once() -> None:
    for cell in domain():
        assert sum(row.matches(*cell) for row in TABLE.rows) == 1, cell


def test_exactly_one_row_yields_pass() -> None:
    assert [r.outcome for r in TABLE.rows if r.state is State.PASS] == ["PASS"]


def test_generation_errors_neither_consume_a_try_nor_lock() -> None:
    rows = [r for r in TABLE.rows if r.kind is AttemptKind.GENERATION_ERROR]
    assert rows and all(r.tries_delta == 0 and not r.locks for r in rows)


def test_judge_errors_neither_consume_a_try_nor_lock() -> None:
    rows = [r for r in TABLE.rows if r.kind is AttemptKind.JUDGE_ERROR]
    assert rows and all(r.tries_delta == 0 and not r.locks for r in rows)
    assert all(r.state is State.TODO and r.outcome == "-" for r in rows)


JUDGE_ERROR_ROW = (
    "| judge_error      | -       | any         | TODO      | +0           | no    |\n"
)


def judge_error_rows(*rows: str) -> str:
    """The document with its judge_error row replaced by ``rows``."""
    assert JUDGE_ERROR_ROW in GOOD
    return GOOD.replace(JUDGE_ERROR_ROW, "".join(f"{r}\n" for r in rows))


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        (
            judge_error_rows("| judge_error | - | any | TODO | +1 | no |"),
            "a judge_error uses no try and locks nothing",
        ),
        (
            judge_error_rows("| judge_error | - | any | DONE | +0 | yes |"),
            "a judge_error uses no try and locks nothing",
        ),
        (
            judge_error_rows(
                "| judge_error | - | below max | TODO | +0 | no |",
                "| judge_error | - | reaches max | DONE | +1 | yes |",
            ),
            "a judge_error uses no try and locks nothing",
        ),
        (
            judge_error_rows("| judge_error | - | any | PASS | +0 | yes |"),
            "a judge_error uses no try and locks nothing",
        ),
        (
            judge_error_rows("| judge_error | FAIL | any | TODO | +1 | no |"),
            "outcome 'FAIL' is not one of",
        ),
        (judge_error_rows(), "no row for judge_error × - × below max"),
        (
            GOOD.replace(
                "| generation_error | -       | any         | TODO      | +0           | no    |",
                "| generation_error | -       | any         | TODO      | +1           | no    |",
            ),
            "a generation_error uses no try and locks nothing",
        ),
    ],
    ids=["try", "locks", "locks-at-max", "passes", "outcome", "missing", "generation-try"],
)
def test_a_table_that_charges_or_locks_on_an_error_is_refused(broken: str, message: str) -> None:
    assert broken != GOOD
    with pytest.raises(TurnTableError, match=message):
        parse(broken)


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        (
            GOOD.replace(
                "| judged           | PASS    | any         | PASS ",
                "| judged | PASS | any | DONE ",
            ),
            "exactly one row, judged × PASS",
        ),
        (
            GOOD.replace(
                "| judged           | FAIL    | reaches max | DONE      | +1           | yes   |\n",
                "",
            ),
            "no row for judged × FAIL × reaches max",
        ),
        (
            GOOD.replace("| judged           | REVIEW  | any ", "| judged | PASS | any "),
            "2 rows for judged × PASS|no row for judged × REVIEW",
        ),
        (GOOD.replace("<!-- record-table: begin -->", ""), "no record table"),
        (GOOD.replace("| tries change |", "| change |"), "header"),
        (GOOD.replace("| +1           | no    |", "| +2           | no    |"), "tries change"),
        (
            GOOD.replace(
                "| SKIPPED | any         | SKIPPED   | +0           | yes   |",
                "| SKIPPED | any         | SKIPPED   | +0           | maybe |",
            ),
            "row",
        ),
        (
            GOOD.replace("| judged           | BLOCKED |", "| judged           | LOST    |"),
            "outcome 'LOST'|no row",
        ),
    ],
)
def test_a_malformed_table_fails_loudly(broken: str, message: str) -> None:
    assert broken != GOOD
    with pytest.raises(TurnTableError, match=message):
        parse(broken)


@pytest.mark.slow  # a fresh interpreter
def test_a_malformed_document_fails_at_import(tmp_path: Path) -> None:
    package = Path(reins.__file__).parent
    copy = tmp_path / "reins"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    doc = copy / "turn" / "turn.md"
    doc.write_text(doc.read_text().replace("| reaches max | DONE ", "| reaches max | TODO "))
    run = subprocess.run(
        [sys.executable, "-c", "from reins.turn import TABLE"],  # the table's first use
        env={"PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode != 0
    assert "TurnTableError" in run.stderr and "locks=yes contradicts state TODO" in run.stderr


def verdict(outcome: Outcome) -> Verdict:
    if outcome is Outcome.PASS:
        return Verdict(Outcome.PASS)
    return Verdict(outcome, (Fact(rule="r", where="w", expected="e", actual="a"),), "r")


@pytest.mark.parametrize("row", TABLE.rows, ids=lambda r: f"{r.kind}-{r.outcome}-{r.tries}")
def test_recording_obeys_every_row_of_the_document(row, ledger: SQLiteStore, quest: Quest) -> None:  # type: ignore[no-untyped-def]
    # Bring item "a" to the tries the row speaks of (any → both classes are tried elsewhere).
    tries_before = quest.max_tries - 1 if row.tries == "reaches max" else 0
    for _ in range(tries_before):
        record(ledger, quest, ledger.get("a"), verdict(Outcome.FAIL), Origin(), driver="t")
    before = ledger.get("a")
    assert before.tries == tries_before and before.state is State.TODO
    result: Result
    if row.kind is AttemptKind.GENERATION_ERROR:
        result = GenerationFailure("timeout")
    elif row.kind is AttemptKind.JUDGE_ERROR:
        result = JudgeFailure("not-bad", "RuntimeError: boom")
    else:
        result = verdict(Outcome(row.outcome))
    rec = record(ledger, quest, before, result, Origin(), driver="t", submission="x")
    assert rec.item.state is row.state
    assert rec.item.tries == tries_before + row.tries_delta
    assert rec.item.state.terminal is row.locks
    assert rec.attempt.turn == tries_before + 1
    assert rec.attempt.kind is row.kind
    if row.kind is AttemptKind.JUDGE_ERROR:
        assert rec.attempt.outcome is None and rec.verdict is None
        assert rec.attempt.error == "not-bad: RuntimeError: boom"
