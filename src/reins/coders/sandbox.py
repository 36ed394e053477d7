"""``--sandbox bwrap``: an agent whose writes are confined to its worktree and its HOME.

Under bubblewrap the whole file system is read-only to the agent but for its worktree, its
HOME, a private ``/tmp``, and the two parts of the repository's git folder that git inside a
linked worktree needs to stage and commit objects: the worktree's own git folder
(``.git/worktrees/<name>``: its index and HEAD) and ``.git/objects``. No branch or tag is
writable: the agent cannot move your branches, nor its own (reins commits its work on its
branch after the run). The network is left alone (a model server on loopback must stay
reachable). ``--unshare-pid`` puts the agent in a process namespace of its own and
``--die-with-parent`` ends it with reins. A path the launch names under ``/tmp`` (a script)
is bound read-only, since the private ``/tmp`` would hide it, and so are the interpreter its
``#!`` line names (with its virtual environment) and an npm program's link target and
``node_modules``: a project checked out under ``/tmp`` keeps its own programs.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence

from reins.errors import ConfigError

BWRAP = "bwrap"


def bwrap() -> str:
    """The bubblewrap program.

    Raises:
        ConfigError: it is not installed.
    """
    found = shutil.which(BWRAP)
    if found is None:
        raise ConfigError(
            "--sandbox bwrap needs bubblewrap, which is not installed: apt-get install "
            "bubblewrap (Debian, Ubuntu), dnf install bubblewrap (Fedora), or run without it"
        )
    return found


def confine(
    argv: Sequence[str],
    *,
    cwd: str,
    home: str,
    writable: Sequence[str],
    readable: Sequence[str],
) -> list[str]:
    """``argv`` run under bubblewrap, writing only to ``cwd``, ``home`` and ``writable``.

    ``readable`` are folders to show read-only on top of the private ``/tmp`` (the
    repository, when it lives there).
    """
    out = [bwrap(), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    shown = [*readable, *_under_tmp(argv)]
    for path in dict.fromkeys(shown):
        if path.startswith("/tmp/") and os.path.exists(path):
            out += ["--ro-bind", path, path]
    for path in dict.fromkeys([cwd, home, *writable]):
        out += ["--bind", path, path]
    out += ["--die-with-parent", "--unshare-pid", "--new-session", "--chdir", cwd, "--"]
    return [*out, *argv]


def _under_tmp(argv: Sequence[str]) -> list[str]:
    """The folders of the files ``argv`` names under /tmp (a script a test wrote there, or the
    program of a project checked out there): each file's folder, the folder of what a symbolic
    link points to (``node_modules/.bin/claude`` is one), and a whole ``node_modules`` on
    either path, since a program installed by npm reads its siblings."""
    found = []
    for arg in [*argv, *_interpreters(argv)]:
        if not (arg.startswith("/tmp/") and os.path.exists(arg)):
            continue
        for path in dict.fromkeys([arg, os.path.realpath(arg)]):
            folder = path if os.path.isdir(path) else os.path.dirname(path)
            found.append(folder)
            parts = path.split(os.sep)
            if "node_modules" in parts:
                found.append(os.sep.join(parts[: parts.index("node_modules") + 1]))
            if os.path.basename(folder) == "bin":  # a virtual environment's: its packages too
                found.append(os.path.dirname(folder))
    return found


def _interpreters(argv: Sequence[str]) -> list[str]:
    """The interpreter each script ``argv`` names starts with (its ``#!`` line)."""
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
    return found
