"""Run one CLI process: input on stdin, its own process group, a timeout that kills the group.

The prompt never travels in the argument list, where other local users could read it and the
OS caps its length. Output is bounded: stdout up to :data:`MAX_STDOUT`, and only the last
:data:`STDERR_TAIL` bytes of stderr are kept, for the error message.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Sequence
from dataclasses import dataclass

MAX_STDOUT = 16 * 1024 * 1024
STDERR_TAIL = 4096
KILL_GRACE = 2.0  # seconds between SIGTERM and SIGKILL


@dataclass(frozen=True, slots=True)
class Finished:
    """A process that ran to its end."""

    returncode: int
    stdout: str
    stderr: str  # the tail only


class OutputTooLarge(Exception):
    """The process wrote more than :data:`MAX_STDOUT` bytes to stdout."""


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


async def _stop(proc: asyncio.subprocess.Process) -> None:
    """End the whole process group: SIGTERM, a grace period, then SIGKILL."""
    _signal_group(proc.pid, signal.SIGTERM)
    try:
        async with asyncio.timeout(KILL_GRACE):
            await proc.wait()
    except TimeoutError:
        pass
    _signal_group(proc.pid, signal.SIGKILL)
    await proc.wait()


async def feed(stream: asyncio.StreamWriter | None, data: bytes) -> None:
    """Write ``data`` to a process's stdin and close it (shared by the coding agents' runner)."""
    if stream is None:
        return
    # a process may exit without reading all of its input; that is its answer, not our error
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stream.write(data)
        await stream.drain()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stream.close()
        await stream.wait_closed()


async def _read_all(stream: asyncio.StreamReader | None, limit: int) -> bytes:
    if stream is None:
        return b""
    chunks: list[bytes] = []
    size = 0
    while chunk := await stream.read(65536):
        size += len(chunk)
        if size > limit:
            raise OutputTooLarge(f"more than {limit} bytes on stdout")
        chunks.append(chunk)
    return b"".join(chunks)


async def _read_tail(stream: asyncio.StreamReader | None, keep: int) -> bytes:
    if stream is None:
        return b""
    tail = b""
    while chunk := await stream.read(65536):
        tail = (tail + chunk)[-keep:]
    return tail


async def run(
    argv: Sequence[str],
    *,
    stdin: bytes,
    timeout: float,
    cwd: str | None = None,
    env: dict[str, str] | None = None,
) -> Finished:
    """Run ``argv`` with ``stdin`` as its input, in a new session (its own process group).

    Raises:
        TimeoutError: it ran past ``timeout`` seconds; the whole group was killed.
        OutputTooLarge: stdout grew past :data:`MAX_STDOUT`; the whole group was killed.
        OSError: it could not be started (no such file, not executable).
    """
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd,
        env=env,
        start_new_session=True,
    )
    feed_task = asyncio.ensure_future(feed(proc.stdin, stdin))
    out_task = asyncio.ensure_future(_read_all(proc.stdout, MAX_STDOUT))
    err_task = asyncio.ensure_future(_read_tail(proc.stderr, STDERR_TAIL))
    tasks = (feed_task, out_task, err_task)
    finished = False
    try:
        async with asyncio.timeout(timeout):
            await asyncio.gather(*tasks)
            returncode = await proc.wait()
        finished = True
    finally:
        if not finished:  # timeout, too much output, cancellation: leave nothing running
            for task in tasks:
                task.cancel()
            await asyncio.shield(_stop(proc))
            await asyncio.gather(*tasks, return_exceptions=True)
        else:  # single-shot: whatever the CLI left behind in its group goes with it
            _signal_group(proc.pid, signal.SIGKILL)
    out, err = out_task.result(), err_task.result()
    return Finished(
        returncode=returncode,
        stdout=out.decode("utf-8", "replace"),
        stderr=err.decode("utf-8", "replace"),
    )
