"""Running one turn of a coding agent: done once here for every adapter, on the one process
runner of every program generator (:func:`reins.backends.process.watched`).

- The prompt goes on stdin, which is then closed (or stdin is ``/dev/null``): never in the
  argument list, and no agent waits forever on an open stdin.
- A clean environment: ``PATH``, ``HOME`` (the run's own empty folder), ``TMPDIR`` (below it),
  ``LANG=C.UTF-8``, a git identity for commits the agent makes, the adapter's variables, and
  only those of reins' own environment the adapter names (API keys, by name; never logged).
- The runner's watchdogs: no output for ``idle`` seconds, or ``wall`` seconds in all, and the
  agent is killed. So is it when the budget ``guard`` says its spending is over a cap (checked
  at every usage event its stream reports), when its adapter reads it as stuck (:class:`Abort`),
  and when the run is stopped (``switch``). A kill ends the whole process tree
  (:mod:`reins.workspace.processes`) and is a generation error: no try used.
- An agent that has said its last word (:class:`Done`, Claude Code's result line) and does not
  exit within ``linger`` seconds is ended the same way, but that is no error: its work is
  judged (CLIs have hung after their result).
- The agent dies with reins (``PR_SET_PDEATHSIG`` on Linux, and the process namespace the
  ``wrap`` starts it in, whose processes all die with it); what a crashed reins left behind
  is ended when the next run of the quest starts
  (:func:`reins.workspace.processes.end_leftovers`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from reins.backends.process import Lines, Switch, Watch, Watchdogs, watched
from reins.coders.protocol import Abort, Agent, Done, Ending, Launch, Parser, Session, Spent
from reins.workspace import processes as tree

__all__ = ["AGENT_WATCHDOGS", "Guard", "RunEnd", "Switch", "Watchdogs", "Wrap", "run_agent"]

AGENT_WATCHDOGS = Watchdogs(idle=600.0, wall=1800.0, grace=3.0, linger=10.0)
"""A coding agent's watchdogs unless told: 600 s without output, more than its longest tool run
(a test suite, an install), since agents print nothing while a tool runs; 1,800 s in all; 10 s
to exit after its last word."""
FLAGS = {"idle": "--agent-idle", "wall": "--agent-timeout"}
RESERVED = ("HOME", tree.MARKER)
AGENT_GIT = {
    "GIT_AUTHOR_NAME": "reins agent",
    "GIT_AUTHOR_EMAIL": "agent@reins.invalid",
    "GIT_COMMITTER_NAME": "reins agent",
    "GIT_COMMITTER_EMAIL": "agent@reins.invalid",
}

Guard = Callable[[Spent], "str | None"]
"""Called with a run's usage so far after each usage event: the reason to kill it, or None."""
Wrap = Callable[[Launch], list[str]]
"""Turns the agent's launch into the argument vector that runs it confined (bubblewrap, which
lets it reach only what its :attr:`~reins.coders.protocol.Launch.network` and the quest name)."""


@dataclass(frozen=True, slots=True)
class RunEnd:
    """How one run went: the final message, the usage, and the error or kill if any."""

    message: str
    usage: Spent
    error: str | None = None
    killed: str | None = None  # idle, wall, budget, abort, stop: why reins killed it
    returncode: int | None = None
    latency: float = 0.0
    model: str | None = None


