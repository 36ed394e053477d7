"""Exit codes: one enum, and every table of them (docs/commands.md, CLI docstrings, the error
tree) is it.

A code added to ``reins.errors.Exit`` and not to a table, or the other way round, fails here;
each failure prints the table as it should read, to paste.
"""

from __future__ import annotations

import ast
import importlib
import re
import textwrap
from pathlib import Path

import click
import pytest

import reins.cli.app
from reins import errors
from reins.errors import Exit

ROOT = Path(__file__).parent.parent
CLI = ROOT / "src" / "reins" / "cli"


def markdown_table() -> str:
    rows = "".join(f"| {int(code)} | {code.meaning} |\n" for code in Exit)
    return "| code | meaning |\n|---|---|\n" + rows


def rst_table(width: int = 95) -> str:
    rule = "====  " + "=" * (width - 6)
    lines = [rule]
    for code in Exit:
        # a literal is never cut across lines: its spaces are held until the text is wrapped
        meaning = re.sub(r"`([^`]+)`", lambda m: f"``{m[1]}``".replace(" ", "\0"), code.meaning)
        lines += textwrap.wrap(
            meaning,
            width,
            initial_indent=f"{int(code):<6}",
            subsequent_indent=" " * 6,
            break_on_hyphens=False,
            break_long_words=False,
        )
    return "\n".join([*lines, rule]).replace("\0", " ") + "\n"


def test_every_code_is_one_member_with_a_one_line_meaning() -> None:
    codes = [int(code) for code in Exit]
    assert codes == sorted(set(codes))
    assert int(Exit.OK) == 0 and click.UsageError.exit_code == Exit.USAGE  # click's own
    for code in Exit:
        assert code.meaning and "\n" not in code.meaning and code.meaning == code.meaning.strip()
    assert Exit["SIGINT"] == 130 and Exit["SIGTERM"] == 143  # the loop looks signals up by name


def test_the_docs_table_is_the_enum() -> None:
    page = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
    section = page.split("### Exit codes\n\n", 1)[1] + "\n"  # the page may end with it
    table = section[: section.index("\n\n") + 1]
    assert table == markdown_table(), (
        "docs/commands.md's Exit codes should read:\n" + markdown_table()
    )


def test_the_cli_docstring_table_is_the_enum() -> None:
    doc = reins.cli.app.__doc__ or ""
    expected = rst_table()
    assert expected in doc, "reins/cli/app.py's docstring table should read:\n" + expected


@pytest.mark.parametrize("command", ["loop", "replay"])
def test_the_loop_and_replay_docstrings_name_every_code_of_their_command(command: str) -> None:
    module = importlib.import_module(f"reins.cli.{command}")
    doc = " ".join((module.__doc__ or "").split())
    said = re.search(rf"``{command}`` exits ([0-9, or]+)", doc)
    assert said is not None, doc
    listed = {int(n) for n in re.findall(r"\d+", said.group(1))}
    named = {int(code) for code in Exit if f"`{command} " in code.meaning + " "}
    named |= {int(code) for code in Exit if f"`{command}`" in code.meaning}
    assert listed == named | {Exit.OK, Exit.ERROR, Exit.USAGE}


def test_each_error_class_carries_its_code_as_an_exit_member() -> None:
    """The tree drawn in errors.py's docstring is the classes' codes."""
    drawn = re.findall(
        r"[├└]── (\w+)(?:\(\w+\))?\s.*?\s([A-Z_]+) (\d+)$", errors.__doc__ or "", re.M
    )
    drawn += [("ReinsError", "ERROR", "1")]
    assert len(drawn) >= 10
    for name, member, number in drawn:
        code = getattr(errors, name).exit_code
        assert isinstance(code, Exit), name
        assert (code.name, int(code)) == (member, int(number)), name
    assert errors.WrongQuest.exit_code is Exit.USAGE
    assert errors.TurnMoved.exit_code is Exit.LEASED
    assert errors.GroundError.exit_code is Exit.JUDGE_ERROR


def exits(tree: ast.AST) -> list[ast.Call]:
    """The calls of ``sys.exit``, ``ctx.exit`` and the CLI's ``fail`` in ``tree``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in ("exit", "fail"):
                found.append(node)
    return found


def test_every_exit_of_the_cli_names_an_exit_member() -> None:
    """No bare number and no module-level ``EXIT_*`` constant: the code's meaning is one place."""
    seen = 0
    for path in sorted(CLI.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id.startswith("EXIT_"):
                pytest.fail(f"{path.name}:{node.lineno}: {node.id}: use reins.errors.Exit")
        for call in exits(tree):
            code = call.args[-1] if call.args else None
            where = f"{path.name}:{call.lineno}"
            assert not isinstance(code, ast.Constant), f"{where}: a bare exit code"
            if isinstance(code, ast.Attribute) and isinstance(code.value, ast.Name):
                assert code.value.id in ("Exit", "exc"), where
                seen += 1
    assert seen >= 10
