"""The README's blocks run as pasted: every fenced block is checked here, or skipped with why.

Python blocks run each in a fresh namespace (a reader pastes one, not the page); the capitals
quest's four documents are written to a folder and worked through the CLI; every `reins …`
line of a console or bash block (the README's and the packs') names a command and options that
exist; the `make` targets exist. The others are named in SKIPPED with the reason.
"""

from __future__ import annotations

import re
import shlex
import warnings
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from tests.kit import ROOT, Cli

README = ROOT / "README.md"
PACK_READMES = sorted((ROOT / "src" / "reins" / "packs").glob("*/README.md"))
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
# Blocks not run, each with why (matched by their first line).
SKIPPED = {
    "[items]": (
        "the item sources in brief (two of them commented out): tests/test_sources.py runs each, "
        "and examples/toolz/fix-tests/quest.toml holds the first"
    ),
    "tools: next_item, submit, board, item_log, rules, release": (
        "the MCP transcript: tests/test_mcp.py replays it against the server"
    ),
    '{"key": "01-meeting", "state": "PASS", "tries": 1, "turns": 2, "outcome": "PASS",': (
        "an export record with its long fields elided (…): tests/test_export.py pins the format"
    ),
    "tokens  in 512,000  out 0": (
        "report's spend after a batch run at a provider: "
        "tests/batch/test_batch_loop.py pins its form"
    ),
}


def blocks(path: Path) -> list[tuple[str, str]]:
    """Every fenced block of ``path``: (language, body)."""
    return FENCE.findall(path.read_text(encoding="utf-8"))


def python_blocks() -> list[str]:
    return [body for lang, body in blocks(README) if lang == "python"]


def test_every_block_of_the_readme_is_checked_or_skipped_with_a_reason() -> None:
    checked = {"python", "console", "bash", ""}  # run, or their commands parsed, below
    capitals = capitals_blocks()
    for lang, body in blocks(README):
        first = body.split("\n", 1)[0]
        assert lang in checked or body in capitals or first in SKIPPED, (
            f"README block ```{lang} starting {first!r} is neither checked nor skipped"
        )


