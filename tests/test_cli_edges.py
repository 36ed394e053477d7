"""The CLI at its edges: broken quests, ill-typed reins.toml, failed scans, shadowing names."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import Result

from tests.kit import Cli


def one_line_error(out: Result, code: int, *fragments: str) -> None:
    assert out.exit_code == code, out.output
    assert "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), out.stderr
    for fragment in fragments:
        assert fragment in lines[0]


@pytest.mark.parametrize(
    ("source", "fragments"),
    [
        ("import not_a_package_anywhere\n", ("ModuleNotFoundError", "not_a_package_anywhere")),
        ("def quest(:\n", ("SyntaxError", "line 1")),
        ("raise RuntimeError('the data file is missing')\n", ("RuntimeError", "data file")),
        (
            "def quest():\n    raise KeyError('prompt')\n",
            ("its factory raised", "KeyError"),
        ),
    ],
)
def test_a_quest_that_fails_to_load_is_one_line_naming_module_and_exception(
    cli: Cli, tmp_path: Path, source: str, fragments: tuple[str, ...]
) -> None:
    (tmp_path / "brokenquest.py").write_text(source)
    out = cli("status", quest="brokenquest:quest")
    one_line_error(out, 2, "brokenquest", *fragments)


@pytest.mark.parametrize(
    ("toml", "fragment"),
    [
        ("[reins]\nmax_tries = true\n", "max_tries must be a whole number, not True"),
        ("[reins]\nmax_tries = 0\n", "max_tries must be at least 1"),
        ("[reins]\nlease = 'long'\n", "lease must be a positive number"),
        ("[reins]\nquest = 3\n", "quest must be a string"),
        ("[reins]\nauto_export = 1\n", "auto_export must be a true or false"),
        ('[reins]\nquest = "emails"\n[extras]\nx = 1\n', "unknown table(s) or key(s) extras"),
        ("[reins]\nmax_trys = 3\n", "unknown key(s) max_trys"),
    ],
)
def test_reins_toml_values_are_type_checked(
    cli: Cli, tmp_path: Path, toml: str, fragment: str
) -> None:
    (tmp_path / "reins.toml").write_text(toml)
    one_line_error(cli("status", quest="emails"), 2, fragment)


def test_a_scan_that_fails_leaves_no_empty_ledger(cli: Cli, tmp_path: Path) -> None:
    out = cli("scan", str(tmp_path / "missing"), quest="emails")
    one_line_error(out, 2, "neither a file nor a folder")
    assert not list(tmp_path.glob("*.reins.db*"))


def test_a_seed_that_raises_is_one_line(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "seedy.py").write_text(
        "from tests.kit import TINY\nimport dataclasses\n"
        "def boom(args):\n    yield ('a', None)\n    raise ValueError('row 2 is bad')\n"
        "quest = dataclasses.replace(TINY, seed=boom)\n"
    )
    out = cli("scan", quest="seedy:quest")
    one_line_error(out, 2, "the quest's seed raised ValueError: row 2 is bad")


@pytest.mark.parametrize("name", ["json", "click", "sqlite3"])
def test_init_refuses_a_name_that_shadows_an_importable_module(cli: Cli, name: str) -> None:
    one_line_error(
        cli("init", "--name", name, quest=None), 2, f"would shadow the installed module {name!r}"
    )
    assert not Path(f"{name}.py").exists()


def test_init_with_a_fresh_name_still_works_and_force_rewrites_it(cli: Cli) -> None:
    assert cli("init", "--name", "my_fresh_quest", quest=None).exit_code == 0
    assert cli("init", "--name", "my_fresh_quest", "--force", quest=None).exit_code == 0


def test_a_ledger_in_a_folder_that_does_not_exist_says_to_make_the_folder(cli: Cli) -> None:
    """It said "Run `reins scan`", and scan then failed on the missing folder."""
    out = cli("--ledger", "nodir/x.db", "status")
    one_line_error(out, 2, "no ledger at nodir/x.db", "folder nodir does not exist")
    assert "mkdir -p nodir" in out.stderr and "Run `reins scan`" not in out.stderr
    scan = cli("--ledger", "nodir/x.db", "scan")
    one_line_error(scan, 2, "cannot create ledger nodir/x.db", "mkdir -p nodir")
    assert not Path("nodir").exists()
    Path("nodir").mkdir()
    assert cli("--ledger", "nodir/x.db", "scan").exit_code == 0
    plain = cli("--ledger", "nodir/y.db", "status")  # the folder is there: scan makes it
    one_line_error(plain, 2, "no ledger at nodir/y.db. Run `reins scan` to create it.")


@pytest.mark.parametrize("command", [["new", "--pack", "emials", "x"], ["status"]])
def test_an_unknown_pack_is_answered_with_the_closest_name(cli: Cli, command: list[str]) -> None:
    out = cli(*command, quest=None if command[0] == "new" else "emials")
    one_line_error(out, 2, "'emials' (did you mean 'emails'?)", "Known: ", "emails")
    far = cli("new", "--pack", "zzzzzz", "x", quest=None)
    one_line_error(far, 2, "no pack named 'zzzzzz'. Known: ")


def test_report_html_says_what_it_wrote_on_stderr(cli: Cli) -> None:
    """Every other message goes to stderr; stdout holds data only (the --json document)."""
    assert cli("scan").exit_code == 0
    out = cli("report", "--html", "r.html")
    assert out.exit_code == 0, out.output
    assert out.stdout == "" and out.stderr == "wrote r.html\n"
