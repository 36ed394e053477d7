"""``reins`` run in-process, as a user runs it in a folder: the ``cli`` fixture's type."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import EllipsisType

from click.testing import CliRunner, Result

from reins.cli import make_group

TINY_REF = "tests.kit:TINY"


def reins(
    *args: str,
    input: str | bytes | None = None,
    env: Mapping[str, str] | None = None,
    color: bool = False,
) -> Result:
    """``reins ARGS`` in this process and folder, through click's CliRunner: ``exit_code``, and
    ``stdout`` and ``stderr`` apart. An exception the CLI does not turn into an exit code fails
    the test with its traceback. The one invoker every helper of the kit goes through.

    ``color`` writes as to a terminal: click then keeps the ANSI sequences it strips from a pipe.
    """
    return CliRunner().invoke(
        make_group(),
        list(args),
        input=input,
        env=dict(env or {}),
        catch_exceptions=False,
        color=color,
    )


@dataclass
class Cli:
    """``reins`` through click's CliRunner, in ``folder``, on the quest ``quest``.

    ``cli("submit", "-k", "a", input="bad")`` returns click's ``Result``: ``exit_code``, and
    ``stdout`` and ``stderr`` apart (``output`` holds both). Per call, ``input`` is stdin,
    ``quest`` replaces the default ``--quest`` (``None``: no ``--quest`` at all), ``env``
    adds environment variables and ``color`` writes as to a terminal. ``ledger``, when set, is
    given as ``--ledger`` to every call; ``driver`` is ``REINS_DRIVER``. An exception the CLI
    does not turn into an exit code fails the test with its traceback (``catch_exceptions=False``).
    """

    folder: Path
    quest: str | None = TINY_REF
    ledger: str | None = None
    driver: str = "tester"

    def __call__(
        self,
        *args: str,
        input: str | bytes | None = None,
        quest: str | EllipsisType | None = ...,
        env: Mapping[str, str] | None = None,
        color: bool = False,
    ) -> Result:
        chosen = self.quest if quest is ... else quest
        argv = [
            *(["--quest", chosen] if chosen else []),
            *(["--ledger", self.ledger] if self.ledger else []),
            *args,
        ]
        with contextlib.chdir(self.folder):
            environment = {"REINS_DRIVER": self.driver, **(env or {})}
            return reins(*argv, input=input, env=environment, color=color)
