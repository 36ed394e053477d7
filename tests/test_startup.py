"""Start-up: commands load when they run, --help lists them all, turn.md is what runs."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import reins
from reins.cli import make_group
from reins.cli.commands import COMMANDS, SECTIONS, Entry, LazyGroup
from tests.kit import Cli

# The loop driver's row of turn.md, as tests/test_turn_drivers.py edits it.
LOOP_ROW = "| loop   | loop         | backend   | sent    | yes    | loop         |"


def help_sections(text: str) -> dict[str, list[tuple[str, str]]]:
    """The sections of ``reins --help`` after its options: title → (command, help) rows."""
    sections: dict[str, list[tuple[str, str]]] = {}
    rows: list[tuple[str, str]] = []
    for line in text.split("Options:\n", 1)[1].splitlines():
        if line and not line.startswith(" "):
            rows = sections.setdefault(line.rstrip(":"), [])
        elif line.strip() and sections:
            name, help_ = line.split(None, 1)
            rows.append((name, help_))
    return sections


def test_help_lists_the_commands_grouped_by_purpose_each_with_its_help() -> None:
    out = CliRunner().invoke(make_group(), ["--help"], terminal_width=200)
    assert out.exit_code == 0, out.output
    sections = help_sections(out.output)
    assert list(sections) == list(SECTIONS)
    for section in SECTIONS:
        expected = [(n, e.help) for n, e in COMMANDS.items() if e.section == section]
        assert sections[section] == expected, section
    assert sum(len(sections[s]) for s in SECTIONS) == len(COMMANDS)


def test_the_help_of_every_section_starts_in_one_column() -> None:
    out = CliRunner().invoke(make_group(), ["--help"], terminal_width=100)
    listing = out.output.split("Work:\n", 1)[1]
    rows = [line for line in listing.splitlines() if line.startswith("  ") and line.strip()]
    starts = {line.index(line.split(None, 1)[1]) for line in rows}
    assert len(starts) == 1, listing


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_entry_names_its_command_and_that_command_s_own_help(name: str) -> None:
    """The registry is checked against the commands: a renamed or re-described one fails here."""
    group = make_group()
    command = group.get_command(click.Context(group), name)
    assert isinstance(command, click.Command)
    assert command.name == name
    assert command.get_short_help_str(limit=10_000) == COMMANDS[name].help
    assert COMMANDS[name].section in SECTIONS


def test_every_command_a_cli_module_lists_is_registered() -> None:
    """A module's ``COMMANDS`` tuple names what it offers; the registry must offer all of it."""
    import importlib
    import pkgutil

    import reins.cli

    registered = {entry.where for entry in COMMANDS.values()}
    for info in pkgutil.iter_modules(reins.cli.__path__, "reins.cli."):
        if info.name in ("reins.cli.__main__", "reins.cli.commands"):
            continue  # the first would start the CLI; the second holds the registry itself
        module = importlib.import_module(info.name)
        offered = getattr(module, "COMMANDS", ())
        if offered is COMMANDS:
            continue  # the registry itself, imported where the group is built
        for command in offered:
            attr = next(n for n, v in vars(module).items() if v is command)
            assert f"{info.name}:{attr}" in registered, f"{info.name}:{attr} is not in COMMANDS"


def test_help_reads_the_same_before_and_after_every_command_is_loaded() -> None:
    """The listing from the registry is the listing from the loaded commands' own help."""
    group = make_group()
    ctx = click.Context(group, info_name="reins", terminal_width=80)
    lazy = group.get_help(ctx)
    assert "Work:" in lazy
    for name in group.list_commands(ctx):
        group.get_command(ctx, name)
    assert group.get_help(ctx) == lazy


def test_an_unknown_command_is_still_a_usage_error(cli: Cli) -> None:
    out = cli("dance", quest=None)
    assert out.exit_code == 2
    assert "No such command 'dance'." in out.output
    assert "Did you mean" not in out.output


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["nxt"], "Did you mean 'next'?"),
        (["sumbit"], "Did you mean 'submit'?"),
        (["reveiw"], "Did you mean 'review' or 'resolve'?"),
        (["hook", "stp"], "Did you mean 'stop'?"),
    ],
)
def test_an_unknown_command_suggests_the_closest_ones(cli: Cli, argv: list[str], said: str) -> None:
    out = cli(*argv, quest=None)
    assert out.exit_code == 2
    assert f"No such command {argv[-1]!r}. {said}" in out.stderr


def test_a_mistyped_option_is_still_click_s_to_report(cli: Cli) -> None:
    out = cli("--ledgr", "x", "status", quest=None)
    assert out.exit_code == 2
    assert "No such option" in out.stderr


