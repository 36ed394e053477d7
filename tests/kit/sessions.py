"""The console sessions of the docs, run as a reader pastes them: in bash, in a folder of their own.

A session is a ```console block: ``$ COMMAND`` lines (a line ending in ``\\`` goes on to the
next), each followed by what it prints, stdout and stderr together as a terminal shows them.
Sybil (https://sybil.readthedocs.io) finds the blocks and their ``<!-- skip: next "why" -->``
markers; this module runs them.

- A block that shows output is a **transcript**: each command's output must match what the
  block shows under it, after masking (below). A ``…`` line stands for any lines, ``…`` inside
  a line for any text. A command with nothing under it must print nothing.
- A block that shows no output at all is a **list of commands**: each must exit 0, unless the
  next command is ``echo $?``, which then shows its code.

Masked on both sides, so that a run on another day, machine or folder still matches: elapsed
times and rates (``in 0:02, 0.3 turns/s``), clock times, git hashes and lease tokens (7 or
more hex digits; a hash the block shows is bound to the one printed there, and replaced by it
in the commands that follow, as a reader would), and the session's folder (a path
``/tmp/NAME`` of the block stands for it). A loop run with ``--concurrency N`` finishes its
turns in any order: runs of ``turn …`` lines are compared as sets.

Each session runs in one bash process (so ``cd``, ``export`` and ``$?`` carry over from one
command to the next) with ``reins`` this checkout's, ``REINS_DRIVER=ann`` (the name the docs
show), a HOME and TMPDIR inside the session's folder, and nothing else of the caller's
environment but ``PATH`` and ``PYTHONPATH``.
"""

from __future__ import annotations

import os
import re
import secrets
import select
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ELLIPSIS = "…"
HEX = re.compile(r"\b[0-9a-f]{7,64}\b")
# Elapsed times and rates, clock times: they differ on every run.
TIMES = [
    (re.compile(r"\bin \d+:\d\d(?::\d\d)?, [\d.]+ turns/s"), "in <elapsed>, <rate> turns/s"),
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z?"), "<time>"),
    (re.compile(r"\b\d\d:\d\d UTC\b"), "<time> UTC"),
]
DOC_FOLDER = re.compile(r"/tmp/[\w.-]+")
CONCURRENT = re.compile(r"(?:--concurrency|-c)[ =]([2-9]|\d\d)")


@dataclass(frozen=True, slots=True)
class Step:
    """One ``$`` command of a block and the lines the block shows under it."""

    command: str
    shown: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Ran:
    """What one command printed (stdout and stderr as one stream) and its exit code."""

    printed: str
    code: int


def steps(block: str) -> list[Step]:
    """The commands of ``block`` with the output shown under each."""
    found: list[tuple[list[str], list[str]]] = []
    going_on = False
    for line in block.splitlines():
        if going_on:
            found[-1][0].append(line)
        elif line.startswith("$ "):
            found.append(([line[2:]], []))
        elif found:
            found[-1][1].append(line)
        else:
            raise ValueError(f"a console block must start with a `$ ` command: {line!r}")
        going_on = line.endswith("\\") and not found[-1][1]
    return [Step("\n".join(command), tuple(shown)) for command, shown in found]


def is_transcript(block: list[Step]) -> bool:
    return any(step.shown for step in block)


def environment(folder: Path) -> dict[str, str]:
    """The environment a session runs in: this checkout's reins first on PATH, little else."""
    bin_ = folder / ".session-bin"
    bin_.mkdir(exist_ok=True)
    shim(bin_ / "reins", f'exec {sys.executable} -m reins.cli "$@"')
    if shutil.which("sqlite3") is None:  # the docs forge a ledger row with the sqlite3 CLI
        code = (
            "import sqlite3,sys; d=sqlite3.connect(sys.argv[1]); d.execute(sys.argv[2]); d.commit()"
        )
        shim(bin_ / "sqlite3", f'exec {sys.executable} -c "{code}" "$@"')
    for name in ("home", "tmp"):
        (folder / name).mkdir(exist_ok=True)
    return {
        "PATH": f"{bin_}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
        "HOME": str(folder / "home"),
        "TMPDIR": str(folder / "tmp"),
        "USER": "ann",
        "REINS_DRIVER": "ann",
        "LANG": "C.UTF-8",
        "PYTHONUNBUFFERED": "1",  # stdout and stderr in the order a terminal shows them
        "GIT_AUTHOR_NAME": "Ann",
        "GIT_AUTHOR_EMAIL": "ann@example.org",
        "GIT_COMMITTER_NAME": "Ann",
        "GIT_COMMITTER_EMAIL": "ann@example.org",
    }


def shim(path: Path, line: str) -> None:
    path.write_text(f"#!/bin/sh\n{line}\n", encoding="utf-8")
    path.chmod(0o755)


