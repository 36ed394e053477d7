"""The one process runner of every generator that is a program: a text CLI and a coding agent.

- Input goes on stdin, which is then closed (or stdin is ``/dev/null``): never in the argument
  list, where other local users could read it and the OS caps its length, and no program waits
  forever on an open stdin.
- The process runs in a session of its own with a marker in its environment
  (:mod:`reins.workspace.processes`), and whenever it ends, or is ended, its whole tree goes
  with it: its process group, the tools it started in sessions of their own, the daemons that
  double-forked away. It dies with reins too (``PR_SET_PDEATHSIG`` on Linux).
- Watchdogs (:class:`Watchdogs`): no output for ``idle`` seconds, or ``wall`` seconds in all,
  and it is ended; so it is when a :class:`Switch` trips, when its reader says so
  (:meth:`Watch.stop`: a budget spent, an adapter reading it as stuck, too much output), and
  ``linger`` seconds after its reader heard its last word (:meth:`Watch.last_word`), since CLIs
  have hung after their result.
- Its stdout goes to a reader as it comes (:class:`Lines` splits it, :class:`Collected` keeps
  it, bounded); of stderr only the last bytes are kept, for an error message.

:func:`run` is the single-shot form the text CLIs use: all of stdout, within a timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from reins.workspace import processes as tree

MAX_STDOUT = 16 * 1024 * 1024
"""Bytes of stdout :func:`run` keeps; a process that writes more is ended."""
STDERR_TAIL = 8192
TICK = 0.1  # seconds between two looks at the watchdogs


@dataclass(frozen=True, slots=True)
class Watchdogs:
    """When a run is ended: after ``idle`` seconds without output (None: never), ``wall``
    seconds in all, and ``linger`` seconds after its last word; ``grace`` is the time between
    SIGTERM and SIGKILL."""

    idle: float | None = None
    wall: float = 1800.0
    grace: float = 3.0
    linger: float = 10.0


class Switch:
    """Stops runs in flight: :meth:`trip` ends every run watching it, with its reason."""

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
class Stopped:
    """Why reins ended a run: ``kind`` is ``idle``, ``wall``, ``stop`` or a reader's own word
    (``budget``, ``abort``, ``output``), ``message`` says it to a person."""

    kind: str
    message: str


@dataclass(frozen=True, slots=True)
class Watched:
    """How a run went: its exit status (a signal's, negative, when it was ended), the tail of
    its stderr, why reins ended it if it did, and how long it took."""

    returncode: int
    stderr: str
    stopped: Stopped | None
    seconds: float


class Watch:
    """What a reader may tell the run it reads: end it, or that it has said its last word."""

    def __init__(self) -> None:
        self.stopped: Stopped | None = None
        self.said_last_word: float | None = None

    def stop(self, kind: str, message: str) -> None:
        """End the run (the first reason given is the one kept)."""
        if self.stopped is None:
            self.stopped = Stopped(kind, message)

    def last_word(self) -> None:
        """The program has given its answer; it has ``linger`` seconds left to exit."""
        self.said_last_word = self.said_last_word or time.monotonic()


Reader = Callable[[bytes, Watch], None]
"""Called with each chunk of stdout as it comes, and the run's :class:`Watch`."""


class Lines:
    """A :data:`Reader` that hands each line of stdout to ``on_line`` (without its newline); of
    a line longer than ``max_line`` bytes only its start is handed on, the rest is skipped."""

    def __init__(self, on_line: Callable[[bytes, Watch], None], max_line: int = 1024 * 1024):
        self.on_line, self.max_line = on_line, max_line
        self._buffer, self._skipping = b"", False

    def __call__(self, chunk: bytes, watch: Watch) -> None:
        if not chunk:  # the end of stdout: the last line, if it had no newline
            if self._buffer and not self._skipping:
                self.on_line(self._buffer, watch)
            self._buffer = b""
            return
        *lines, self._buffer = (self._buffer + chunk).split(b"\n")
        for line in lines:
            if not self._skipping:
                self.on_line(line, watch)
            self._skipping = False
        if len(self._buffer) > self.max_line:  # an endless line: hand on its start only
            if not self._skipping:
                self.on_line(self._buffer[: self.max_line], watch)
            self._buffer, self._skipping = b"", True


class Collected:
    """A :data:`Reader` that keeps all of stdout, up to ``limit`` bytes; past it, the run is
    ended (``output``)."""

    def __init__(self, limit: int) -> None:
        self.limit, self.size, self._chunks = limit, 0, list[bytes]()

    def __call__(self, chunk: bytes, watch: Watch) -> None:
        self.size += len(chunk)
        if self.size > self.limit:
            watch.stop("output", f"more than {self.limit} bytes on stdout")
        elif chunk:
            self._chunks.append(chunk)

    def text(self) -> str:
        return b"".join(self._chunks).decode("utf-8", "replace")


async def watched(
    argv: Sequence[str],
    *,
    stdin: bytes | None,
    read: Reader,
    limits: Watchdogs,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    switch: Switch | None = None,
    name: str = "",
    flags: Mapping[str, str] | None = None,
) -> Watched:
    """Run ``argv`` watched, ``stdin`` its input (None: ``/dev/null``), ``env`` its whole
    environment (None: reins' own), ``name`` the word for it in a kill's message and ``flags``
    the option that sets each watchdog there (``{"idle": "--agent-idle"}``).

    Raises:
        OSError: it could not be started (no such file, not executable).
    """
    marker = tree.marker(os.path.abspath(cwd or os.getcwd()), secrets.token_hex(6))
    environment = {**(os.environ if env is None else env), tree.MARKER: marker}
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL if stdin is None else asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd,
        env=environment,
        start_new_session=True,
        preexec_fn=tree.die_with_parent,
    )
    run = _Run(proc, marker, read, limits, name or os.path.basename(argv[0]), flags or {})
    try:
        code = await run.watch(stdin or b"", switch)
    finally:  # also on cancellation: leave nothing running
        await asyncio.shield(run.end_tree())
    return Watched(code, run.stderr_tail(), run.watch_.stopped, time.monotonic() - run.started)


