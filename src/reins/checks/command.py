"""``command``: run a program on the submission (for code quests: "the tests pass").

Each run gets a fresh temporary folder holding the submission in ``file`` (text as written,
JSON as JSON), runs ``run`` there as an argument vector (no shell), and deletes the folder. In
``run``, ``{file}`` is the submission file's path, ``{dir}`` the folder and ``{base}`` the
quest folder; a program named with a ``/`` is relative to the quest folder, any other is looked
up on ``PATH``.

- The environment is clean: ``PATH``, ``LANG=C.UTF-8``, and ``HOME``/``TMPDIR`` set to the
  folder; no other
  variable of the judge (so no secret) reaches the program.
- No network, as far as the host allows: on Linux the program runs in a new network namespace
  (``unshare -n`` as root, else an unprivileged user namespace ``unshare -c -n``). Where neither
  works (no ``unshare``, user namespaces disabled, not Linux) it runs with the host's network;
  ``require_isolation = true`` makes that the judge's failure instead.
- Output is captured and capped (the last ``output_chars`` characters of each stream are kept).
- An exit code outside ``pass_codes`` is a fact with the tail of the output; so is running past
  ``timeout`` seconds (the whole process group is killed): an infinite loop is the submission's
  fault. A program that cannot start (not found, not executable) is the judge's failure
  (:class:`~reins.errors.JudgeError`).

Not a sandbox: the program can read what the judge's user can read. Run untrusted code in a
container or a VM.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path as FilePath
from typing import IO

from reins.checks._common import excerpt
from reins.checks.spec import CWD, BuiltCheck, CheckSpec, QuestFolder
from reins.errors import JudgeError, ParamValueError
from reins.gate.rule import Context
from reins.values import Fact

NAME = "command"


@functools.cache
def isolation() -> tuple[str, ...] | None:
    """The argv prefix that runs a program without network here, or None when none works."""
    unshare = shutil.which("unshare")
    if unshare is None or not sys.platform.startswith("linux"):
        return None
    candidates: list[tuple[str, ...]] = [(unshare, "-c", "-n"), (unshare, "-r", "-n")]
    if os.geteuid() == 0:
        candidates.insert(0, (unshare, "-n"))
    for prefix in candidates:
        try:
            probe = subprocess.run(
                [*prefix, "true"], capture_output=True, timeout=10, env={"PATH": os.defpath}
            )
        except (OSError, subprocess.SubprocessError):
            continue
        if probe.returncode == 0:
            return prefix
    return None


@dataclass(frozen=True, slots=True)
class CommandParams:
    run: tuple[str, ...]
    """the argument vector; {file}, {dir} and {base} are replaced"""
    file: str = "submission.txt"
    """the name of the file the submission is written to"""
    timeout: float = 10.0
    """seconds before the run is killed (a fact)"""
    pass_codes: tuple[int, ...] = (0,)
    """the exit codes that pass"""
    output_chars: int = 4000
    """how much of each output stream to keep"""
    network: bool = False
    """let the program use the network"""
    require_isolation: bool = False
    """refuse to run where the network cannot be cut"""
    base: QuestFolder = CWD


def _build(params: CommandParams) -> BuiltCheck:
    argv = params.run
    if not argv or not argv[0]:
        raise ParamValueError(NAME, "run", "expected a non-empty argument vector")
    name = params.file
    if not name or "/" in name or "\\" in name or name in (".", ".."):
        raise ParamValueError(NAME, "file", f"expected a plain file name, got {name!r}")
    if params.timeout <= 0:
        raise ParamValueError(NAME, "timeout", "expected a number of seconds above 0")
    if not params.pass_codes:
        raise ParamValueError(NAME, "pass_codes", "expected at least one exit code")
    if params.output_chars < 1:
        raise ParamValueError(
            NAME, "output_chars", f"expected at least 1, got {params.output_chars}"
        )
    return Run(
        argv=argv,
        file=name,
        timeout=params.timeout,
        pass_codes=frozenset(params.pass_codes),
        keep=params.output_chars,
        base=os.path.abspath(params.base),
        network=params.network,
        require_isolation=params.require_isolation,
    )


class Run:
    """The built check: one run of the program per submission."""

    def __init__(
        self,
        *,
        argv: tuple[str, ...],
        file: str,
        timeout: float,
        pass_codes: frozenset[int],
        keep: int,
        base: str,
        network: bool,
        require_isolation: bool,
    ) -> None:
        self.argv, self.file, self.timeout = argv, file, timeout
        self.pass_codes, self.keep, self.base = pass_codes, keep, base
        self.network, self.require_isolation = network, require_isolation

    def __call__(self, ctx: Context) -> Fact | None:
        with tempfile.TemporaryDirectory(prefix="reins-command-") as folder:
            target = os.path.join(folder, self.file)
            FilePath(target).write_bytes(_content(ctx.submission))
            argv = self._argv(folder, target)
            env = {
                "PATH": os.environ.get("PATH", os.defpath),
                "HOME": folder,
                "TMPDIR": folder,
                "LANG": "C.UTF-8",  # UTF-8 everywhere, the same on every host
            }
            code, out, err, timed_out = self._execute(argv, folder, env)
        shown = excerpt(" ".join(self.argv), 120)
        if timed_out:
            return Fact(
                where=f"command {shown}",
                expected=f"to finish within {self.timeout:g} s",
                actual="still running, killed" + _tail(out, err),
            )
        if code in self.pass_codes:
            return None
        status = f"killed by signal {-code}" if code < 0 else f"exit code {code}"
        wanted = ", ".join(map(str, sorted(self.pass_codes)))
        return Fact(
            where=f"command {shown}",
            expected=f"exit code {wanted}",
            actual=status + _tail(out, err),
        )

    def _argv(self, folder: str, target: str) -> list[str]:
        values = {"{file}": target, "{dir}": folder, "{base}": self.base}
        argv = []
        for arg in self.argv:
            for placeholder, value in values.items():
                arg = arg.replace(placeholder, value)
            argv.append(arg)
        program = argv[0]
        if "/" in program:
            found = os.path.join(self.base, program)
            if not (os.path.isfile(found) and os.access(found, os.X_OK)):
                raise JudgeError(NAME, f"{program} is not an executable file in {self.base}")
        else:
            which = shutil.which(program, path=os.environ.get("PATH", os.defpath))
            if which is None:
                raise JudgeError(NAME, f"{program!r} was not found on PATH")
            found = which
        prefix: tuple[str, ...] = ()
        if not self.network:
            prefix = isolation() or ()
            if not prefix and self.require_isolation:
                raise JudgeError(NAME, "cannot run without network on this host (no unshare)")
        return [*prefix, found, *argv[1:]]

    def _execute(
        self, argv: list[str], folder: str, env: dict[str, str]
    ) -> tuple[int, str, str, bool]:
        try:
            proc = subprocess.Popen(
                argv,
                cwd=folder,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,  # one process group: a timeout kills its children too
            )
        except OSError as exc:
            raise JudgeError(NAME, f"cannot start {argv[0]}: {exc.strerror or exc}") from None
        assert proc.stdout is not None and proc.stderr is not None
        tails = [bytearray(), bytearray()]
        readers = [
            threading.Thread(target=_drain, args=(s, t, self.keep * 4), daemon=True)
            for s, t in zip((proc.stdout, proc.stderr), tails, strict=True)
        ]
        for reader in readers:
            reader.start()
        timed_out = False
        try:
            proc.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            _kill_group(proc.pid)
            proc.wait()
        for reader in readers:
            reader.join(timeout=5)  # a grandchild that left the group may hold a pipe open
        out, err = (t.decode("utf-8", "replace")[-self.keep :] for t in tails)
        return proc.returncode, out, err, timed_out


def _content(submission: object) -> bytes:
    if isinstance(submission, str):
        return submission.encode("utf-8", "surrogatepass")
    return json.dumps(submission, ensure_ascii=False).encode("utf-8", "surrogatepass")


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


def _tail(out: str, err: str, limit: int = 600) -> str:
    """The end of each output stream, for the fact (a failing test's report is at the end)."""
    parts = []
    for name, text in (("stderr", err), ("stdout", out)):
        text = text.strip()
        if text:
            parts.append(f"\n{name}: " + (text if len(text) <= limit else "…" + text[-limit:]))
    return "".join(parts)


COMMAND = CheckSpec(
    name=NAME,
    summary="a program run on the submission in a temporary folder exits with a passing code",
    params=CommandParams,
    build=_build,
)