class Shell:
    """One bash process in ``folder``, fed one command at a time (``with Shell(f) as sh``)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.nonce = secrets.token_hex(8)
        self.buffer = b""
        self.process = subprocess.Popen(
            ["bash", "--noprofile", "--norc"],
            cwd=folder,
            env=environment(folder),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its whole process group is ended with it
        )

    def __enter__(self) -> Shell:
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        assert self.process.stdout is not None
        self.process.stdout.close()

    def run(self, command: str, timeout: float) -> Ran:
        """Run ``command`` as a reader would type it; what it printed and its exit code.

        Its stdin is /dev/null (it would read the next commands otherwise); a group, not a
        subshell, so that `cd` and `export` hold for the commands after it. The code is kept
        and given back, so that `echo $?` sees the command's, not printf's.
        """
        assert self.process.stdin is not None and self.process.stdout is not None
        end = f"__rc=$?; printf '\\n{self.nonce} %d\\n' $__rc; (exit $__rc)"
        self.process.stdin.write(f"{{ {command}\n}} </dev/null\n{end}\n".encode())
        self.process.stdin.flush()
        found = re.compile(rf"\n{self.nonce} (\d+)\n".encode())
        deadline = time.monotonic() + timeout
        while (done := found.search(self.buffer)) is None:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.process.stdout], [], [], max(left, 0))
            assert ready, f"`{command}` did not end within {timeout} s"
            chunk = os.read(self.process.stdout.fileno(), 65536)
            assert chunk, f"bash ended during `{command}`: {self.buffer.decode(errors='replace')}"
            self.buffer += chunk
        printed, self.buffer = self.buffer[: done.start()], self.buffer[done.end() :]
        return Ran(printed.decode("utf-8", errors="replace"), int(done.group(1)))


def masked(text: str, folder: str | None = None) -> str:
    """``text`` with what differs between runs masked (hashes are left to :func:`pattern`)."""
    if folder is not None:
        text = text.replace(folder, "<folder>")
    else:
        text = DOC_FOLDER.sub("<folder>", text)
    for found, mask in TIMES:
        text = found.sub(mask, text)
    return "\n".join(line.rstrip() for line in text.splitlines()).strip("\n")


def unordered_turns(lines: list[str]) -> list[str]:
    """``lines`` with each run of ``turn …`` lines sorted: a concurrent loop's order."""
    out: list[str] = []
    run_: list[str] = []
    for line in [*lines, ""]:
        if line.startswith("turn "):
            run_.append(line)
            continue
        out += sorted(run_)
        run_ = []
        out.append(line)
    return out[:-1]


def pattern(shown: list[str]) -> tuple[re.Pattern[str], list[str]]:
    """A regular expression for the lines shown, and the hashes it captures, in order."""
    hashes: list[str] = []
    lines = []
    for line in shown:
        if line.strip() == ELLIPSIS:
            lines.append(r"(?:[^\n]*\n)*?")
            continue
        parts = []
        for piece in re.split(rf"({HEX.pattern}|{ELLIPSIS})", line):
            if piece == ELLIPSIS:
                parts.append(r"[^\n]*")
            elif HEX.fullmatch(piece):
                hashes.append(piece)
                parts.append(r"([0-9a-f]{7,64})")
            else:
                parts.append(re.escape(piece))
        lines.append("".join(parts) + r"\n")
    return re.compile("".join(lines)), hashes


def check(block: list[Step], folder: Path, timeout: float = 120) -> None:
    """Run ``block`` in ``folder`` and check it against what it shows (see the module).

    Raises:
        AssertionError: a command printed other than the block shows, or exited non-zero in a
            list of commands.
    """
    bound: dict[str, str] = {}
    transcript = is_transcript(block)
    with Shell(folder) as shell:
        for i, step in enumerate(block):
            result = shell.run(bind(step.command, bound), timeout)
            if transcript:
                compare(step, result, str(folder), bound)
                continue
            shows_code = i + 1 < len(block) and block[i + 1].command.strip() == "echo $?"
            assert result.code == 0 or shows_code, (step.command, result.code, result.printed)


def bind(command: str, bound: dict[str, str]) -> str:
    return HEX.sub(lambda m: bound.get(m.group(0), m.group(0)), command)


def compare(step: Step, result: Ran, folder: str, bound: dict[str, str]) -> None:
    shown = masked("\n".join(step.shown)).splitlines()
    printed = masked(result.printed, folder).splitlines()
    if CONCURRENT.search(step.command):
        shown, printed = unordered_turns(shown), unordered_turns(printed)
    regex, hashes = pattern(shown)
    text = "".join(line + "\n" for line in printed)
    found = regex.fullmatch(text)
    assert found is not None, (
        f"`{step.command}` printed, masked:\n{text}\n--- where the doc shows:\n" + "\n".join(shown)
    )
    for said, got in zip(hashes, found.groups(), strict=True):
        assert bound.setdefault(said, got) == got, (step.command, said, got)
