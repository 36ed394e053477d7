"""One judgment's run: the answer's process and the tests' process, joined by two pipes.

The judge starts the answer's process (``harness.py answer``) and then the tests' process
(``harness.py tests``), each under the same :class:`~reins.packs.humaneval.confine.Confinement`
but in a sandbox of its own, so that the answer can reach the tests only through the values it
returns. Each gets its input through a file descriptor onto an unnamed temporary file (no path
to find on any disk), stdin closed, a clean environment and a working folder of its own. The
tests' process writes its report to a third descriptor the answer's process never holds. The
tests' process has ``timeout`` seconds from the moment it starts its test code (the official
harness's limit, measured as it measures it); the judge kills it ``GRACE`` seconds later
whatever it does, and ends the answer's process with it.

The verdict is read from that report alone, and a pass needs all of: the report carries the
nonce the judge drew for this run (given to the tests' process only), it says ``check``
returned, and the tests' process exited 0 within its time. An exit status, or anything printed,
is never a pass.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import IO, Any

from reins.checks._running import execute
from reins.errors import JudgeError
from reins.packs.humaneval.answer import Program
from reins.packs.humaneval.confine import POLICY, WORK, Confinement
from reins.packs.humaneval.problems import Problem
from reins.workspace.processes import die_with_parent

__all__ = ["GRACE", "Run", "Settings", "run"]

GRACE = 5.0
"""Seconds past the time limit before the judge kills the tests' process itself."""
REPORT_BYTES = 1 << 20
CHECK = "humaneval"


@dataclass(frozen=True, slots=True)
class Settings:
    """A run's limits: the tests' time (seconds), each process's memory (MiB) and confinement
    (``auto``, ``bwrap``, ``unshare`` or ``none``)."""

    timeout: float = 3.0
    memory_mb: int = 1024
    sandbox: str = "auto"


@dataclass(frozen=True, slots=True)
class Run:
    """How a run ended: the tests' report (``end`` is ``passed``, ``answer``, ``tests``,
    ``time`` or ``ended``), whether it passed, how the answer's process ended (its exit status,
    None when the judge had to kill it) and the confinement it ran under."""

    report: Mapping[str, Any]
    passed: bool
    answer_status: int | None
    confinement: Confinement


def run(problem: Problem, program: Program, settings: Settings, where: Confinement) -> Run:
    """Run ``program``'s answer against ``problem``'s tests.

    Raises:
        JudgeError: a process could not start, or the tests' process ended without its report
            (the judge's failure: the answer cannot reach that process).
    """
    from reins.packs.humaneval.problems import hidden

    nonce = secrets.token_hex(16)
    tests_in = {
        "prompt": problem.prompt,
        "test": problem.test,
        "entry_point": problem.entry_point,
        "nonce": nonce,
        "timeout": settings.timeout,
        "memory_mb": settings.memory_mb,
    }
    answer_in = {
        "programs": list(program.texts),
        "entry_point": problem.entry_point,
        "memory_mb": settings.memory_mb,
        "hidden": list(hidden()),
        "policy": POLICY,
    }
    with contextlib.ExitStack() as stack:
        tests_dir, answer_dir = (stack.enter_context(_folder(where)) for _ in range(2))
        tests_file = _given(stack.enter_context(tempfile.TemporaryFile()), tests_in)
        answer_file = _given(stack.enter_context(tempfile.TemporaryFile()), answer_in)
        report_file = stack.enter_context(tempfile.TemporaryFile())
        pipes = stack.enter_context(_Pipes())
        requests, replies = pipes.open(), pipes.open()
        answer_fds = (answer_file, requests[0], replies[1])
        answer = _start(where.argv(["answer", *map(str, answer_fds)]), answer_dir, answer_fds)
        try:
            pipes.close(requests[0], replies[1])  # the answer's ends: its process's alone now
            tests_fds = (tests_file, report_file.fileno(), requests[1], replies[0])
            ran = execute(
                where.argv(["tests", *map(str, tests_fds)]),
                cwd=tests_dir if not where.own_folder else tempfile.gettempdir(),
                env=_environment(where, tests_dir),
                timeout=settings.timeout + GRACE,
                keep=2000,
                check=CHECK,
                pass_fds=tests_fds,
            )
        finally:
            pipes.close(requests[1], replies[0])  # so that the answer reads the end of its calls
            status = _end(answer)
        report = _report(report_file, nonce)
    if report is None:
        if ran.timed_out:
            return Run({"end": "time", "killed": True}, False, status, where)
        raise JudgeError(
            CHECK,
            f"the tests' process ended without its report (exit status {ran.code}): "
            f"{ran.first_line()}",
        )
    passed = report.get("end") == "passed" and ran.code == 0 and not ran.timed_out
    return Run(report, passed, status, where)


@contextlib.contextmanager
def _folder(where: Confinement) -> Iterator[str]:
    """A process's working folder: the sandbox's own, or a temporary one the judge deletes."""
    if where.own_folder:
        yield WORK
        return
    with tempfile.TemporaryDirectory(prefix="reins-humaneval-") as path:
        yield path


def _given(handle: IO[bytes], data: object) -> int:
    """``handle`` (an unnamed temporary file) holding ``data`` as JSON, at its start: its
    descriptor."""
    handle.write(json.dumps(data).encode())
    handle.flush()
    handle.seek(0)
    return handle.fileno()


class _Pipes:
    """The run's pipes, each end closed once (a number closed twice may be another thread's)."""

    def __init__(self) -> None:
        self.held: set[int] = set()

    def open(self) -> tuple[int, int]:
        read, write = os.pipe()
        self.held.update((read, write))
        return read, write

    def close(self, *fds: int) -> None:
        for fd in fds:
            if fd in self.held:
                self.held.discard(fd)
                os.close(fd)

    def __enter__(self) -> _Pipes:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close(*list(self.held))


def _environment(where: Confinement, folder: str) -> dict[str, str]:
    home = WORK if where.own_folder else folder
    return {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": home, "TMPDIR": home}


def _start(argv: list[str], folder: str, fds: tuple[int, ...]) -> subprocess.Popen[bytes]:
    own = folder == WORK
    try:
        return subprocess.Popen(
            argv,
            cwd=tempfile.gettempdir() if own else folder,
            env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": folder, "TMPDIR": folder},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=die_with_parent,
            pass_fds=fds,
        )
    except OSError as exc:
        raise JudgeError(CHECK, f"cannot start {argv[0]}: {exc.strerror or exc}") from None


def _end(process: subprocess.Popen[bytes]) -> int | None:
    """The answer's exit status once it ends (it should, as soon as the tests' pipe closes);
    None when it had to be killed."""
    try:
        status: int | None = process.wait(timeout=1.0)
    except subprocess.TimeoutExpired:
        status = None
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)  # and whatever it left in its group
    process.wait()
    return status


def _report(handle: IO[bytes], nonce: str) -> dict[str, Any] | None:
    """The tests' report, or None when there is none or it is not this run's."""
    handle.seek(0)
    text = handle.read(REPORT_BYTES)
    try:
        report = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(report, dict) or not secrets.compare_digest(
        str(report.get("nonce", "")), nonce
    ):
        return None
    return report
