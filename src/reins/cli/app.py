"""The ``reins`` command group, the per-run environment, and the one place errors become exit codes.

Exit codes (documented in the README):

====  =========================================================================
0     success; for ``submit``, the item locked PASS
1     an error: damaged ledger, unreadable file, a failure inside reins
2     usage or configuration error: bad flag, unknown item, quest or key
3     ``next``: nothing left to lease; ``loop``: the rest is leased to other drivers
4     ``submit``: FAIL with tries left — fix it and submit again
5     ``submit``: the item is not TODO (it locked earlier)
6     ``submit``: another driver holds the item's lease
7     ``loop``: the circuit breaker tripped (generation failed on N items in a row)
8     ``replay``: some lines were not recorded
9     ``ledger check``: an invariant is violated
10    the gate itself failed (``submit``, ``replay``: a judge error, no try used; ``loop``: N
      in a row); for ``replay`` it outranks 8
11    ``submit``: the item locked without a pass (DONE, REVIEW, SKIPPED, BLOCKED)
12    ``loop``: items are left that this run set aside (their generation kept failing)
130   ``loop``: stopped by SIGINT (143: SIGTERM), cleanly
====  =========================================================================
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, NoReturn

import click

from reins._version import __version__

# `reins --version` and `reins --help` run on click and the lines below alone: everything else
# (settings, errors, the commands' modules) is imported where it is first needed.
if TYPE_CHECKING:
    from pathlib import Path

    from reins.cli.config import Settings
    from reins.quest import Quest
    from reins.store.owner import Owner
    from reins.store.protocol import Store

EXIT_NOTHING_LEFT = 3
EXIT_FAIL_RETRY = 4
EXIT_JUDGE_ERROR = 10
EXIT_LOCKED_NOT_PASS = 11

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


# Every command: its name, where it lives ("module:attr") and its one-line help, which
# `reins --help` lists without importing the module. A command's module is imported only when
# that command runs: `reins next` loads work.py, not the loop, the human lane or the backends.
# tests/test_startup.py checks each entry against the command it names.
COMMANDS: dict[str, tuple[str, str]] = {
    "scan": (
        "reins.cli.work:scan",
        "Seed the quest's items from ARGS (what they mean is the quest's: files, folders, …).",
    ),
    "next": ("reins.cli.work:next_", "Lease the next item to DRIVER and print its full prompt."),
    "submit": ("reins.cli.work:submit", "Judge a submission for item KEY and record the turn."),
    "release": (
        "reins.cli.work:release",
        "Give back a lease: KEY's (held by DRIVER), --mine (all of DRIVER's), or --expired.",
    ),
    "status": (
        "reins.cli.inspect:status",
        "Counts per state, work remaining, tries used, and how often each rule fired.",
    ),
    "log": (
        "reins.cli.inspect:log",
        "Every attempt of item KEY: turn, driver, outcome, root cause, facts, submission.",
    ),
    "rules": (
        "reins.cli.inspect:rules",
        "The gate's catalog: what actually judges (for a graph gate, its nodes and edges).",
    ),
    "export": (
        "reins.cli.inspect:export",
        "Append every new lock, and a withdrawal of each exported lock a person moved back to "
        "TODO, to a JSONL file: each exactly once.",
    ),
    "turn": (
        "reins.cli.inspect:turn",
        "Print turn.md: the four steps of a turn and the table that records them.",
    ),
    "items": (
        "reins.cli.lane:items",
        "List items in the order they were added, a page at a time (fast at any size).",
    ),
    "review": (
        "reins.cli.lane:review",
        "List the REVIEW items waiting for a person, with the facts that raised the doubt.",
    ),
    "resolve": (
        "reins.cli.lane:resolve",
        "Settle a REVIEW item: --accept locks it PASS, --reject locks it DONE.",
    ),
    "reopen": (
        "reins.cli.lane:reopen",
        "Return locked items to TODO in a new round with a fresh try budget.",
    ),
    "rejudge": (
        "reins.cli.lane:rejudge",
        "Judge each locked item's locking submission with the current gate.",
    ),
    "backends": (
        "reins.cli.backends:backends",
        "List the installed backends and the options of each.",
    ),
    "loop": (
        "reins.cli.loop:loop",
        "Work the quest unattended: a backend answers, the gate judges, the ledger records.",
    ),
    "replay": (
        "reins.cli.loop:replay",
        "Judge recorded outputs: each line goes through the same turn as a submission.",
    ),
    "gate": (
        "reins.cli.gate:gate",
        "Print the quest's gate.md, or check the gate (`reins gate check`).",
    ),
    "ledger": (
        "reins.cli.ledger:ledger",
        "Check a ledger, or copy it between SQLite and PostgreSQL.",
    ),
    "mcp": (
        "reins.cli.agents:mcp",
        "Serve the quest to a coding agent over the Model Context Protocol (stdio).",
    ),
    "hook": (
        "reins.cli.agents:hook",
        "Claude Code's stop hook: an agent may not stop while items are left for it.",
    ),
    "serve": (
        "reins.cli.serve:serve",
        "Serve the dashboard: board, items, timelines, review queue (127.0.0.1 by default).",
    ),
    "report": (
        "reins.cli.report:report",
        "The run's figures: counts, passes by try, tries to lock, rules; --html FILE for a page.",
    ),
    "init": (
        "reins.cli.init:init",
        "Write reins.toml and a starter quest (a NAME/ folder of documents, or NAME.py).",
    ),
    "new": (
        "reins.cli.packs:new",
        "Copy a pack's folder (quest.toml, gate.md, items) into DIR to make it yours.",
    ),
    "packs": (
        "reins.cli.packs:packs",
        "List the quest packs shipped with reins: name, description, items, extra needed.",
    ),
}


class Env:
    """What every command shares: settings, and the quest and ledger, loaded on first use."""

    def __init__(
        self, settings: Settings, quest: Quest | None = None, origin: str | None = None
    ) -> None:
        self.settings = settings
        self._quest = quest
        self._origin = origin  # where a quest given as a value came from (for_quest)
        self._ledger: Store | None = None
        self.json_errors = False  # set by --json: errors are written as JSON too

    @property
    def quest(self) -> Quest:
        if self._quest is None:
            ref = self.settings.quest_ref
            if not ref:
                raise click.UsageError(
                    "no quest given: pass --quest REF, set REINS_QUEST, or run `reins init`"
                )
            from reins.quests.find import load_quest

            self._quest = load_quest(ref, folder=self.settings.quest_folder)
        if self.settings.max_tries is not None and self._quest.max_tries != self.settings.max_tries:
            import dataclasses

            self._quest = dataclasses.replace(self._quest, max_tries=self.settings.max_tries)
        return self._quest

    @property
    def quest_known(self) -> bool:
        """Whether a quest is given (fixed, by flag, variable or reins.toml), loaded or not."""
        return self._quest is not None or bool(self.settings.quest_ref)

    def quest_if_given(self) -> Quest | None:
        """The quest when one is configured, else None (for commands that can do without)."""
        return self.quest if self.quest_known else None

    @property
    def owner(self) -> Owner | None:
        """The quest a ledger opened here must belong to (None when no quest is configured):
        its name, compared, and where it was loaded from, for messages."""
        quest = self.quest_if_given()
        if quest is None:
            return None
        from reins.quests.find import quest_origin
        from reins.store.owner import Owner

        if self._origin is not None:
            return Owner(quest.name, self._origin)
        ref = self.settings.quest_ref
        return Owner(quest.name, quest_origin(ref) if ref else "")

    @property
    def ledger_location(self) -> str:
        """A file path (SQLite) or a ``postgresql://`` URL."""
        return self.settings.ledger or self.settings.place(f"{self.quest.name}.reins.db")

    @property
    def results_path(self) -> Path:
        from pathlib import Path

        return Path(
            self.settings.results or self.settings.place(f"{self.quest.name}-results.jsonl")
        )

    def ledger(self, *, create: bool = False) -> Store:
        """The ledger, opened for this run's quest: one of another quest is refused untouched
        (:class:`~reins.errors.WrongQuest`); one from before quests were recorded adopts it."""
        if self._ledger is None:
            from reins.store.open import is_postgres, names_schema, open_store

            location = self.ledger_location
            schema = None
            if is_postgres(location):  # one schema per quest run, unless the URL names one
                quest = self.quest_if_given() if names_schema(location) else self.quest
                schema = quest.name if quest is not None else None
            store = open_store(location, create=create, schema=schema, owner=self.owner)
            say_adopted(store)
            self._ledger = store
        return self._ledger

    def close(self) -> None:
        if self._ledger is not None:
            self._ledger.close()
            self._ledger = None


