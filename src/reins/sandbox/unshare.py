"""Where bubblewrap cannot run: namespaces of a program's own with ``unshare``, on the host's
file system. Nothing is confined but the network and the processes, and every surface says so.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence


@functools.cache
def isolation() -> tuple[str, ...] | None:
    """The argv prefix that runs a program without network here, in a process namespace of its
    own where the host allows one (nothing it starts outlives it); None when none works."""
    unshare = shutil.which("unshare")
    if unshare is None or not sys.platform.startswith("linux"):
        return None
    alone = ("--pid", "--fork", "--kill-child", "--mount-proc")
    users: list[tuple[str, ...]] = [(unshare, "-c", "-n"), (unshare, "-r", "-n")]
    if os.geteuid() == 0:
        users.insert(0, (unshare, "-n"))
    return _first_working([*((*c, *alone) for c in users), *users])


def reaped(argv: Sequence[str]) -> list[str]:
    """``argv`` unconfined, but in a process namespace of its own where the host allows one."""
    return [*_reaper(), *argv]


@functools.cache
def _reaper() -> tuple[str, ...]:
    unshare = shutil.which("unshare")
    if unshare is None:
        return ()
    tail = ("--pid", "--fork", "--kill-child", "--mount-proc")
    found = _first_working([(unshare, *tail), (unshare, "--user", "--map-current-user", *tail)])
    return found or ()


def _first_working(candidates: list[tuple[str, ...]]) -> tuple[str, ...] | None:
    for prefix in candidates:
        try:
            probe = subprocess.run([*prefix, "true"], capture_output=True, timeout=10,
                                   stdin=subprocess.DEVNULL, env={"PATH": os.defpath})  # fmt: skip
        except (OSError, subprocess.SubprocessError):
            continue
        if probe.returncode == 0:
            return prefix
    return None
