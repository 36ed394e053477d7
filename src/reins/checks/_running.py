"""Running the ``command`` check's program: its own process group, a time limit, bounded output."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import threading
from dataclasses import dataclass
from typing import IO

from reins.errors import JudgeError
from reins.workspace.processes import die_with_parent

_EXCEPTION = re.compile(r"\b\w*(?:Error|Exception)\b:")


@dataclass(frozen=True, slots=True)
class Ran:
    """How a run ended: its exit code (negative: killed by that signal), the tails of its
    output, and whether it ran past its time limit."""

    code: int
    out: str
    err: str
    timed_out: bool

    def first_line(self) -> str:
        """The line that says most of what went wrong (stderr before stdout): the first that
        names an exception (``ModuleNotFoundError: …``), else the first that says "error",
        else the first that says anything; rulers of ``=`` and ``_`` are not lines."""
        lines = [ln.strip(" =_-!*") for ln in (self.err + "\n" + self.out).splitlines()]
        lines = [ln for ln in lines if any(c.isalnum() for c in ln)]
        said = next((ln for ln in lines if _EXCEPTION.search(ln)), None)
        said = said or next((ln for ln in lines if "error" in ln.lower()), None)
        said = said or (lines[0] if lines else "")
        return said[:300] or "(no output)"


def clean_environment(home: str, **more: str) -> dict[str, str]:
    """The whole environment of a program reins runs to judge or to scan: the PATH, a HOME and
    TMPDIR of its own (``home``), UTF-8 the same on every host, then ``more``; nothing else of
    reins' (a provider's key among it)."""
    path = os.environ.get("PATH", os.defpath)
    return {"PATH": path, "HOME": home, "TMPDIR": home, "LANG": "C.UTF-8", **more}


def execute(
    argv: list[str],
    *,
    cwd: str,
    env: dict[str, str],
    timeout: float,
    keep: int,
    check: str,
    pass_fds: tuple[int, ...] = (),
) -> Ran:
    """Run ``argv`` in ``cwd``, keeping the last ``keep`` characters of each stream; the file
    descriptors ``pass_fds`` stay open in it (every other is closed).

    Raises:
        JudgeError: the program cannot start (named ``check``'s failure, never a verdict).
    """
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # one process group: a timeout kills its children too
            preexec_fn=die_with_parent,
            pass_fds=pass_fds,
        )
    except OSError as exc:
        raise JudgeError(check, f"cannot start {argv[0]}: {exc.strerror or exc}") from None
    assert proc.stdout is not None and proc.stderr is not None
    tails = [bytearray(), bytearray()]
    readers = [
        threading.Thread(target=_drain, args=(s, t, keep * 4), daemon=True)
        for s, t in zip((proc.stdout, proc.stderr), tails, strict=True)
    ]
    for reader in readers:
        reader.start()
    timed_out = False
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        _kill_group(proc.pid)
        proc.wait()
    for reader in readers:
        reader.join(timeout=5)  # a grandchild that left the group may hold a pipe open
    out, err = (t.decode("utf-8", "replace")[-keep:] for t in tails)
    return Ran(proc.returncode, out, err, timed_out)


def _drain(stream: IO[bytes], tail: bytearray, keep: int) -> None:
    """Read ``stream`` to its end, keeping only its last ``keep`` bytes (memory stays bounded
    whatever the program prints)."""
    while chunk := stream.read1(65536):  # type: ignore[attr-defined]
        tail += chunk
        if len(tail) > 2 * keep:
            del tail[:-keep]
    stream.close()


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # already gone
        os.killpg(pid, signal.SIGKILL)
