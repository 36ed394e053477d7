"""A quest's own figures in ``report``: ``Quest.figures`` and ``[report] figures`` in quest.toml.

The figure function reads the ledger through a read-only view (each item, its payload, its
latest judged answer) and returns typed figures; ``report`` prints them after its own lines,
``--json`` puts them under ``quest_figures``, ``--html`` shows them. A declaration that cannot
work is refused when the document loads, at its file:line:column.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from reins import load_quest
from reins.errors import ConfigError, DocumentError
from reins.figures import Figure, LedgerView
from tests.kit import TINY, Cli
from tests.kit.declare_checks import (
    CAPITALS_GATE,
    CAPITALS_ITEMS,
    CAPITALS_TOML,
    register,
    write_quest,
)
from tests.kit.quests import LENIENT


def answered(view: LedgerView) -> list[Figure]:
    """The share of judged items whose latest judged answer passed, and the facts it left."""
    judged = [i for i in view.items() if i.answer is not None]
    passed = sum(1 for i in judged if i.answer is not None and i.answer.outcome == "PASS")
    facts = sum(len(i.answer.facts) for i in judged if i.answer is not None)
    return [
        Figure(
            "pass_share", passed / len(judged), "percent", "passed", f"{passed} of {len(judged)}"
        ),
        Figure("judged", len(judged), "count", "items judged"),
        Figure("facts_left", facts, "count"),
    ]


COUNTED = dataclasses.replace(TINY, figures=answered)
LENIENT_COUNTED = dataclasses.replace(LENIENT, figures=answered)
TWICE = dataclasses.replace(TINY, figures=lambda view: [Figure("x", 1), Figure("x", 2)])


def _dicts(view: LedgerView) -> list[object]:
    return [{"name": "x", "value": 1}]


NOT_FIGURES = dataclasses.replace(TINY, figures=_dicts)  # type: ignore[arg-type]


def _raises(view: LedgerView) -> list[Figure]:
    raise RuntimeError("the tally blew up")


RAISES = dataclasses.replace(TINY, figures=_raises)


def _worked(cli: Cli) -> None:
    """a passes on its first answer; b fails, then passes; c is never answered."""
    assert cli("scan").exit_code == 0
    assert cli("submit", "-k", "a", input="good").exit_code == 0
    assert cli("submit", "-k", "b", input="bad").exit_code == 4
    assert cli("submit", "-k", "b", input="good").exit_code == 0


def test_report_prints_a_python_quest_s_figures_after_its_own_lines(cli: Cli) -> None:
    cli.quest = "tests.test_quest_figures:COUNTED"
    _worked(cli)
    out = cli("report")
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    head = lines.index("tiny figures")
    assert lines[0].startswith("TODO 1  PASS 2") and head > 3  # report's own lines first
    # b's latest judged answer is its PASS: the FAIL before it is not what counts
    assert lines[head + 1 :] == [
        "  pass_share  100.0000%  passed (2 of 2)",
        "  judged              2  items judged",
        "  facts_left          0",
    ]


def test_report_json_adds_the_figures_under_one_key(cli: Cli) -> None:
    cli.quest = "tests.test_quest_figures:COUNTED"
    _worked(cli)
    report = json.loads(cli("report", "--json").stdout)
    assert list(report)[-1] == "quest_figures"
    assert report["quest_figures"] == {
        "pass_share": {
            "value": 1.0,
            "shown": "percent",
            "text": "100.0000%",
            "label": "passed",
            "note": "2 of 2",
        },
        "judged": {"value": 2, "shown": "count", "text": "2", "label": "items judged", "note": ""},
        "facts_left": {"value": 0, "shown": "count", "text": "0", "label": "", "note": ""},
    }


def test_the_html_report_shows_the_figures(cli: Cli) -> None:
    pytest.importorskip("jinja2")
    cli.quest = "tests.test_quest_figures:COUNTED"
    _worked(cli)
    assert cli("report", "--html", "r.html").exit_code == 0
    page = (cli.folder / "r.html").read_text(encoding="utf-8")
    assert "<h2>tiny figures</h2>" in page
    assert '<td><code>pass_share</code></td><td class="n">100.0000%</td>' in page


def _figures(cli: Cli, quest: str = "COUNTED") -> dict[str, str]:
    found = json.loads(cli("report", "--json", quest=f"tests.test_quest_figures:{quest}").stdout)
    return {name: f["text"] for name, f in found["quest_figures"].items()}


def test_a_re_judge_replaces_the_verdict_a_person_s_decision_does_not(cli: Cli) -> None:
    """The answer that counts is the gate's latest word on it: a re-judge under a changed gate
    is, a reviewer's accept is not."""
    assert cli("scan").exit_code == 0
    for key in ("a", "b"):
        assert cli("submit", "-k", key, input="meh").exit_code == 11  # REVIEW, one fact
    assert cli("resolve", "b", "--accept", "--note", "fine", "--by", "bo").exit_code == 0
    before = {"pass_share": "0.0000%", "judged": "2", "facts_left": "2"}
    assert _figures(cli) == before
    # the lenient gate has no "meh" rule: re-judged, both answers pass with no fact
    assert (
        cli("rejudge", "--apply", quest="tests.test_quest_figures:LENIENT_COUNTED").exit_code == 0
    )
    after = {"pass_share": "100.0000%", "judged": "2", "facts_left": "0"}
    assert _figures(cli, "LENIENT_COUNTED") == after


