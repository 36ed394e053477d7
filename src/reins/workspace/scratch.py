"""reins' temporary folders: each named for the process that made it, so that a run's start
removes those of runs that died (a SIGKILL skips every cleanup) and none of a live run's.

A folder is ``$TMPDIR/reins-<kind>-<owner>-<random>``, the owner ``<pid namespace>.<pid>.<start
time>`` (:mod:`reins.workspace.processes`: a process id alone is reused once its process is
gone). :func:`sweep` deletes the folders whose owner is in this pid namespace and no longer
runs; one made in another namespace (another container sharing ``/tmp``) is never judged.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterator

from reins.workspace import processes

PREFIX = "reins-"
NAMED = re.compile(r"^reins-[a-z]+-(\d+)\.(\d+)\.(\d+)-")


def owner() -> str:
    """This process as a folder's name records it."""
    pid = os.getpid()
    return f"{processes.pid_namespace() or 0}.{pid}.{processes.start_time(pid) or 0}"


@contextlib.contextmanager
def folder(kind: str) -> Iterator[str]:
    """A new private folder in the system's temporary folder, deleted when the block ends (or,
    should this process be killed first, by the next run's :func:`sweep`)."""
    path = tempfile.mkdtemp(prefix=f"{PREFIX}{kind}-{owner()}-")
    try:
        yield path
    finally:
        remove(path)


def sweep(where: str | None = None) -> list[str]:
    """Delete the folders of reins' in ``where`` (the system's temporary folder) whose owner
    has died. Returns those deleted."""
    where = where or tempfile.gettempdir()
    try:
        names = os.listdir(where)
    except OSError:
        return []
    ours = processes.pid_namespace() or "0"
    gone = []
    for name in names:
        named = NAMED.match(name)
        if named is None or named.group(1) != ours or ours == "0":
            continue
        pid, start = int(named.group(2)), int(named.group(3))
        if processes.start_time(pid) == start:  # its maker still runs
            continue
        path = os.path.join(where, name)
        if os.path.isdir(path) and not os.path.islink(path):
            remove(path)
            gone.append(path)
    return gone


def remove(path: str) -> None:
    """Delete the folder ``path``, whatever the code that ran in it did to its permissions."""
    shutil.rmtree(path, ignore_errors=True)
    if not os.path.lexists(path):
        return
    for folder, dirs, _files in os.walk(path):  # a folder made unreadable or unwritable
        with contextlib.suppress(OSError):
            os.chmod(folder, stat.S_IRWXU)
        for name in dirs:
            with contextlib.suppress(OSError):
                if not os.path.islink(os.path.join(folder, name)):
                    os.chmod(os.path.join(folder, name), stat.S_IRWXU)
    shutil.rmtree(path, ignore_errors=True)
