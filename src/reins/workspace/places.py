"""Where reins keeps a coding quest's files: one folder of its own, ``root``, outside the user's
checkout.

::

    root/<slug>/                  an item's workspace: the agent's, with a .git of its own
    root/.reins/base-<commit>.git the base store: the base commit and its history, nothing else
    root/.reins/items/<slug>.git  reins' own store of an item: its turns' commits
    root/.reins/index/<slug>      the index of an item's workspace (what reins checked out)
    root/.reins/free/ws-<token>   a free workspace, with its index: the next item's folder
    root/.reins/judge/<n>/        the judge's trees, each reused from turn to turn
    root/.reins/home/<slug>/      the HOME of an agent's run, removed after it
    root/.reins/notes/<slug>.json which item a workspace belongs to
    root/.reins/land-<commit>.git the integrations of ``reins land`` from a base: a ref a branch
    root/.reins/land.lock         held while ``reins land`` runs
    root/.reins/remote.git        this host's copy of ``[workspace] remote`` (its refs fetched)
    root/.reins/hidden/<tree>/    hidden tests read from a git ref, by their folder's git tree
    root/.reins/lock              held while the base store is made

Everything under ``root/.reins`` is reins' and is hidden from a sandboxed agent: it sees its
own workspace, and, read-only, the object folders its ``.git`` borrows from.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import threading
from collections.abc import Iterator
from dataclasses import dataclass

from reins.workspace.names import slug

OWN = ".reins"
_THREADS: dict[str, threading.Lock] = {}
_GUARD = threading.Lock()


@dataclass(frozen=True, slots=True)
class Places:
    """The paths under one quest's ``root`` (absolute, resolved)."""

    root: str

    @property
    def own(self) -> str:
        return os.path.join(self.root, OWN)

    def workspace(self, key: str) -> str:
        return os.path.join(self.root, slug(key))

    def base_store(self, base: str) -> str:
        return os.path.join(self.own, f"base-{base}.git")

    def item_store(self, key: str) -> str:
        return os.path.join(self.own, "items", f"{slug(key)}.git")

    def index(self, key: str) -> str:
        return os.path.join(self.own, "index", slug(key))

    @property
    def free(self) -> str:
        return os.path.join(self.own, "free")

    def home(self, key: str) -> str:
        return os.path.join(self.own, "home", slug(key))

    def note(self, name: str) -> str:
        return os.path.join(self.own, "notes", f"{name}.json")

    @property
    def notes(self) -> str:
        return os.path.join(self.own, "notes")

    @property
    def judge(self) -> str:
        return os.path.join(self.own, "judge")

    @property
    def removed(self) -> str:
        return os.path.join(self.own, "removed")

    def land_store(self, base: str) -> str:
        return os.path.join(self.own, f"land-{base}.git")

    @property
    def land_lock(self) -> str:
        return os.path.join(self.own, "land.lock")

    @property
    def mirror(self) -> str:
        return os.path.join(self.own, "remote.git")

    @property
    def hidden(self) -> str:
        return os.path.join(self.own, "hidden")

    @property
    def lock_file(self) -> str:
        return os.path.join(self.own, "lock")


class Hold:
    """An exclusive ``flock`` on a file, held by this process until :meth:`release`, which any
    of its threads may call (a judge's tree is cleaned up by another thread than judged in)."""

    def __init__(self, thread_lock: threading.Lock, fd: int) -> None:
        self._thread_lock, self._fd = thread_lock, fd

    @classmethod
    def take(cls, path: str, *, wait: bool = True) -> Hold | None:
        """The hold of ``path`` (made if missing), or None when another holds it and ``wait``
        is off."""
        with _GUARD:
            thread_lock = _THREADS.setdefault(path, threading.Lock())
        if not thread_lock.acquire(blocking=wait):
            return None
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            thread_lock.release()
            raise
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            os.close(fd)
            thread_lock.release()
            return None
        return cls(thread_lock, fd)

    def release(self) -> None:
        os.close(self._fd)
        self._thread_lock.release()


@contextlib.contextmanager
def locked(path: str, *, wait: bool = True) -> Iterator[bool]:
    """Hold an exclusive ``flock`` on ``path`` (made if missing), shared by every reins process
    and thread; yields False (holding nothing) when ``wait`` is off and another holds it."""
    hold = Hold.take(path, wait=wait)
    try:
        yield hold is not None
    finally:
        if hold is not None:
            hold.release()


def write_whole(path: str, text: str) -> None:
    """Write ``path`` whole (folders made), replacing what was there in one step."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temporary = f"{path}.{secrets.token_hex(3)}.tmp"
    with open(temporary, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(temporary, path)
