"""Running one turn of a coding agent: done once here for every adapter.

- The prompt goes on stdin, which is then closed (or stdin is ``/dev/null``): never in the
  argument list, and no agent waits forever on an open stdin.
- A clean environment: ``PATH``, ``HOME`` (the run's own empty folder), ``TMPDIR`` (below it),
  ``LANG=C.UTF-8``, a git identity for commits the agent makes, the adapter's variables, and
  only those of reins' own environment the adapter names (API keys, by name; never logged).
- Two watchdogs: no output for ``idle`` seconds, or ``wall`` seconds in all, and the agent is
  killed. So is it when the budget ``guard`` says its spending is over a cap (checked at every
  usage event its stream reports), when its adapter reads it as stuck (:class:`Abort`), and
  when the run is stopped (``switch``). A kill ends the whole process tree
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

import asyncio
import contextlib
import os
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from reins.backends._process import feed as write_and_close
from reins.coders.protocol import Abort, Agent, Done, Ending, Launch, Session, Spent
from reins.workspace import processes as tree

DEFAULT_IDLE = 600.0
"""Seconds without output before an agent is killed: more than its longest tool run (a test
suite, an install), since agents print nothing while a tool runs."""
DEFAULT_WALL = 1800.0
"""Seconds one run of an agent may take in all."""
KILL_GRACE = 3.0
LINGER = 10.0
"""Seconds an agent may take to exit after its last word (:class:`Done`) before it is ended."""
TICK = 0.1
MAX_LINE = 1024 * 1024
STDERR_TAIL = 8192
RESERVED = ("HOME", tree.MARKER)
AGENT_GIT = {
    "GIT_AUTHOR_NAME": "reins agent",
    "GIT_AUTHOR_EMAIL": "agent@reins.invalid",
    "GIT_COMMITTER_NAME": "reins agent",
    "GIT_COMMITTER_EMAIL": "agent@reins.invalid",
}

Guard = Callable[[Spent], "str | None"]
"""Called with a run's usage so far after each usage event: the reason to kill it, or None."""
Wrap = Callable[[Sequence[str]], list[str]]
"""Turns the agent's argument vector into the one that runs it confined (bubblewrap)."""


@dataclass(frozen=True, slots=True)
class Watchdogs:
    """The watchdogs of a run: seconds without output, seconds in all, the grace of a kill,
    and how long an agent that has said its last word may take to exit."""

    idle: float = DEFAULT_IDLE
    wall: float = DEFAULT_WALL
    grace: float = KILL_GRACE
    linger: float = LINGER


class Switch:
    """Stops runs in flight: :meth:`trip` kills every run watching it, with its reason."""

    def __init__(self) -> None:
        self.reason: str | None = None
        self._event = asyncio.Event()

    def trip(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason
            self._event.set()

    async def wait(self) -> str:
        await self._event.wait()
        return self.reason or "stopped"


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
) -> RunEnd:
    """Run ``agent`` once as ``session`` says, watched; never raises for the agent's failure."""
    run = _Run(agent, session, limits or Watchdogs(), guard, switch)
    return await run.go(wrap)


