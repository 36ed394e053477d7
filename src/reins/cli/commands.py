"""The command table: every ``reins`` command, its section, its module and its help, and the
group that lists them without importing them.

``reins --help`` reads this table alone (grouped by :data:`SECTIONS`); a command's module is
imported only when that command runs: ``reins next`` loads work.py, not the loop, the human
lane or the backends. tests/test_startup.py checks each entry against the command it names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import click

# The purposes `reins --help` groups the commands by, in the order it prints them.
SECTIONS = ("Work", "Look", "Decide", "Run", "Quest documents", "Set up")


class Entry(NamedTuple):
    """One command: where it lives ("module:attr"), its section and its one-line help."""

    where: str
    section: str
    help: str


COMMANDS: dict[str, Entry] = {
    # Work: take items and answer them.
    "scan": Entry(
        "reins.cli.work:scan",
        "Work",
        "Seed the quest's items from ARGS (what they mean is the quest's: files, folders, …).",
    ),
    "next": Entry(
        "reins.cli.work:next_", "Work", "Lease the next item to DRIVER and print its full prompt."
    ),
    "submit": Entry(
        "reins.cli.work:submit", "Work", "Judge a submission for item KEY and record the turn."
    ),
    "release": Entry(
        "reins.cli.work:release",
        "Work",
        "Give back a lease: KEY's (held by DRIVER), --mine (all of DRIVER's), or --expired.",
    ),
    # Look: where the run stands, and what it produced.
    "status": Entry(
        "reins.cli.inspect:status",
        "Look",
        "Counts per state, work remaining, failures used, and how often each rule fired.",
    ),
    "items": Entry(
        "reins.cli.lane:items",
        "Look",
        "List items in the order they were added, a page at a time (fast at any size).",
    ),
    "log": Entry(
        "reins.cli.inspect:log",
        "Look",
        "Every attempt of item KEY: turn, driver, outcome, root cause, facts, submission.",
    ),
    "report": Entry(
        "reins.cli.report:report",
        "Look",
        "The run's figures: counts, passes and locks by answer, rules; --html FILE for a page.",
    ),
    "serve": Entry(
        "reins.cli.serve:serve",
        "Look",
        "Serve the dashboard: board, items, timelines, review queue (127.0.0.1 by default).",
    ),
    "export": Entry(
        "reins.cli.inspect:export",
        "Look",
        "Append to a JSONL file each lock it lacks, and each withdrawal it is owed: each "
        "exactly once per file.",
    ),
    # Decide: a person has the last word on a locked item, and drops any item.
    "review": Entry(
        "reins.cli.lane:review",
        "Decide",
        "List the REVIEW items waiting for a person, with their text, submission and facts.",
    ),
    "resolve": Entry(
        "reins.cli.lane:resolve",
        "Decide",
        "Settle a REVIEW item: --accept locks it PASS, --reject locks it DONE.",
    ),
    "reopen": Entry(
        "reins.cli.lane:reopen",
        "Decide",
        "Return locked items to TODO in a new round with a fresh try budget.",
    ),
    "rejudge": Entry(
        "reins.cli.lane:rejudge",
        "Decide",
        "Judge each locked item's locking submission with the current gate.",
    ),
    "drop": Entry(
        "reins.cli.lane:drop",
        "Decide",
        "Retire items for good: each locks DONE (dropped), with your note, never worked again.",
    ),
    # Run: drivers that work unattended, and the surfaces coding agents drive.
    "loop": Entry(
        "reins.cli.loop:loop",
        "Run",
        "Work the quest unattended: a backend answers, the gate judges, the ledger records.",
    ),
    "replay": Entry(
        "reins.cli.replay:replay",
        "Run",
        "Judge recorded outputs: each line goes through the same turn as a submission.",
    ),
    "batch": Entry(
        "reins.cli.batch:batch",
        "Run",
        "The provider batches of 'loop --batch': where each stands, and cancelling them.",
    ),
    "land": Entry(
        "reins.cli.land:land",
        "Run",
        "Merge every PASS onto BRANCH in reins' own store, judging the land rules after each.",
    ),
    "mcp": Entry(
        "reins.cli.host:mcp",
        "Run",
        "Serve the quest to a coding agent over the Model Context Protocol (stdio).",
    ),
    "hook": Entry(
        "reins.cli.host:hook",
        "Run",
        "Claude Code's stop hook: an agent may not stop while items are left for it.",
    ),
    # Quest documents: what judges, and the quests shipped to start from.
    "rules": Entry(
        "reins.cli.inspect:rules",
        "Quest documents",
        "Every fact the quest can raise: the gate's catalog (what actually judges; for a graph "
        "gate, its nodes and edges), then those its prepare and reins itself raise, with "
        "coaching.",
    ),
    "gate": Entry(
        "reins.cli.gate:gate",
        "Quest documents",
        "Print the quest's gate.md, or check the gate ('reins gate check').",
    ),
    "turn": Entry(
        "reins.cli.inspect:turn",
        "Quest documents",
        "Print turn.md: the four steps of a turn and the table that records them.",
    ),
    "packs": Entry(
        "reins.cli.packs:packs",
        "Quest documents",
        "List the quest packs shipped with reins: name, description, items, extra needed.",
    ),
    "new": Entry(
        "reins.cli.packs:new",
        "Quest documents",
        "Copy a pack's folder (quest.toml, gate.md, items) into DIR to make it yours.",
    ),
    # Set up: a project, its generators and its ledger.
    "init": Entry(
        "reins.cli.init:init",
        "Set up",
        "Write reins.toml and a starter quest (a NAME/ folder of documents, or NAME.py).",
    ),
    "backends": Entry(
        "reins.cli.backends:backends",
        "Set up",
        "List the installed backends and the options of each.",
    ),
    "ledger": Entry(
        "reins.cli.ledger:ledger",
        "Set up",
        "Check a ledger, or copy it between SQLite and PostgreSQL.",
    ),
}


def unknown_command(name: str, known: list[str]) -> str:
    """``No such command 'nxt'. Did you mean 'next'?``: the closest known names, if any."""
    import difflib

    close = [repr(c) for c in difflib.get_close_matches(name, known, n=3)]
    message = f"No such command {name!r}."
    if not close:
        return message
    said = close[0] if len(close) == 1 else f"{', '.join(close[:-1])} or {close[-1]}"
    return f"{message} Did you mean {said}?"


class SuggestingGroup(click.Group):
    """A group that answers an unknown command with the closest ones it knows."""

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = click.utils.make_str(args[0]) if args else ""
        # An option-like word is click's to report ("No such option"); so is a normalized name.
        plain = name[:1].isalnum() and ctx.token_normalize_func is None
        if plain and not ctx.resilient_parsing and self.get_command(ctx, name) is None:
            ctx.fail(unknown_command(name, self.list_commands(ctx)))
        return super().resolve_command(ctx, args)


class LazyGroup(SuggestingGroup):
    """A group whose commands are imported when they run, from ``lazy``: see :data:`COMMANDS`."""

    def __init__(self, *args: Any, lazy: Mapping[str, Entry], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = self.commands.get(cmd_name)
        if command is None and cmd_name in self.lazy:
            command = load_command(cmd_name, self.lazy[cmd_name].where)
            self.add_command(command, cmd_name)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """As click's, one section per purpose in :data:`SECTIONS` order, the commands in the
        table's order; a command not loaded yet is listed with its registered help."""
        listed = [(name, self.shown(name)) for name in (*self.lazy, *self.unlisted())]
        listed = [(name, command) for name, command in listed if not command.hidden]
        if not listed:
            return
        # click's layout, one column width for every section: the help is cut to fit beside it
        width = max(len(name) for name, _ in listed)
        limit = formatter.width - 6 - width
        for section in (*SECTIONS, "Other"):
            rows = [
                (n, c.get_short_help_str(limit)) for n, c in listed if self.section(n) == section
            ]
            if rows:
                with formatter.section(section):
                    spacing = 2 + width - max(len(n) for n, _ in rows)
                    formatter.write_dl(rows, col_spacing=spacing)

    def shown(self, name: str) -> click.Command:
        """The command if it is loaded, else a stand-in carrying its registered help."""
        return self.commands.get(name) or click.Command(name, help=self.lazy[name].help)

    def section(self, name: str) -> str:
        entry = self.lazy.get(name)
        return entry.section if entry is not None and entry.section in SECTIONS else "Other"

    def unlisted(self) -> list[str]:
        """Commands added to the group directly, not through the table."""
        return sorted(set(self.commands) - set(self.lazy))


def load_command(name: str, where: str) -> click.Command:
    """The command at ``where`` ("module:attr").

    Raises:
        RuntimeError: the module or the attribute is missing, or is not a click command; a
            broken installation, never the user's doing.
    """
    import importlib

    module, _, attr = where.partition(":")
    try:
        command = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise RuntimeError(f"reins: command {name!r} ({where}) cannot be loaded: {exc}") from exc
    if not isinstance(command, click.Command):
        raise RuntimeError(f"reins: command {name!r} ({where}) is not a click command")
    plain_help(command)
    return command


def plain_help(command: click.Command) -> None:
    """Show what a docstring marks as code with backticks (`reins next`, ``[items] from``)
    as click shows its own names, in single quotes: click prints help as written, and a
    backtick is markup a terminal does not render. The command's options and subcommands too."""
    import re

    def plain(text: str | None) -> str | None:
        return text and re.sub(r"``?([^`]+?)``?", r"'\1'", text)

    command.help, command.short_help = plain(command.help), plain(command.short_help)
    for param in command.params:
        if isinstance(param, click.Option):
            param.help = plain(param.help)
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            plain_help(sub)
