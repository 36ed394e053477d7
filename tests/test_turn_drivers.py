"""turn.md's driver table: parsed at import, checked, and the drivers record by it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import reins
from reins.errors import TurnTableError
from reins.turn import DRIVERS
from reins.turn.drivers import Generates, PromptUse, parse_drivers
from reins.turn.table import DOCUMENT

GOOD = DOCUMENT.read_text(encoding="utf-8")
LOOP_ROW = "| loop   | loop         | backend   | sent    | yes    | loop         |"


def test_the_document_names_each_driver_and_who_generates() -> None:
    rows = {d.name: d for d in DRIVERS}
    assert set(rows) == {"manual", "loop", "replay"}
    assert rows["manual"].commands == ("next", "submit")
    assert [rows[n].generates for n in ("manual", "loop", "replay")] == [
        Generates.PERSON,
        Generates.BACKEND,
        Generates.FILE,
    ]
    assert rows["loop"].prompt is PromptUse.SENT and rows["replay"].prompt is PromptUse.DIGEST
    assert rows["loop"].leases and not rows["replay"].leases


def test_manual_and_unattended_drivers_differ_in_who_generates_only_as_documented() -> None:
    notes = DRIVERS["loop"].notes(seed=5, escalated_by=None)
    assert (notes.via, notes.seed, notes.escalated_by) == ("loop", 5, None)


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        (GOOD.replace("<!-- driver-table: begin -->", ""), "no driver table"),
        (GOOD.replace(LOOP_ROW + "\n", ""), "no row for driver 'loop'"),
        (
            GOOD.replace(LOOP_ROW, LOOP_ROW.replace("| sent ", "| digest")),
            "prompt sent, not digest",
        ),
        (GOOD.replace(LOOP_ROW, LOOP_ROW.replace("| yes ", "| no  ")), "must lease"),
        (GOOD.replace(LOOP_ROW, LOOP_ROW.replace("backend", "robot  ")), "'robot'"),
        (GOOD.replace(LOOP_ROW, LOOP_ROW[:-16] + "| Loop Bot     |"), "'Loop Bot' is not a"),
        (GOOD.replace("| replay       |\n", "| replay       | x |\n"), "7 cells, expected 6"),
        (GOOD.replace("| loop   | loop ", "| loop   | next "), "command 'next' enters more"),
        (
            GOOD.replace(LOOP_ROW, LOOP_ROW + "\n" + LOOP_ROW.replace("| loop   |", "| agent  |")),
            "'agent' is not one reins runs",
        ),
        (GOOD.replace("| default name |", "| name         |"), "header"),
    ],
)
def test_a_malformed_driver_table_fails_loudly(broken: str, message: str) -> None:
    assert broken != GOOD
    with pytest.raises(TurnTableError, match=message):
        parse_drivers(broken)


@pytest.mark.slow  # a fresh interpreter
def test_a_malformed_driver_table_fails_at_import(tmp_path: Path) -> None:
    copy = tmp_path / "reins"
    shutil.copytree(Path(reins.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    doc = copy / "turn" / "turn.md"
    doc.write_text(doc.read_text().replace(LOOP_ROW, LOOP_ROW.replace("| yes ", "| no  ")))
    run = subprocess.run(
        [sys.executable, "-c", "from reins.turn import DRIVERS"],  # the table's first use
        env={"PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode != 0
    assert "TurnTableError" in run.stderr and "must lease" in run.stderr