@pytest.mark.parametrize("n", range(len(python_blocks())))
def test_each_python_block_runs_alone_as_pasted(
    n: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    block = python_blocks()[n]
    namespace: dict[str, object] = {"__name__": "readme"}
    exec(compile(block, f"README.md python block {n + 1}", "exec"), namespace)


def test_the_readme_quest_judges_as_it_says() -> None:
    from reins import Item, Quest, State, Verdict
    from reins.turn.judge import judge

    namespace: dict[str, object] = {"__name__": "readme"}
    exec(compile(python_blocks()[0], "README.md python block 1", "exec"), namespace)
    quest = namespace["quest"]
    assert isinstance(quest, Quest)
    item = Item("apple", State.TODO, 0, {"word": "apple"})
    passed, failed = judge(quest, item, "APPLE")[0], judge(quest, item, "Apple")[0]
    assert isinstance(passed, Verdict) and passed.outcome.value == "PASS"
    assert isinstance(failed, Verdict) and failed.root_cause == "upper-case"


# -- the capitals quest, from its four blocks ----------------------------------------------


def capitals_blocks() -> list[str]:
    """quest.toml, gate.md, items.jsonl and schema.json: the blocks of "Quests as documents"."""
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Quests as documents\n", 1)[1].split("\n### ", 1)[0]
    return [body for _, body in FENCE.findall(section)]


def test_the_capitals_quest_works_as_pasted(cli: Cli, tmp_path: Path) -> None:
    quest_toml, gate_md, items, schema = capitals_blocks()
    assert quest_toml.startswith("# capitals/quest.toml") and "capitals/gate.md" in gate_md
    folder = tmp_path / "capitals"
    folder.mkdir()
    for name, body in [
        ("quest.toml", quest_toml),
        ("gate.md", gate_md),
        ("items.jsonl", items),
        ("schema.json", schema),
    ]:
        (folder / name).write_text(body, encoding="utf-8")
    cli.quest = "./capitals"
    assert cli("scan").stdout.startswith("added 3 item(s)")
    assert cli("submit", "-k", "Italy", input='{"capital": "Rome"}').exit_code == 0
    wrong = cli("submit", "-k", "France", input='{"city": "Paris"}')
    assert wrong.exit_code == 4 and "Root cause: shape (FAIL)." in wrong.stdout


# -- commands named in console and bash blocks ---------------------------------------------


def command_lines(path: Path) -> Iterator[list[str]]:
    """The arguments after `reins` of every command a console or bash block runs."""
    for lang, body in blocks(path):
        if lang not in ("console", "bash"):
            continue
        joined = body.replace("\\\n", " ")
        for line in joined.splitlines():
            line = line.removeprefix("$ ").split(" | ")[-1].strip()
            if line.startswith("reins "):
                yield shlex.split(line, comments=True)[1:]


def parse(args: list[str]) -> str:
    """Parse ``args`` through the CLI's command tree without running anything.

    Raises:
        click.UsageError: no such command, no such option, an extra argument.
    """
    from reins.cli.app import make_group

    cmd: click.Command = make_group()
    name, rest, parent = "reins", args, None
    opened: list[click.Context] = []
    try:
        while True:
            try:
                ctx = cmd.make_context(name, rest, parent=parent)
            except click.exceptions.Exit:  # an eager option that answers at once: --version
                return name
            opened.append(ctx)  # closed below: a File option opened its file
            if not isinstance(cmd, click.Group):
                return ctx.command_path
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)  # protected_args, click 8.2
                rest = [*ctx.protected_args, *ctx.args]
            if not rest:
                return ctx.command_path
            found, sub, rest = cmd.resolve_command(ctx, rest)
            assert sub is not None and found is not None
            cmd, name, parent = sub, found, ctx
    finally:
        for ctx in reversed(opened):
            ctx.close()


