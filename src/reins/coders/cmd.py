"""``cmd:PROGRAM ARGS…``: any program that takes the prompt on stdin and works in its folder.

``reins loop --model 'cmd:./fix.py --careful'`` runs ``./fix.py --careful`` in the item's
worktree with the prompt (the system text, a blank line, the user text) on stdin. Its final
message is its stdout (the last :data:`MESSAGE_CAP` characters). It may report what it spent,
so budgets can meter it, by printing lines of this one shape anywhere in its stdout::

    {"reins": {"input_tokens": 10, "output_tokens": 5, "cost": 0.001}}

Each such line adds to the run's usage (each key is optional) and is left out of the message.
A non-zero exit code is a generation error (no try used) quoting the end of its stderr.
``ARGS`` are split as a shell would (quotes, backslashes), but no shell runs; a ``PROGRAM``
with a ``/`` is relative to the folder reins started in, any other is found on ``PATH``.
Options: ``?env=NAME,NAME`` passes those variables of reins' environment through (an API
key: by name, never logged); the rest of the environment is clean. ``?network=HOST:PORT,…``
names where the program's model is: under reins' sandbox it reaches only those and the hosts
the quest allows (``[workspace] network``), through reins' egress proxy.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
from collections.abc import Iterable
from typing import ClassVar

from reins.coders.protocol import Ending, Event, Launch, Session, Spent
from reins.errors import ConfigError
from reins.sandbox.allow import entry

MESSAGE_CAP = 16_000


class CmdAgent:
    """The ``cmd`` agent: ``model`` is the command line."""

    name = "cmd"
    options: ClassVar[dict[str, str]] = {
        "env": "variables of reins' environment passed to the program, by name (comma-separated)",
        "network": "hosts (host:port) the program may reach under the sandbox (comma-separated)",
    }

    def __init__(self, model: str, options: dict[str, str]) -> None:
        try:
            words = shlex.split(model)
        except ValueError as exc:
            raise ConfigError(f"agent cmd: cannot read the command {model!r}: {exc}") from None
        if not words:
            raise ConfigError("agent cmd: no program given: write cmd:PROGRAM ARGS…")
        program = words[0]
        if "/" in program:
            found = os.path.abspath(program)
            if not (os.path.isfile(found) and os.access(found, os.X_OK)):
                raise ConfigError(f"agent cmd: {program} is not an executable file")
        else:
            which = shutil.which(program)
            if which is None:
                raise ConfigError(f"agent cmd: {program!r} was not found on PATH")
            found = which
        self.argv = (found, *words[1:])
        names = [n.strip() for n in options.get("env", "").split(",") if n.strip()]
        for name in names:
            if not name.isidentifier():
                raise ConfigError(f"agent cmd: env {name!r} is not a variable name")
        self.pass_env = tuple(names)
        hosts = [h.strip() for h in options.get("network", "").split(",") if h.strip()]
        self.network = tuple(str(entry(h, where="agent cmd: network")) for h in hosts)

    def __repr__(self) -> str:
        return f"CmdAgent({shlex.join(self.argv)!r})"

    def launch(self, session: Session) -> Launch:
        prompt = session.prompt
        text = f"{prompt.system}\n\n{prompt.user}" if prompt.system else prompt.user
        return Launch(argv=self.argv, stdin=text, pass_env=self.pass_env, network=self.network)

    def parser(self) -> CmdParser:
        return CmdParser()


class CmdParser:
    """Reads a ``cmd`` agent's stdout: usage lines, and the rest as its final message."""

    def __init__(self) -> None:
        self.kept: list[str] = []
        self.size = 0

    def line(self, text: str) -> Iterable[Event]:
        spent = _usage(text)
        if spent is not None:
            return [spent]
        self.kept.append(text)
        self.size += len(text) + 1
        while self.size > 2 * MESSAGE_CAP and len(self.kept) > 1:
            self.size -= len(self.kept.pop(0)) + 1
        return []

    def end(self, returncode: int, stderr: str) -> Ending:
        message = "\n".join(self.kept).strip()[-MESSAGE_CAP:]
        if returncode == 0:
            return Ending(message)
        said = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
        why = f": {said[-1][:300]}" if said else ""
        status = f"killed by signal {-returncode}" if returncode < 0 else f"exit code {returncode}"
        return Ending(message, f"cmd: {status}{why}")


def _usage(text: str) -> Spent | None:
    """The usage a ``{"reins": {...}}`` line reports, or None for any other line."""
    stripped = text.strip()
    if not stripped.startswith("{") or '"reins"' not in stripped[:24]:
        return None  # most lines: no JSON to parse
    try:
        data = json.loads(stripped)
    except ValueError:
        return None
    if not isinstance(data, dict) or set(data) != {"reins"} or not isinstance(data["reins"], dict):
        return None
    report = data["reins"]

    def whole(key: str) -> int:
        value = report.get(key, 0)
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0

    cost = report.get("cost")
    if not isinstance(cost, int | float) or isinstance(cost, bool) or cost < 0:
        cost = None
    return Spent(
        whole("input_tokens"), whole("output_tokens"), None if cost is None else float(cost)
    )
