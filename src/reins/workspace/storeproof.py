"""Whether a store of reins' own holds only the objects git made: proven before it is read;
and a judgment's own object folder, fresh each time.

git does not check an object against its name when it reads one, so a store an agent run
unconfined could write is not trusted as it stands. A store is proven by ``git fsck`` (every
object hashed again, nothing missing) once, and again whenever a file of its object folder
changed since (a name, size, time or inode that differs: the change time cannot be set back).
A store that fails is the judge's error, never a verdict: it is named, to be removed and made
again from the repository.
"""

from __future__ import annotations

import os
import threading

from reins.errors import WorkspaceError
from reins.workspace import hidden_tests
from reins.workspace.git import git, last_line

_PROVEN: dict[str, tuple[tuple[str, int, int, int, int], ...]] = {}
_LOCK = threading.Lock()


def signature(store: str) -> tuple[tuple[str, int, int, int, int], ...]:
    """Every file and folder of ``store``'s object folder: (path, size, mtime, ctime, inode)."""
    found = []
    top = os.path.join(store, "objects")
    for folder, dirs, files in os.walk(top):
        for name in (*dirs, *files):
            path = os.path.join(folder, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            found.append((path[len(top) :], st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))
    return tuple(sorted(found))


def prove(store: str) -> None:
    """Prove ``store`` whole (see the module), or say what to do.

    Raises:
        WorkspaceError: an object of it is not what its name says, or one is missing.
    """
    seen = signature(store)
    with _LOCK:
        if _PROVEN.get(store) == seen:
            return
    checked = ["--git-dir=" + store, "fsck", "--full", "--strict", "--no-dangling",
               "--no-progress"]  # fmt: skip
    done = git(checked, cwd=os.path.dirname(store) or ".", check=False)
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").splitlines()
        first = next((ln for ln in said if ln.startswith(("error", "fatal", "missing"))), None)
        raise WorkspaceError(
            f"reins' store {store} holds objects git did not make ({first or last_line(done)}): a "
            "process outside reins changed it (an agent run with --sandbox none?). Remove "
            "the folder and run again: reins makes it anew from your repository"
        )
    with _LOCK:
        if signature(store) == seen:  # nothing changed while git read it
            _PROVEN[store] = seen


def slot_objects(index: str) -> str:
    """The object folder of the slot whose index (or next index) is ``index``."""
    return index.split(".index", 1)[0] + ".objects"


def fresh(objects: str) -> None:
    """An empty object folder at ``objects``: nothing a judgment reads from it but what the
    judgment wrote (a planted object under the name of a blob the patch makes would stand in
    for it: git never writes an object it finds already there)."""
    hidden_tests.wipe(objects)
