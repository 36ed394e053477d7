"""The ``reins`` command group, the per-run environment, and the one place errors become exit codes.

Exit codes (:class:`reins.errors.Exit`, the one table; docs/commands.md's is checked against it):

====  =========================================================================================
0     success; for ``submit``, the item locked PASS; for ``loop``, every item is locked or a
      cap you set (``--max-*``) was reached
1     an error: damaged or foreign ledger, unreadable file, failure inside reins
2     usage or configuration error: bad flag, unknown item, quest or ``reins.toml`` key; a
      ledger of another quest; ``submit``: the submission is empty, over ``max_submission`` or
      not UTF-8 (nothing recorded)
3     ``next``: nothing left to lease; ``loop --no-wait``: the items left are all leased to
      other drivers; ``loop --batch``: they are all leased to other drivers or batch jobs
4     ``submit``: FAIL with answers left — read the facts and submit again
5     ``submit``: the item is not TODO (it locked earlier); ``resolve``/``reopen``: the action
      does not apply to the item's state
6     ``submit``: another driver holds the item's lease, or the lease token is stale;
      ``release KEY``: the lease is another driver's
7     ``loop``: the circuit breaker tripped (generation failed on N different items in a row,
      or the backend was not running at the run's first call; nothing locked)
8     ``replay``: some lines were not recorded (each is reported on stderr), and none was a
      judge error
9     ``ledger check``: an invariant is violated; ``gate check``,
      ``replay --check-determinism``: a rule judged differently in fresh processes
10    the gate itself failed: ``submit`` recorded a judge error (no answer counted);
      ``replay``: a line was a judge error (this outranks 8: fix the gate, then replay the file
      again); ``loop``: the judge breaker tripped
11    ``submit``: the item locked without a pass (DONE, REVIEW, SKIPPED or BLOCKED)
12    ``loop``: items are left that this run set aside (their generation failed
      ``--set-aside-after`` times in a row; TODO, failures used unchanged)
13    ``land``: a PASS did not land (a merge conflict or a red land rule made it a new item to
      do, or it waits on one), or the whole suite fails on the integration (the branch did not
      move)
130   ``loop``: stopped by SIGINT (Ctrl-C), cleanly; any other command: interrupted
143   ``loop``: stopped by SIGTERM, cleanly
====  =========================================================================================
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TextIO, cast

import click

from reins._version import __version__
from reins.cli.commands import COMMANDS, LazyGroup, SuggestingGroup

# `reins --version` and `reins --help` run on click and the lines below alone: everything else
# (settings, errors, the commands' modules) is imported where it is first needed.
if TYPE_CHECKING:
    from pathlib import Path

    from reins.cli.config import Settings
    from reins.cli.shapes import Shape
    from reins.quest import Quest
    from reins.store.export import Exported
    from reins.store.owner import Owner
    from reins.store.protocol import Store

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


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

    def judging_quest(self) -> Quest:
        """The quest, for a command that judges answers or hands out items to be judged:
        refused up front (:class:`~reins.errors.MissingExtra`, with the pip line) while an
        extra of reins-quest its checks need is not installed, before anything is recorded."""
        quest = self.quest
        if quest.extras:
            from reins.extras import require

            require(quest.extras, f"quest {quest.name}")
        return quest

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
            from reins.store.engines import engine_of, open_store

            location = self.ledger_location
            engine, schema = engine_of(location), None
            if engine.schemas and not engine.names_schema(location):  # one per quest run
                schema = self.quest.name
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


def say_refused(exported: Exported) -> None:
    """Say on stderr which locks an export refused to write, and why (every command that
    exports says it, with or without ``--json``: it is a message)."""
    message = exported.refusal()
    if message is not None:
        click.echo(f"reins: {message}", err=True)


def emit_json(value: Shape | Sequence[Shape]) -> None:
    """Write one JSON document to stdout: a typed value's ``to_json()``, or a list of them."""
    from reins.values import readable_json

    data = [v.to_json() for v in value] if isinstance(value, Sequence) else value.to_json()
    click.echo(readable_json(data))


class Printable:
    """A text stream that writes what it is given as :func:`reins.values.printable` text to
    ``stream``; the rest (``isatty``, ``fileno``, ``encoding``, its binary ``buffer``, on which
    MCP speaks) is the stream's own."""

    def __init__(self, stream: TextIO) -> None:
        from reins.values import printable

        self.stream = stream
        self.printable = printable

    def write(self, text: str) -> int:
        if not isinstance(text, str):  # click asks a stream whether it is binary by write(b"")
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self.stream.write(self.printable(text))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def raw(stream: TextIO) -> TextIO:
    """The stream under a :class:`Printable` one: for a writer that sends control sequences of
    its own (the loop's status line, redrawn in place) and makes its texts printable itself."""
    return stream.stream if isinstance(stream, Printable) else stream