@pytest.mark.parametrize("path", [README, *PACK_READMES], ids=lambda p: p.parent.name)
def test_every_reins_command_in_the_docs_exists_with_its_options(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    lines = list(command_lines(path))
    assert lines or path != README
    for args in lines:
        for arg in args:  # the files a command opens as it parses
            if re.fullmatch(r"[\w.-]+\.(jsonl|json|html)", arg):
                (tmp_path / arg).touch()
        try:
            parse(args)
        except click.UsageError as exc:
            raise AssertionError(f"{path.name}: `reins {shlex.join(args)}`: {exc}") from None


def test_the_make_targets_the_readme_names_exist() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    bare = [body for lang, body in blocks(README) if lang == ""]
    named = re.findall(r"^make (\w+)", "".join(bare), re.M)
    assert named and all(re.search(rf"^{t}:", makefile, re.M) for t in named), named


def test_the_demo_sample_is_shipped_so_its_scan_runs_as_pasted(cli: Cli, tmp_path: Path) -> None:
    """`reins -q ifeval scan sample.jsonl` in an empty folder reads the pack's own sample; a
    file of that name in the current folder still comes first."""
    cli.quest = "ifeval"
    out = cli("scan", "sample.jsonl")
    assert out.exit_code == 0, out.output
    assert out.stdout.startswith("added 30 item(s), 0 already present; 30 in ifeval.reins.db")
    (tmp_path / "mine.jsonl").write_text('{"key": "x", "prompt": "Say hi."}\n')
    (tmp_path / "mine.jsonl").rename(tmp_path / "sample.jsonl")
    again = cli("--ledger", "other.db", "scan", "sample.jsonl")
    assert again.stdout.startswith("added 1 item(s)")


# -- the coding session, as a newcomer pastes it ---------------------------------------------


def coding_session() -> str:
    """The console block of "Coding agents in the loop" that starts with `reins new`."""
    for lang, body in blocks(README):
        if lang == "console" and body.startswith("$ reins new --pack coding play\n"):
            return body
    raise AssertionError("the README has no coding session starting with `reins new`")


@pytest.mark.slow  # a coding agent's loop: git, bubblewrap, pytest in the judge's tree
def test_the_coding_session_runs_as_pasted(tmp_path: Path) -> None:
    """After `reins new --pack coding play`, the README's `cmd:` stand-in is there, and every
    command of the session runs: it named a file only a source checkout had, and a diff from
    `master`, a branch git's default may not make. Its diff is from the base the loop printed."""
    import os
    import shutil
    import subprocess
    import sys

    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed (apt-get install bubblewrap)")
    session = coding_session()
    said_base = re.search(r"from base (\w+)", session)
    assert said_base is not None
    commands = [line[2:] for line in session.splitlines() if line.startswith("$ ")]
    assert any(f"diff {said_base.group(1)} " in c for c in commands)  # the base the loop said
    env = {**os.environ, "REINS_DRIVER": "newcomer"}
    base = said_base.group(1)
    outputs = []
    for command in commands:
        argv = [a.replace(said_base.group(1), base) for a in shlex.split(command)]
        if argv[0] == "reins":
            argv = [sys.executable, "-m", "reins.cli", *argv[1:]]
        done = subprocess.run(
            argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, (command, done.stdout, done.stderr)
        outputs.append(done.stdout)
        printed = re.search(r"from base (\w+)", done.stderr)
        base = printed.group(1) if printed else base
        if command.startswith("reins new"):  # the stand-in came with the pack, untracked
            agent = tmp_path / "play" / "stand_in_agent.py"
            assert agent.is_file() and os.access(agent, os.X_OK)
    listed = dict(zip(commands, outputs, strict=True))
    assert listed['git -C play branch --list "reins/*"'].split() == [
        f"reins/{k}"
        for k in ("count_vowels", "initials", "is_palindrome", "reverse_words", "slugify")
    ]
    diff = next(out for c, out in listed.items() if c.startswith("git -C play diff"))
    assert diff.startswith("diff --git a/textkit/__init__.py b/textkit/__init__.py")
    assert "+    return re.sub(r'[^a-z0-9]+', '-', text.lower()).strip('-')" in diff
    assert listed["git -C play status --short"] == ""  # the stand-in is not in the repository


# -- the ledger check, as a newcomer pastes it -------------------------------------------------


def ledger_check_session() -> str:
    """The console block of "The ledger" that forges a lock and runs `reins ledger check`."""
    for lang, body in blocks(README):
        if lang == "console" and "ledger check\n" in body and "sqlite3 " in body:
            return body
    raise AssertionError("the README has no console block forging a lock for `ledger check`")


def test_the_ledger_check_session_runs_as_pasted(cli: Cli) -> None:
    """Each `$` line runs (`sqlite3 FILE SQL` through Python's sqlite3, `cd` into a fresh
    folder being the test's own), and prints what the block shows: no raw row of values."""
    import sqlite3

    said: list[tuple[str, list[str]]] = []
    for line in ledger_check_session().splitlines():
        if line.startswith("$ "):
            said.append((line[2:].split("  #")[0].strip(), []))
        else:
            said[-1][1].append(line)
    code = 0
    for command, shown in said:
        argv = shlex.split(command)
        if argv[0] == "cd":
            printed = ""
        elif argv[0] == "reins":
            out = cli(*argv[1:], quest=None)
            code, printed = out.exit_code, out.stdout
        elif argv[0] == "sqlite3":
            with sqlite3.connect(cli.folder / argv[1]) as db:
                db.execute(argv[2])
            db.close()
            printed = ""
        else:
            assert argv == ["echo", "$?"], command
            printed = f"{code}\n"
        assert printed.splitlines() == shown, command