def _numbers(view: LedgerView) -> list[Figure]:
    """Each judged item's latest answer: its number in the round, and whether it passed."""
    return [
        Figure(f"{i.key}_{i.answer.outcome.lower()}", i.answer.number, "count")
        for i in view.items()
        if i.answer is not None
    ]


NUMBERED = dataclasses.replace(TINY, figures=_numbers)
ANYTHING_NUMBERED = dataclasses.replace(TINY, rules=[], figures=_numbers)


def test_an_answer_s_number_is_its_place_in_the_round_a_re_judge_keeps_it(cli: Cli) -> None:
    """a passes on answer 1, b on answer 2, c fails its three answers; re-judged by a gate
    that passes anything, c's latest verdict is the re-judge of its answer 3 (not a 4th)."""
    cli.quest = "tests.test_quest_figures:NUMBERED"
    assert cli("scan").exit_code == 0
    for key, answers in (("a", ["good"]), ("b", ["bad", "good"]), ("c", ["bad"] * 3)):
        for answer in answers:
            assert cli("submit", "-k", key, input=answer).exit_code in (0, 4, 11)
    assert _figures(cli, "NUMBERED") == {"a_pass": "1", "b_pass": "2", "c_fail": "3"}
    rejudge = cli("rejudge", "--apply", quest="tests.test_quest_figures:ANYTHING_NUMBERED")
    assert rejudge.exit_code == 0, rejudge.output
    assert _figures(cli, "ANYTHING_NUMBERED") == {"a_pass": "1", "b_pass": "2", "c_pass": "3"}


def test_a_quest_without_figures_reports_as_before(cli: Cli) -> None:
    _worked(cli)
    out = cli("report")
    assert out.exit_code == 0
    assert not any("figures" in line for line in out.stdout.splitlines())
    assert json.loads(cli("report", "--json").stdout)["quest_figures"] == {}


@pytest.mark.parametrize(
    ("ref", "said"),
    [
        ("TWICE", "gave two figures named x"),
        ("NOT_FIGURES", "gave dict, not reins.figures.Figure"),
        ("RAISES", "raised RuntimeError: the tally blew up"),
    ],
)
def test_figures_that_cannot_be_shown_fail_report_with_the_quest_named(
    cli: Cli, ref: str, said: str
) -> None:
    cli.quest = f"tests.test_quest_figures:{ref}"
    assert cli("scan").exit_code == 0
    out = cli("report")
    assert out.exit_code == 2
    assert "quest tiny: figures " in out.stderr and said in out.stderr


def test_a_figure_is_checked_when_it_is_made_and_shown_as_it_says() -> None:
    assert Figure("f", 0.76710, "fraction").text == "0.7671"
    assert Figure("p", 0.5, "percent", digits=1).text == "50.0%"
    assert Figure("n", 12345, "count").text == "12,345"
    assert Figure("x", 3.14159).text == "3.1416"
    for bad in (
        {"name": "two words", "value": 1},
        {"name": "ok", "value": True},
        {"name": "ok", "value": float("nan")},
        {"name": "ok", "value": 1, "shown": "bar"},
        {"name": "ok", "value": 1, "digits": 13},
    ):
        with pytest.raises(ConfigError):
            Figure(**bad)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="figures must be a function"):
        dataclasses.replace(TINY, figures="module:function")  # type: ignore[arg-type]