class _Run:
    """One run's state: the process, the meter, the watchdogs."""

    def __init__(
        self,
        agent: Agent,
        session: Session,
        limits: Watchdogs,
        guard: Guard | None,
        switch: Switch | None,
    ) -> None:
        self.agent, self.session, self.limits = agent, session, limits
        self.guard, self.switch = guard, switch
        self.parser = agent.parser()
        self.spent = Spent()
        self.killed: tuple[str, str] | None = None  # (kind, message)
        self.done: float | None = None  # when the agent said its last word (Done)
        self.marker = tree.marker(session.cwd, secrets.token_hex(6))
        self.started = self.last = time.monotonic()
        self.stderr = bytearray()
        self.proc: asyncio.subprocess.Process | None = None

    def kill(self, kind: str, message: str) -> None:
        if self.killed is None:
            self.killed = (kind, message)

    async def go(self, wrap: Wrap | None) -> RunEnd:
        try:
            launch = self.agent.launch(self.session)
            env = self._environment(launch)
            argv = list(launch.argv)
            if wrap is not None:
                argv = wrap(argv)
        except Exception as exc:  # an adapter's own failure is the generator's
            return self._outcome(None, Ending("", f"{self.agent.name}: cannot launch: {exc}"))
        try:
            self.proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE
                if launch.stdin is not None
                else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.session.cwd,
                env=env,
                start_new_session=True,
                preexec_fn=tree.die_with_parent,
            )
        except OSError as exc:
            error = f"{self.agent.name}: cannot start {argv[0]}: {exc.strerror or exc}"
            return self._outcome(None, Ending("", error))
        try:
            code = await self._watch(launch.stdin)
        finally:
            await asyncio.shield(self._end_tree())
        return self._outcome(code, self._ending(code))

    def _environment(self, launch: Launch) -> dict[str, str]:
        home = self.session.home
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
            "PATH": os.environ.get("PATH", os.defpath),
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
        env[tree.MARKER] = self.marker
        return env

    async def _watch(self, stdin: str | None) -> int:
        proc = self.proc
        assert proc is not None
        data = stdin.encode("utf-8", "surrogatepass") if stdin else b""
        feed = asyncio.ensure_future(write_and_close(proc.stdin, data))
        readers = [
            asyncio.ensure_future(self._read_stdout()),
            asyncio.ensure_future(self._read_stderr()),
        ]
        waited = asyncio.ensure_future(proc.wait())
        stop = asyncio.ensure_future(self.switch.wait()) if self.switch is not None else None
        try:
            while not waited.done():
                pending = {waited} | ({stop} if stop is not None else set())
                await asyncio.wait(pending, timeout=TICK, return_when=asyncio.FIRST_COMPLETED)
                self._check(stop)
                lingered = self.done is not None and time.monotonic() - self.done >= (
                    self.limits.linger
                )
                if self.killed is not None or lingered:
                    await asyncio.to_thread(
                        tree.kill_tree, proc.pid, self.marker, grace=self.limits.grace
                    )
                    break
            code = await waited
            await asyncio.to_thread(tree.kill_tree, None, self.marker, grace=self.limits.grace)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(5):
                    await asyncio.gather(*readers, return_exceptions=True)
            return code
        finally:
            for task in (feed, *readers, waited, *([stop] if stop is not None else [])):
                task.cancel()

    def _check(self, stop: asyncio.Future[str] | None) -> None:
        now = time.monotonic()
        name = self.agent.name
        if stop is not None and stop.done():
            self.kill("stop", f"{name}: {stop.result()}: killed with its process tree")
        elif now - self.last >= self.limits.idle:
            self.kill(
                "idle",
                f"{name}: no output for {self.limits.idle:g} s (--agent-idle): killed with its "
                "process tree",
            )
        elif now - self.started >= self.limits.wall:
            self.kill(
                "wall",
                f"{name}: still running after {self.limits.wall:g} s (--agent-timeout): killed "
                "with its process tree",
            )

    async def _end_tree(self) -> None:
        """Leave nothing running: the agent and anything it started (also on cancellation)."""
        pid = self.proc.pid if self.proc is not None else None
        if pid is not None and self.proc is not None and self.proc.returncode is None:
            await asyncio.to_thread(tree.kill_tree, pid, self.marker, grace=self.limits.grace)
            with contextlib.suppress(ProcessLookupError):
                await self.proc.wait()

    async def _read_stdout(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        stream, buffer, skipping = self.proc.stdout, b"", False
        while chunk := await stream.read(65536):
            self.last = time.monotonic()
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                if not skipping:
                    self._line(line)
                skipping = False
            if len(buffer) > MAX_LINE:  # an endless line: read its start, skip the rest
                if not skipping:
                    self._line(buffer[:MAX_LINE])
                buffer, skipping = b"", True
        if buffer and not skipping:
            self._line(buffer)

    async def _read_stderr(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        while chunk := await self.proc.stderr.read(65536):
            self.last = time.monotonic()
            self.stderr += chunk
            if len(self.stderr) > 2 * STDERR_TAIL:
                del self.stderr[:-STDERR_TAIL]

    def _line(self, raw: bytes) -> None:
        if self.killed is not None:
            return
        try:
            events = list(self.parser.line(raw.decode("utf-8", "replace").rstrip("\r")))
        except Exception as exc:
            self.kill("abort", f"{self.agent.name}: its adapter failed on a line: {exc}")
            return
        for event in events:
            if isinstance(event, Abort):
                self.kill("abort", f"{self.agent.name}: {event.reason}: killed")
            elif isinstance(event, Done):
                self.done = self.done or time.monotonic()
            elif isinstance(event, Spent):
                self.spent = self.spent + event
                reason = self.guard(self.spent) if self.guard is not None else None
                if reason is not None:
                    self.kill(
                        "budget", f"{self.agent.name}: {reason}: killed with its process tree"
                    )

    def _ending(self, code: int) -> Ending:
        tail = self.stderr[-STDERR_TAIL:].decode("utf-8", "replace")
        try:
            return self.parser.end(code, tail)
        except Exception as exc:
            return Ending("", f"{self.agent.name}: its adapter failed reading the end: {exc}")

    def _outcome(self, code: int | None, ending: Ending) -> RunEnd:
        usage = self.spent
        if ending.usage is not None:
            told = ending.usage
            usage = Spent(
                max(usage.input_tokens, told.input_tokens),
                max(usage.output_tokens, told.output_tokens),
                _larger(usage.cost, told.cost),
                max(usage.cache_read_tokens, told.cache_read_tokens),
                max(usage.cache_write_tokens, told.cache_write_tokens),
            )
        kind, error = self.killed if self.killed is not None else (None, ending.error)
        return RunEnd(
            message=ending.message,
            usage=usage,
            error=error,
            killed=kind,
            returncode=code,
            latency=time.monotonic() - self.started,
            model=ending.model,
        )


def _larger(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else max(a, b)