@contextmanager
def printable_streams() -> Iterator[None]:
    """While a command runs, ``sys.stdout`` and ``sys.stderr`` write printable text only.

    What a generator wrote reaches the terminal in many texts (a log, a fact, a prompt, a
    review, an error quoting it); filtering the two streams, not each text, leaves no command
    and no line to forget.
    """
    saved = sys.stdout, sys.stderr
    undo = [_utf8(s) for s in saved if s is not None]
    # None under pythonw; already Printable when a command runs a group of its own.
    if sys.stdout is not None and not isinstance(sys.stdout, Printable):
        sys.stdout = cast(TextIO, Printable(sys.stdout))
    if sys.stderr is not None and not isinstance(sys.stderr, Printable):
        sys.stderr = cast(TextIO, Printable(sys.stderr))
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
        for done in undo:
            done()


def _utf8(stream: TextIO) -> Callable[[], object]:
    """Make an ASCII ``stream`` UTF-8 for the while, and return the undo.

    click writes UTF-8 on the buffer of a stream whose encoding is ASCII, past the stream
    itself, and so past a :class:`Printable` over it; once UTF-8, click writes to it.
    """
    import codecs
    import io

    if not isinstance(stream, io.TextIOWrapper):
        return lambda: None
    encoding, errors = stream.encoding, stream.errors
    if codecs.lookup(encoding).name != "ascii":
        return lambda: None
    stream.reconfigure(encoding="utf-8", errors="replace")
    return lambda: stream.reconfigure(encoding=encoding, errors=errors)


class ReinsGroup(SuggestingGroup):
    """A click group that maps ReinsError to a message on stderr and its exit code (under
    ``--json``, every error, click's own included, to ``{"error", "exit_code", …}`` on stdout),
    and whose commands write printable text only (:func:`printable_streams`)."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        # Around click's own main: its usage errors, help and exits are written through too.
        with printable_streams():
            return super().main(*args, **kwargs)

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        try:
            ctx = super().make_context(info_name, args, parent, **extra)
        except click.ClickException as exc:
            from reins.cli.failures import as_json, wants_json

            if wants_json(args):
                raise as_json(exc) from None
            raise
        ctx.meta.setdefault("reins.args", list(args))  # failures.ARGS: the whole line's words
        return ctx

    def invoke(self, ctx: click.Context) -> Any:
        from reins.errors import Exit, ReinsError

        try:
            return super().invoke(ctx)
        except ReinsError as exc:
            from reins.cli.failures import fail, fail_as_json, json_requested

            if json_requested(ctx):
                fail_as_json(exc)
            fail(str(exc), exc.exit_code)
        except click.ClickException as exc:
            from reins.cli.failures import as_json, json_requested

            if json_requested(ctx):
                raise as_json(exc) from None
            raise
        except KeyboardInterrupt:
            from reins.cli.failures import fail

            fail("interrupted", Exit.SIGINT)
        finally:
            env = ctx.find_object(Env)
            if env is not None:
                env.close()


class CommandGroup(LazyGroup, ReinsGroup):
    """The ``reins`` group: the command table of :mod:`reins.cli.commands`, errors as exits."""


def make_group(
    quest: Quest | None = None, name: str = "reins", origin: str | None = None
) -> click.Group:
    """Build the command group; with ``quest`` given, ``--quest`` is fixed to it.

    ``origin`` is a reference that loads that quest (what its ledgers record beside its
    name, for messages); none for a quest handed over as a value.
    """

    @click.group(name=name, cls=CommandGroup, lazy=COMMANDS, context_settings=CONTEXT_SETTINGS)
    @click.option(
        "--quest",
        "-q",
        "quest_ref",
        metavar="REF",
        envvar="REINS_QUEST",
        help=(
            "Quest: a folder, an installed quest or pack name, or package.module:attr "
            "[env REINS_QUEST]; it wins over reins.toml's, whose ledger is then not used."
            if quest is None
            else f"Another quest than the one {name} is made for (a folder, a quest or pack "
            "name, or package.module:attr), on its own ledger unless --ledger is given."
        ),
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

        Seed a quest's items with 'scan'; a person or agent takes one with 'next' and
        answers with 'submit'; the gate judges every answer and the ledger records it.
        FAIL facts go back for the next answer; locked items never change again.
        """
        ctx.obj = run_env(ctx, quest_ref, ledger, quest, origin)

    return group


def run_env(
    ctx: click.Context,
    quest_ref: str | None,
    ledger: str | None,
    quest: Quest | None,
    origin: str | None,
) -> Env:
    """The run's :class:`Env`. A CLI made for one quest (``for_quest``) runs it unless its
    command line's ``-q`` names another (``REINS_QUEST`` does not); see Settings.resolve."""
    from click.core import ParameterSource

    from reins.cli.config import Config, Settings, read_config
    from reins.errors import ConfigError

    if quest is not None and ctx.get_parameter_source("quest_ref") != ParameterSource.COMMANDLINE:
        quest_ref = None
    fixed = None if quest is None or quest_ref else origin or quest.name
    try:
        settings = Settings.resolve(
            quest=quest_ref, ledger=ledger, config=read_config(), fixed=fixed
        )
    except ConfigError:
        # `hook stop` reads the reins.toml of the agent's folder itself and tells the agent
        # what is wrong; `hook install` and `init` need none (init may be what fixes it).
        if ctx.invoked_subcommand not in ("hook", "init"):
            raise
        settings = Settings.resolve(quest=quest_ref, ledger=ledger, config=Config({}), fixed=fixed)
    if quest is None or quest_ref:
        return Env(settings)
    return Env(settings, quest, origin or "")
