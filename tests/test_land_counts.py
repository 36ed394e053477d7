"""The items ``reins land`` adds (``land/<key>``) are counted apart from the quest's own in
``status`` and ``report`` (issue 39): three items that all passed are three PASSes and nothing
to do, whatever land items their landing needed. Real git, real loops, the ``cmd:`` stand-in of
tests/kit/landkit.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reins.errors import Exit
from tests.kit.codingkit import cli
from tests.kit.landkit import land_quest, stand_in, worked


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in ("REINS_QUEST", "REINS_LEDGER", "REINS_MODEL", "REINS_CRASH_AT"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def test_status_and_report_count_the_land_items_apart(here: Path) -> None:
    items: list[dict[str, object]] = [{"id": "a", "shared": True}, {"id": "b", "shared": True},
                                      {"id": "c"}]  # fmt: skip
    land_quest(here / "q", items)
    assert cli("-q", "q", "scan").exit_code == 0
    worked("q", stand_in(here))
    out = cli("-q", "q", "land", "integration", "--order", "key")
    assert out.exit_code == Exit.NOT_LANDED and "added item land/b" in out.stdout, out.output
    status = json.loads(cli("-q", "q", "status", "--json").stdout)
    assert (status["counts"]["PASS"], status["counts"]["TODO"]) == (3, 0)
    assert (status["total"], status["remaining"]) == (3, 0)
    assert status["land_items"]["TODO"] == 1 and sum(status["land_items"].values()) == 1
    text = cli("-q", "q", "status").stdout
    assert "  TODO            0" in text and "remaining 0" in text
    assert "  land            1   (`reins land`'s items, apart: 1 TODO)" in text
    report = json.loads(cli("-q", "q", "report", "--json").stdout)
    assert (report["total"], report["remaining"], report["counts"]["TODO"]) == (3, 0, 0)
    assert report["land_items"]["TODO"] == 1
    # Once the land item passes, its PASS is not one of the quest's passes either.
    worked("q", stand_in(here))
    report = json.loads(cli("-q", "q", "report", "--json").stdout)
    assert report["counts"]["PASS"] == 3 and sum(report["passes_by_try"].values()) == 3
    assert report["land_items"]["PASS"] == 1
    lines = cli("-q", "q", "report").stdout.splitlines()
    assert lines[1].startswith("total 3  remaining 0  (100.0% locked)")
    assert "land items 1, apart (`reins land` added them): PASS 1" in lines
    assert cli("-q", "q", "status").stdout.count("  PASS            3") == 1
