"""How a ``reins`` run ends on an error: one line on stderr, or under ``--json`` one
``{"error", "exit_code", …}`` object on stdout, with the same exit code either way.

Imported only when a run fails: a turn that succeeds loads none of it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

import click

if TYPE_CHECKING:
    from reins.errors import Exit, ReinsError

ARGS = "reins.args"
"""The key of ``ctx.meta`` (shared by a run's contexts) holding the command line's words."""


def fail(message: str, code: Exit) -> NoReturn:
    """``error: MESSAGE`` on stderr, and exit with ``code``."""
    from reins.values import printable  # for_quest fails here before any group runs

    click.echo(f"error: {printable(message)}", err=True)
    sys.exit(code)


def fail_as_json(exc: ReinsError) -> NoReturn:
    """``exc`` as ``{"error", "exit_code", …its fields}`` on stdout, and exit with its code."""
    from reins.cli.shapes import Failure
    from reins.values import readable_json

    click.echo(readable_json(Failure.of(exc).to_json()))
    sys.exit(exc.exit_code)


def wants_json(args: Sequence[str]) -> bool:
    """Whether ``--json`` is among a command line's words (before a ``--``).

    Read from the words themselves, so that an error click raises before it parses the option
    (an unknown option, a missing argument, "no quest given") is written as JSON too.
    """
    words = list(args)
    return "--json" in (words[: words.index("--")] if "--" in words else words)


def json_requested(ctx: click.Context) -> bool:
    """Whether this run's errors are written as JSON: ``--json`` parsed, or among its words."""
    env = ctx.find_root().obj
    return bool(getattr(env, "json_errors", False)) or wants_json(ctx.meta.get(ARGS, ()))


class JsonUsageError(click.ClickException):
    """A click error (usage, bad value, "no quest given") under ``--json``: click shows it as
    ``{"error", "exit_code"}`` on stdout, as every other error under ``--json``, and exits
    with its code."""

    def __init__(self, error: click.ClickException) -> None:
        super().__init__(error.format_message())
        self.__dict__["exit_code"] = error.exit_code  # click's is a class variable; this one's

    def show(self, file: Any = None) -> None:
        from reins.values import readable_json

        click.echo(readable_json({"error": self.message, "exit_code": self.exit_code}))


def as_json(exc: click.ClickException) -> click.ClickException:
    """``exc`` to raise under ``--json``: shown as JSON, with its exit code."""
    return exc if isinstance(exc, JsonUsageError) else JsonUsageError(exc)