class OutputTooLarge(Exception):
    """The process wrote more than :data:`MAX_STDOUT` bytes to stdout."""


@dataclass(frozen=True, slots=True)
class Finished:
    """A single-shot process that ran to its end: its exit status, all of its stdout, the tail
    of its stderr."""

    returncode: int
    stdout: str
    stderr: str


async def run(
    argv: Sequence[str],
    *,
    stdin: bytes,
    timeout: float,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    grace: float = 2.0,
) -> Finished:
    """Run ``argv`` once with ``stdin`` as its input and keep all it writes to stdout.

    Raises:
        TimeoutError: it ran past ``timeout`` seconds; its whole tree was ended.
        OutputTooLarge: stdout grew past :data:`MAX_STDOUT`; its whole tree was ended.
        OSError: it could not be started (no such file, not executable).
    """
    out = Collected(MAX_STDOUT)
    done = await watched(
        argv, stdin=stdin, read=out, limits=Watchdogs(wall=timeout, grace=grace), cwd=cwd, env=env
    )
    if done.stopped is not None and done.stopped.kind == "wall":
        raise TimeoutError(done.stopped.message)
    if done.stopped is not None:
        raise OutputTooLarge(done.stopped.message)
    return Finished(done.returncode, out.text(), done.stderr)


async def _write_and_close(stream: asyncio.StreamWriter | None, data: bytes) -> None:
    if stream is None:
        return
    # a process may exit without reading all of its input; that is its answer, not our error
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stream.write(data)
        await stream.drain()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stream.close()
        await stream.wait_closed()


