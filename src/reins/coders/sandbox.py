"""How an agent is confined: under bubblewrap by default (``--sandbox bwrap``), or, asked for
with ``--sandbox none``, unconfined but in a process namespace of its own.

Under bubblewrap the whole file system is read-only to the agent but for its workspace, its
HOME and a private ``/tmp``. Some folders are not even readable (:class:`Walls`): reins' own
folder of the quest (the other items' workspaces, the judge's trees, the stores; of it the
agent sees only the two object folders its ``.git`` borrows from, read-only), the git folder of
the user's repository (its branches hold other items' results), the quest's hidden tests, and
the ledger's files. The user's checkout and the real HOME are read-only. A program the launch
needs from a hidden folder or from under ``/tmp`` (the agent's script, its interpreter and
virtual environment, an npm program's files, a ``PATH`` folder) is shown read-only. The
network is left alone (a model server on loopback must stay reachable). ``--unshare-pid`` puts
the agent in a process namespace of its own, whose processes all end when the agent does, and
``--die-with-parent`` ends it with reins: nothing it started outlives the turn or a SIGKILL of
reins.

Unconfined, the agent is still started in a process namespace of its own where the host allows
(``unshare --pid --fork --kill-child``, as root or in a user namespace), for the same reason.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

from reins.errors import ConfigError

BWRAP = "bwrap"


@dataclass(frozen=True, slots=True)
class Walls:
    """What a confined agent may not read (``hidden`` folders and files) and what of that it
    is shown read-only anyway (``shown``)."""

    hidden: tuple[str, ...] = ()
    hidden_files: tuple[str, ...] = ()
    shown: tuple[str, ...] = ()


def bwrap() -> str:
    """The bubblewrap program, checked to work here.

    Raises:
        ConfigError: it is not installed, or cannot make a sandbox on this host.
    """
    found = shutil.which(BWRAP)
    if found is None:
        raise ConfigError(
            "coding agents run under bubblewrap by default (--sandbox bwrap), and it is not "
            "installed: apt-get install bubblewrap (Debian, Ubuntu), dnf install bubblewrap "
            "(Fedora); or run them unconfined, which you must say: --sandbox none"
        )
    said = _probe(found)
    if said:
        raise ConfigError(
            f"coding agents run under bubblewrap by default, and it cannot make a sandbox here "
            f"({said}): allow unprivileged user namespaces (sysctl "
            "kernel.unprivileged_userns_clone=1), or run them unconfined: --sandbox none"
        )
    return found


@functools.cache
def _probe(program: str) -> str:
    """Why bubblewrap cannot run a program here ("" when it can)."""
    argv = [program, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--unshare-pid", "--die-with-parent", "true"]  # fmt: skip
    try:
        done = subprocess.run(argv, capture_output=True, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        return str(exc)
    lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return "" if done.returncode == 0 else (lines[-1] if lines else f"exit {done.returncode}")


def confine(argv: Sequence[str], *, cwd: str, home: str, walls: Walls) -> list[str]:
    """``argv`` run under bubblewrap, writing only to ``cwd`` and ``home``, behind ``walls``.

    Mounts are made in order, each over the ones before: the read-only root, a fresh ``/dev``
    and a private ``/tmp``; what the launch needs from under ``/tmp`` or ``/dev`` (a program in
    ``/dev/shm``); the walls (a folder hidden under a
    ``tmpfs``, a file under ``/dev/null``), so that nothing shown before reveals them; what the
    walls show anyway (``walls.shown`` only: a file the launch names inside a wall stays
    hidden); and last the two writable folders.
    """
    out = [bwrap(), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    hidden = [h for h in dict.fromkeys(walls.hidden) if h != "/" and os.path.isdir(h)]
    for path in dict.fromkeys(needed(argv)):  # under the private /tmp or the fresh /dev
        if os.path.exists(path) and (_below(path, "/tmp") or _below(path, "/dev")):
            out += ["--ro-bind", path, path]
    for path in sorted(hidden, key=lambda p: p.count(os.sep)):  # outer folders first
        out += ["--tmpfs", path]
    for path in dict.fromkeys(walls.hidden_files):
        if os.path.isfile(path):
            out += ["--ro-bind", os.devnull, path]
    for path in dict.fromkeys(walls.shown):  # never what the launch names: data, not programs
        if os.path.exists(path) and any(_below(path, h) for h in hidden):
            out += ["--ro-bind", path, path]
    for path in dict.fromkeys([cwd, home]):
        out += ["--bind", path, path]
    out += ["--die-with-parent", "--unshare-pid", "--new-session", "--chdir", cwd, "--"]
    return [*out, *argv]


def reaped(argv: Sequence[str]) -> list[str]:
    """``argv`` unconfined, but in a process namespace of its own where the host allows one."""
    return [*_reaper(), *argv]


@functools.cache
def _reaper() -> tuple[str, ...]:
    unshare = shutil.which("unshare")
    if unshare is None:
        return ()
    tail = ("--pid", "--fork", "--kill-child", "--mount-proc")
    candidates = [(unshare, *tail), (unshare, "--user", "--map-current-user", *tail)]
    for prefix in candidates:
        try:
            done = subprocess.run([*prefix, "true"], capture_output=True, timeout=10,
                                  stdin=subprocess.DEVNULL)  # fmt: skip
        except (OSError, subprocess.SubprocessError):
            continue
        if done.returncode == 0:
            return prefix
    return ()


def _below(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def needed(argv: Sequence[str]) -> list[str]:
    """The folders a launch needs to see: the folder of each file ``argv`` names (a program, a
    script; a folder named as an argument is data, not shown), the folder of what a link
    points to (``node_modules/.bin/claude`` is one), a whole ``node_modules`` on either path
    (a program installed by npm reads its siblings), a script's interpreter (its ``#!`` line,
    through ``env`` too) with its virtual environment, and the folders on ``PATH``."""
    found = []
    for arg in [*argv, *_interpreters(argv)]:
        if not (os.path.isabs(arg) and os.path.isfile(arg)):
            continue
        for path in dict.fromkeys([arg, os.path.realpath(arg)]):
            folder = os.path.dirname(path)
            found.append(folder)
            parts = path.split(os.sep)
            if "node_modules" in parts:
                found.append(os.sep.join(parts[: parts.index("node_modules") + 1]))
            if os.path.basename(folder) == "bin":  # a virtual environment's: its packages too
                found.append(os.path.dirname(folder))
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if os.path.isabs(folder) and os.path.isdir(folder):
            found.append(os.path.realpath(folder))
            if os.path.basename(folder) in ("bin", "shims"):  # pyenv's shims need pyenv
                found.append(os.path.dirname(os.path.realpath(folder)))
    return found


def _interpreters(argv: Sequence[str]) -> list[str]:
    """The interpreter each script ``argv`` names starts with (its ``#!`` line; for
    ``#!/usr/bin/env NAME``, NAME found on ``PATH``)."""
    found = []
    for arg in argv:
        if not os.path.isfile(arg):
            continue
        try:
            with open(arg, "rb") as f:
                first = f.readline(256)
        except OSError:
            continue
        if first.startswith(b"#!"):
            words = first[2:].decode("utf-8", "replace").split()
            if words:
                found.append(words[0])
            if len(words) > 1 and os.path.basename(words[0]) == "env":
                which = shutil.which(words[1])
                if which:
                    found.append(which)
    return found
