"""The README's blocks run as pasted: every fenced block is checked here, or skipped with why.

The README's blocks and those of the docs/ pages its sections moved to (PAGES) are one text.

Python blocks run each in a fresh namespace (a reader pastes one, not the page); the capitals
quest's four documents are written to a folder and worked through the CLI; every `reins …`
line of a console or bash block (the README's, docs/'s and the packs') names a command and
options that exist; the `make` targets exist. The others are named in SKIPPED with the reason.
The console sessions themselves run in tests/test_doc_sessions.py, each compared with what it
shows.
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
# The README and the pages that hold what it said before it was cut to a ten-minute read.
MOVED = ["loop", "coding", "writing-quests", "review", "commands", "ledger", "security"]
PAGES = [README, *(ROOT / "docs" / f"{name}.md" for name in MOVED)]
DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]
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
    return [body for page in PAGES for lang, body in blocks(page) if lang == "python"]


def test_every_block_of_the_readme_is_checked_or_skipped_with_a_reason() -> None:
    checked = {"python", "console", "bash", ""}  # run, or their commands parsed, below
    capitals = capitals_blocks()
    for page in PAGES:
        for lang, body in blocks(page):
            first = body.split("\n", 1)[0]
            assert lang in checked or body in capitals or first in SKIPPED, (
                f"{page.name} block ```{lang} starting {first!r} is neither checked nor skipped"
            )


@pytest.mark.parametrize("n", range(len(python_blocks())))
def test_each_python_block_runs_alone_as_pasted(
    n: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    block = python_blocks()[n]
    namespace: dict[str, object] = {"__name__": "readme"}
    exec(compile(block, f"python block {n + 1} of the README's pages", "exec"), namespace)


def test_the_readme_quest_judges_as_it_says() -> None:
    from reins import Item, Quest, State, Verdict
    from reins.turn.judge import judge

    namespace: dict[str, object] = {"__name__": "readme"}
    (shout,) = [block for block in python_blocks() if 'Quest(name="shout"' in block]
    exec(compile(shout, "docs/writing-quests.md: the shout quest", "exec"), namespace)
    quest = namespace["quest"]
    assert isinstance(quest, Quest)
    item = Item("apple", State.TODO, 0, {"word": "apple"})
    passed, failed = judge(quest, item, "APPLE")[0], judge(quest, item, "Apple")[0]
    assert isinstance(passed, Verdict) and passed.outcome.value == "PASS"
    assert isinstance(failed, Verdict) and failed.root_cause == "upper-case"


# -- the capitals quest, from its four blocks ----------------------------------------------


def capitals_blocks() -> list[str]:
    """quest.toml, gate.md, items.jsonl and schema.json: the blocks of "Quests as documents"."""
    text = (ROOT / "docs" / "writing-quests.md").read_text(encoding="utf-8")
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


@pytest.mark.parametrize("path", [*DOCS, *PACK_READMES], ids=lambda p: f"{p.parent.name}/{p.name}")
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
