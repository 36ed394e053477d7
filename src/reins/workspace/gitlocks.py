"""git's lock files in reins' own stores and trees: left by a reins killed while git ran there,
recognised as stale and cleared, so that no item's workspace or judge's tree stays dead.

git takes a file it is about to write by making ``<file>.lock`` (exclusively) and renames the
lock over the file when it is done; killed in between, it leaves the lock, and every later git
there fails (``Unable to create '…/index.lock': File exists``) until someone deletes it. reins
runs git only in folders of its own here (an item's index and store, a judge's tree's index;
never the user's repository), and only one reins works a given tree at a time: an item by its
lease in the ledger, a judge's tree by its ``flock``. So a lock there is stale unless a git
that reins started is still running on that tree. Every such git carries a marker naming the
tree (:func:`marking`, the marker of :mod:`reins.workspace.processes`): a git whose reins is
gone is ended first, and a lock is kept only while a git of a live reins works there.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterable

from reins.workspace import processes

SUFFIX = ".lock"
WAIT = 5.0  # seconds a git whose reins is gone gets to die once signalled


def marking(tree: str) -> dict[str, str]:
    """The environment entry that marks a git command reins runs on ``tree``."""
    return {processes.MARKER: processes.marker(tree, "git")}


def found(stores: Iterable[str], indexes: Iterable[str]) -> list[str]:
    """The lock files git left in ``stores`` (repositories of reins', their objects aside: git
    writes no lock there) and beside ``indexes`` (``<index>.lock``), sorted."""
    locks = [index + SUFFIX for index in indexes if os.path.lexists(index + SUFFIX)]
    for store in stores:
        for folder, dirs, files in os.walk(store):
            if folder == store:
                dirs[:] = [d for d in dirs if d != "objects"]
            locks += [os.path.join(folder, f) for f in files if f.endswith(SUFFIX)]
    return sorted(locks)


def clear(tree: str, *, stores: Iterable[str] = (), indexes: Iterable[str] = ()) -> list[str]:
    """Delete the stale lock files of ``tree`` (its ``stores`` and ``indexes``): those no git of
    a live reins may still hold. A git a dead reins started there is ended first. Returns the
    locks deleted (none while a live reins' git works on ``tree``); the caller must hold the
    tree (its lease or its flock)."""
    locks = found(stores, indexes)
    if not locks:
        return []
    prefix = f"{tree}#"
    ended = processes.end_leftovers(prefix)
    deadline = time.monotonic() + WAIT
    while any(processes.alive(p) for p in ended) and time.monotonic() < deadline:
        time.sleep(0.02)
    if processes.marked(prefix):  # a live reins' git, or one that would not die: not stale
        return []
    cleared = []
    for lock in locks:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(lock)
            cleared.append(lock)
    return cleared