def test_a_command_that_cannot_be_loaded_fails_loudly_and_alone() -> None:
    lazy = {
        "turn": COMMANDS["turn"],
        "gone": Entry("reins.cli.nope:gone", "Work", "A command whose module is missing."),
        "odd": Entry("reins.cli.commands:COMMANDS", "Work", "Not a command at all."),
    }
    group = LazyGroup(name="reins", lazy=lazy)
    listing = CliRunner().invoke(group, ["--help"])
    assert "gone" in listing.output and "odd" in listing.output
    with pytest.raises(RuntimeError, match=r"'gone' \(reins.cli.nope:gone\) cannot be loaded"):
        CliRunner().invoke(group, ["gone"], catch_exceptions=False)
    with pytest.raises(RuntimeError, match=r"'odd' .* is not a click command"):
        CliRunner().invoke(group, ["odd"], catch_exceptions=False)
    assert CliRunner().invoke(group, ["turn"]).exit_code == 0


@pytest.mark.slow  # a fresh interpreter
def test_a_command_loads_its_own_module_only() -> None:
    code = (
        "import sys\n"
        "from reins.cli import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exc:\n"
        "    assert not exc.code, exc.code\n"
        "print('LOADED', *sys.modules)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code, "turn"], capture_output=True, text=True, check=True
    )
    loaded = set(run.stdout.rpartition("LOADED")[2].split())
    assert "reins.cli.inspect" in loaded
    others = {"reins.cli.lane", "reins.cli.loop", "reins.cli.backends", "reins.cli.ledger"}
    assert not loaded & {*others, "reins.cli.init", "reins.cli.host", "httpx", "mcp"}


@pytest.mark.slow  # a fresh interpreter
def test_the_stop_hook_does_not_load_the_mcp_sdk() -> None:
    """Claude Code runs the hook at every stop: it stays as light as any other command."""
    code = (
        "import sys\n"
        "from reins.cli import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('LOADED', *sys.modules)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code, "hook", "stop"],
        input="{}",
        capture_output=True,
        text=True,
        check=True,
    )
    loaded = set(run.stdout.rpartition("LOADED")[2].split())
    assert "reins.cli.host" in loaded and "reins hook:" in run.stderr
    assert not loaded & {"mcp", "reins.host.mcp_server", "httpx", "pydantic"}


# -- turn.md: the document on disk is the table that runs, on every start -----------------


def package_copy(tmp_path: Path) -> Path:
    """A copy of the reins package under ``tmp_path``; returns its turn.md."""
    copy = tmp_path / "reins"
    shutil.copytree(Path(reins.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy / "turn" / "turn.md"


def run_copy(tmp_path: Path, code: str) -> subprocess.CompletedProcess[str]:
    # Bytecode is cached (in tmp_path) as after an install, so a second start is a warm one.
    env = {"PYTHONPATH": str(tmp_path), "PYTHONPYCACHEPREFIX": str(tmp_path / "pycache")}
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )


@pytest.mark.slow  # a fresh interpreter
def test_a_changed_turn_md_is_the_table_that_runs(tmp_path: Path) -> None:
    """Every start reads turn.md: an edit, even one of the same size, is never served stale."""
    doc = package_copy(tmp_path)
    text = doc.read_text(encoding="utf-8")
    assert LOOP_ROW in text
    code = "from reins.turn import DRIVERS; print(DRIVERS['loop'].default_name)"
    assert run_copy(tmp_path, code).stdout.split() == ["loop"]
    for name in ("robot", "rabot"):  # same size, written within the same second
        row = LOOP_ROW[: -len("loop         |")] + f"{name:<13}|"
        doc.write_text(text.replace(LOOP_ROW, row))
        run = run_copy(tmp_path, code)
        assert run.returncode == 0, run.stderr
        assert run.stdout.split() == [name]


@pytest.mark.slow  # a fresh interpreter
def test_a_broken_turn_md_fails_at_first_use_and_spares_version(tmp_path: Path) -> None:
    doc = package_copy(tmp_path)
    text = doc.read_text(encoding="utf-8")
    broken = "| judged           | PASS    | any         | DONE      | +0           | yes   |"
    doc.write_text(text.replace(broken.replace("DONE", "PASS"), broken))
    run = run_copy(tmp_path, "import reins.turn.record")
    assert run.returncode != 0
    assert "TurnTableError" in run.stderr and "exactly one row, judged × PASS" in run.stderr
    # Start-up does not read the document: the version still prints.
    start = "import sys; sys.argv[1:] = ['--version']; from reins.cli import main; main()"
    version = run_copy(tmp_path, start)
    assert version.returncode == 0, version.stderr
    assert "version" in version.stdout