# -- [report] in quest.toml -------------------------------------------------------------------

FIGURES_MODULE = """\
from reins.figures import Figure


def capitals(view):
    items = list(view.items())
    judged = [i for i in items if i.answer is not None]
    right = sum(1 for i in judged if i.answer.outcome == "PASS")
    return [Figure("right", right / len(judged) if judged else 0.0, "fraction", "right"),
            Figure("counted", len(judged), "count", "capitals counted")]


def two(view, other):
    return []


NOT_A_FUNCTION = 3
"""


@pytest.fixture
def capitals(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    register(monkeypatch)
    folder = tmp_path / "capitals"
    write_quest(folder, CAPITALS_GATE, CAPITALS_TOML, CAPITALS_ITEMS)
    (folder / "capfigs.py").write_text(FIGURES_MODULE, encoding="utf-8")
    yield folder
    sys.modules.pop("capfigs", None)


def _declare(folder: Path, table: str) -> Path:
    path = folder / "quest.toml"
    path.write_text(CAPITALS_TOML + "\n" + table, encoding="utf-8")
    return path


def test_a_declared_quest_s_figures_reach_report(capitals: Path, cli: Cli) -> None:
    _declare(capitals, '[report]\nfigures = "capfigs:capitals"\n')
    cli.quest = str(capitals)
    assert cli("scan").exit_code == 0
    assert cli("submit", "-k", "France", input='{"capital": "Paris"}').exit_code == 0
    assert cli("submit", "-k", "Spain", input='{"capital": "Paris"}').exit_code == 4
    out = cli("report")
    assert out.exit_code == 0, out.output
    assert out.stdout.splitlines()[-3:] == [
        "capitals figures",
        "  right    0.5000  right",
        "  counted       2  capitals counted",
    ]
    figures = json.loads(cli("report", "--json").stdout)["quest_figures"]
    assert [(k, v["value"]) for k, v in figures.items()] == [("right", 0.5), ("counted", 2)]


TOML_LINES = CAPITALS_TOML.count("\n") + 1  # the blank line before the [report] table


@pytest.mark.parametrize(
    ("table", "line", "column", "said"),
    [
        ("[report]\n", 1, 1, '[report] needs figures = "module:function"'),
        ("[report]\nfigures = 3\n", 2, 0, "figures must be a string, not 3"),
        ('[report]\nfigures = "capitals"\n', 2, 11, 'expected figures = "module:function"'),
        ('[report]\nfigures  =  "nomodule:f"\n', 2, 13, "module nomodule failed to import"),
        ('[report]\nfigures = "capfigs:missing"\n', 2, 11, "module capfigs has no 'missing'"),
        ('[report]\nfigures = "capfigs:NOT_A_FUNCTION"\n', 2, 11, "not a function"),
        ('[report]\nfigures = "capfigs:two"\n', 2, 11, "must take one argument, the ledger's"),
        ('[report]\nfigure = "capfigs:capitals"\n', 2, 0, "unknown key 'figure' in [report]"),
    ],
)
def test_a_report_table_that_cannot_work_is_refused_where_it_is_written(
    capitals: Path, table: str, line: int, column: int, said: str
) -> None:
    path = _declare(capitals, table)
    with pytest.raises(DocumentError) as caught:
        load_quest(str(capitals))
    err = caught.value
    assert err.path == str(path) and said in err.message, err
    if line:
        assert (err.line, err.column) == (TOML_LINES + line, column)


def test_a_report_table_error_reaches_the_cli_with_its_position(capitals: Path, cli: Cli) -> None:
    path = _declare(capitals, '[report]\nfigures = "capfigs:missing"\n')
    cli.quest = str(capitals)
    out = cli("report")
    assert out.exit_code == 2
    assert f"{path}:{TOML_LINES + 2}:11: figures: capfigs:missing" in out.stderr