async def run_agent(
    agent: Agent,
    session: Session,
    *,
    limits: Watchdogs | None = None,
    guard: Guard | None = None,
    switch: Switch | None = None,
    wrap: Wrap | None = None,
    path: Sequence[str] = (),
) -> RunEnd:
    """Run ``agent`` once as ``session`` says, watched, with ``path`` first on its ``PATH``
    (the project's interpreter); never raises for the agent's failure."""
    try:
        launch = agent.launch(session)
        env = _environment(session, launch, path)
        argv = list(launch.argv) if wrap is None else wrap(launch)
    except Exception as exc:  # an adapter's own failure is the generator's
        return RunEnd("", Spent(), error=f"{agent.name}: cannot launch: {exc}")
    meter = _Meter(agent.name, agent.parser(), guard)
    stdin = launch.stdin.encode("utf-8", "surrogatepass") if launch.stdin is not None else None
    try:
        done = await watched(
            argv, stdin=stdin, read=Lines(meter.line), limits=limits or AGENT_WATCHDOGS,
            cwd=session.cwd, env=env, switch=switch, name=agent.name, flags=FLAGS,
        )  # fmt: skip
    except OSError as exc:
        return RunEnd(
            "", Spent(), error=f"{agent.name}: cannot start {argv[0]}: {exc.strerror or exc}"
        )
    ending = meter.ending(done.returncode, done.stderr)
    stopped = done.stopped
    kind = None if stopped is None else stopped.kind
    error = ending.error if stopped is None else stopped.message
    return RunEnd(
        message=ending.message,
        usage=_told(meter.spent, ending.usage),
        error=error,
        killed=kind,
        returncode=done.returncode,
        latency=done.seconds,
        model=ending.model,
    )


def _environment(session: Session, launch: Launch, path: Sequence[str] = ()) -> dict[str, str]:
    home = session.home
    tmp = os.path.join(home, "tmp")
    os.makedirs(tmp, exist_ok=True)
    for relative, text in launch.files.items():
        path = os.path.normpath(os.path.join(home, relative))
        if os.path.isabs(relative) or not path.startswith(home + os.sep):
            raise ValueError(f"file {relative!r} is not below HOME")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    env = {
        "PATH": os.pathsep.join([*path, os.environ.get("PATH", os.defpath)]),
        "LANG": "C.UTF-8",
        "TMPDIR": tmp,
        **AGENT_GIT,
    }
    for name, value in launch.env.items():
        if name in RESERVED:
            raise ValueError(f"an adapter may not set {name}")
        env[name] = value
    for name in launch.pass_env:
        if name in os.environ and name not in RESERVED:
            env[name] = os.environ[name]
    env["HOME"] = home
    return env


class _Meter:
    """An agent's stdout read line by line through its adapter's parser: the usage so far,
    and the run ended when the guard, or the adapter, says so."""

    def __init__(self, name: str, parser: Parser, guard: Guard | None) -> None:
        self.name, self.parser, self.guard = name, parser, guard
        self.spent = Spent()

    def line(self, raw: bytes, watch: Watch) -> None:
        try:
            events = list(self.parser.line(raw.decode("utf-8", "replace").rstrip("\r")))
        except Exception as exc:
            watch.stop("abort", f"{self.name}: its adapter failed on a line: {exc}")
            return
        for event in events:
            if isinstance(event, Abort):
                watch.stop("abort", f"{self.name}: {event.reason}: killed")
            elif isinstance(event, Done):
                watch.last_word()
            elif isinstance(event, Spent):
                self.spent = self.spent + event
                reason = self.guard(self.spent) if self.guard is not None else None
                if reason is not None:
                    watch.stop("budget", f"{self.name}: {reason}: killed with its process tree")

    def ending(self, code: int, stderr: str) -> Ending:
        try:
            return self.parser.end(code, stderr)
        except Exception as exc:
            return Ending("", f"{self.name}: its adapter failed reading the end: {exc}")


def _told(metered: Spent, told: Spent | None) -> Spent:
    """The usage of a run: the larger of what its stream metered and what its end reported."""
    if told is None:
        return metered
    return Spent(
        max(metered.input_tokens, told.input_tokens),
        max(metered.output_tokens, told.output_tokens),
        _larger(metered.cost, told.cost),
        max(metered.cache_read_tokens, told.cache_read_tokens),
        max(metered.cache_write_tokens, told.cache_write_tokens),
    )


def _larger(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else max(a, b)