class _Run:
    """One run's state: the process, its marker, the watch its reader tells, the clocks."""

    def __init__(
        self,
        proc: asyncio.subprocess.Process,
        marker: str,
        read: Reader,
        limits: Watchdogs,
        name: str,
        flags: Mapping[str, str],
    ) -> None:
        self.proc, self.marker, self.read, self.limits, self.name = proc, marker, read, limits, name
        self.flags = {kind: f" ({flag})" for kind, flag in flags.items()}
        self.watch_ = Watch()
        self.started = self.last = time.monotonic()
        self.stderr = bytearray()

    async def watch(self, stdin: bytes, switch: Switch | None) -> int:
        proc = self.proc
        feed = asyncio.ensure_future(_write_and_close(proc.stdin, stdin))
        readers = [asyncio.ensure_future(self._stdout()), asyncio.ensure_future(self._stderr())]
        waited = asyncio.ensure_future(proc.wait())
        stop = asyncio.ensure_future(switch.wait()) if switch is not None else None
        try:
            # The exit status is set when the process exits; wait() also waits for its pipes,
            # which a process it left behind may hold open: so the status is what is watched.
            while proc.returncode is None:
                pending = {waited} | ({stop} if stop is not None else set())
                await asyncio.wait(pending, timeout=TICK, return_when=asyncio.FIRST_COMPLETED)
                self._look(stop)
                if self.watch_.stopped is not None or self._lingered():
                    await self._kill(proc.pid)
                    break
            await self._kill(None)  # whatever it left behind in its tree goes with it
            with contextlib.suppress(TimeoutError):  # a leftover that shed its marker
                async with asyncio.timeout(self.limits.grace + 5):
                    await asyncio.gather(waited, *readers, return_exceptions=True)
            code = proc.returncode
            return code if code is not None else await waited
        finally:
            for task in (feed, *readers, waited, *([stop] if stop is not None else [])):
                task.cancel()

    def _look(self, stop: asyncio.Future[str] | None) -> None:
        now, limits, name = time.monotonic(), self.limits, self.name
        if stop is not None and stop.done():
            self.watch_.stop("stop", f"{name}: {stop.result()}: killed with its process tree")
        elif limits.idle is not None and now - self.last >= limits.idle:
            flag = self.flags.get("idle", "")
            self.watch_.stop(
                "idle", f"{name}: no output for {limits.idle:g} s{flag}: killed with its "
                "process tree",
            )  # fmt: skip
        elif now - self.started >= limits.wall:
            flag = self.flags.get("wall", "")
            self.watch_.stop(
                "wall", f"{name}: still running after {limits.wall:g} s{flag}: killed with its "
                "process tree",
            )  # fmt: skip

    def _lingered(self) -> bool:
        said = self.watch_.said_last_word
        return said is not None and time.monotonic() - said >= self.limits.linger

    async def _kill(self, pid: int | None) -> None:
        await asyncio.to_thread(tree.kill_tree, pid, self.marker, grace=self.limits.grace)

    async def end_tree(self) -> None:
        if self.proc.returncode is None:
            await self._kill(self.proc.pid)
            with contextlib.suppress(ProcessLookupError):
                await self.proc.wait()

    async def _stdout(self) -> None:
        assert self.proc.stdout is not None
        while chunk := await self.proc.stdout.read(65536):
            self.last = time.monotonic()
            self._hand_on(chunk)
        self._hand_on(b"")

    def _hand_on(self, chunk: bytes) -> None:
        if self.watch_.stopped is not None:
            return  # a run being ended is read no further
        try:
            self.read(chunk, self.watch_)
        except Exception as exc:  # a reader's own failure ends the run, it never hangs it
            self.watch_.stop("abort", f"{self.name}: its output could not be read: {exc}")

    async def _stderr(self) -> None:
        assert self.proc.stderr is not None
        while chunk := await self.proc.stderr.read(65536):
            self.last = time.monotonic()
            self.stderr += chunk
            if len(self.stderr) > 2 * STDERR_TAIL:
                del self.stderr[:-STDERR_TAIL]

    def stderr_tail(self) -> str:
        return self.stderr[-STDERR_TAIL:].decode("utf-8", "replace")