pass_env = click.make_pass_decorator(Env)


def say_adopted(store: Store) -> None:
    """Say on stderr, once (the ledger now records it), that a ledger adopted its quest."""
    if store.adopted and store.owner is not None:
        click.echo(
            f"reins: ledger {store.location} recorded no quest (it was made by an earlier "
            f"reins); it now belongs to quest {store.owner.describe()}, and commands of other "
            "quests on it are refused",
            err=True,
        )


def emit_json(value: Any) -> None:
    """Write one JSON document to stdout."""
    from reins.values import readable_json

    click.echo(readable_json(value))


def fail(message: str, code: int) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


class ReinsGroup(click.Group):
    """A click group that maps ReinsError to a message on stderr and its exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        from reins.errors import ReinsError

        try:
            return super().invoke(ctx)
        except ReinsError as exc:
            env = ctx.find_object(Env)
            if env is not None and env.json_errors:
                emit_json({"error": str(exc), "exit_code": exc.exit_code, **exc.fields()})
                sys.exit(exc.exit_code)
            fail(str(exc), exc.exit_code)
        except KeyboardInterrupt:
            fail("interrupted", 130)
        finally:
            env = ctx.find_object(Env)
            if env is not None:
                env.close()


class LazyGroup(ReinsGroup):
    """A group whose commands are imported when they run, from ``lazy``: see :data:`COMMANDS`."""

    def __init__(self, *args: Any, lazy: Mapping[str, tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = self.commands.get(cmd_name)
        if command is None and cmd_name in self.lazy:
            command = load_command(cmd_name, self.lazy[cmd_name][0])
            self.add_command(command, cmd_name)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """As click's, but a command not loaded yet is listed with its registered help."""
        listed = []
        for name in self.list_commands(ctx):
            command = self.commands.get(name) or click.Command(name, help=self.lazy[name][1])
            if not command.hidden:
                listed.append((name, command))
        if listed:
            # click's own layout: the help is cut to fit beside the longest name
            limit = formatter.width - 6 - max(len(name) for name, _ in listed)
            with formatter.section("Commands"):
                formatter.write_dl([(n, c.get_short_help_str(limit)) for n, c in listed])


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
    return command


def make_group(
    quest: Quest | None = None, name: str = "reins", origin: str | None = None
) -> click.Group:
    """Build the command group; with ``quest`` given, ``--quest`` is fixed to it.

    ``origin`` is a reference that loads that quest (what its ledgers record beside its
    name, for messages); none for a quest handed over as a value.
    """

    @click.group(name=name, cls=LazyGroup, lazy=COMMANDS, context_settings=CONTEXT_SETTINGS)
    @click.option(
        "--quest",
        "-q",
        "quest_ref",
        metavar="REF",
        envvar="REINS_QUEST",
        hidden=quest is not None,
        help="Quest: package.module:attr or an installed quest name [env REINS_QUEST].",
    )
    @click.option(
        "--ledger",
        "-l",
        metavar="PATH",
        envvar="REINS_LEDGER",
        help="Ledger: an SQLite file or a postgresql:// URL "
        "[env REINS_LEDGER; default <quest>.reins.db].",
    )
    @click.version_option(__version__, "--version", "-V", prog_name=name)
    @click.pass_context
    def group(ctx: click.Context, quest_ref: str | None, ledger: str | None) -> None:
        """reins: a deterministic gate, not the agent, decides when work is done.

        Seed a quest's items with `scan`; a person or agent takes one with `next` and
        answers with `submit`; the gate judges every answer and the ledger records it.
        FAIL facts go back for the next try; locked items never change again.
        """
        from reins.cli.config import Config, Settings, read_config
        from reins.errors import ConfigError

        try:
            settings = Settings.resolve(quest=quest_ref, ledger=ledger, config=read_config())
        except ConfigError:
            # `hook stop` reads the reins.toml of the agent's folder itself and tells the agent
            # what is wrong; `hook install` and `init` need none (init may be what fixes it).
            if ctx.invoked_subcommand not in ("hook", "init"):
                raise
            settings = Settings.resolve(quest=quest_ref, ledger=ledger, config=Config({}))
        ctx.obj = Env(settings, quest, None if quest is None else origin or "")

    return group


def for_quest(quest: Quest | str, *, name: str | None = None) -> Callable[[], None]:
    """A console-script entry point running the whole reins CLI for one quest.

    In your package: ``main = reins.cli.for_quest("mypkg.quest:quest")``, then
    ``[project.scripts] myquest = "mypkg:main"``.
    """

    def main() -> None:
        from reins.errors import ReinsError
        from reins.quests.find import load_quest

        try:
            q = load_quest(quest) if isinstance(quest, str) else quest
        except ReinsError as exc:
            fail(str(exc), exc.exit_code)
        origin = quest if isinstance(quest, str) else None
        make_group(q, name or q.name, origin)(prog_name=name or q.name)

    return main
