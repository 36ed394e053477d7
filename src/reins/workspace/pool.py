"""Free workspaces: folders checked out once and handed from item to item, so that an item's
first turn resets a folder in place (only the files that differ are written) instead of
checking out the whole repository.

A free folder is ``root/.reins/free/ws-<token>``, with its index beside it
(``ws-<token>.index``, describing what the folder holds). An item takes one by renaming it to
its own name (``root/<slug>``), which is atomic: two processes never take the same one, and no
lock is held. A locked item whose folder the keep policy does not keep gives it back the same
way. Folders for the next items are made ahead, in threads, while agents run
(:meth:`Pool.make_ahead`); an item that finds none free waits for one being made rather than
checking out a second.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import threading
import time
from collections.abc import Callable

from reins.workspace.places import Places

PREFIX = "ws-"
MAKING = ".making"
HOLDS = ".holds"  # as reins.workspace.workspaces names it: what the folder holds
STALE = 3600.0
MAKERS = 2


class Pool:
    """The free folders of one quest's ``root``."""

    def __init__(self, places: Places) -> None:
        self.folder = places.free
        self._making = 0
        self._changed = threading.Condition()

    def take(self, into: str, index: str) -> bool:
        """Move a free folder to ``into`` and its index to ``index``; False when none is free
        and none is being made in this process."""
        with self._changed:
            while True:
                if self._take_one(into, index):
                    return True
                if self._making == 0:
                    return False
                self._changed.wait()

    def _take_one(self, into: str, index: str) -> bool:
        try:
            names = sorted(os.listdir(self.folder))
        except FileNotFoundError:
            return False
        for name in names:
            if not name.startswith(PREFIX) or "." in name:  # an index, a note, one being made
                continue
            free = os.path.join(self.folder, name)
            try:
                os.rename(free, into)  # atomic: another process may have been first
            except (FileNotFoundError, NotADirectoryError):
                continue
            os.makedirs(os.path.dirname(index), exist_ok=True)
            for suffix in ("", HOLDS):  # the index, and the note of what the folder holds
                try:
                    os.replace(free + ".index" + suffix, index + suffix)
                except FileNotFoundError:  # none: the next reset reads every file
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(index + suffix)
            return True
        return False

    def give(self, path: str, index: str) -> None:
        """Give the folder at ``path`` (with its index) back to the pool."""
        os.makedirs(self.folder, exist_ok=True)
        free = os.path.join(self.folder, PREFIX + secrets.token_hex(6))
        for suffix in (HOLDS, ""):  # these first: a taker takes them after the folder
            with contextlib.suppress(FileNotFoundError):
                os.replace(index + suffix, free + ".index" + suffix)
        os.rename(path, free)
        with self._changed:
            self._changed.notify_all()

    def count(self) -> int:
        """How many folders are free, or being made by this process, now."""
        try:
            names = os.listdir(self.folder)
        except FileNotFoundError:
            names = []
        free = [n for n in names if n.startswith(PREFIX) and "." not in n]
        return len(free) + self._making

    def _drop_stale(self) -> None:
        """Delete what a make cut short by a crash left (a folder half made, an hour old)."""
        try:
            names = os.listdir(self.folder)
        except FileNotFoundError:
            return
        now = time.time()
        for name in names:
            path = os.path.join(self.folder, name)
            with contextlib.suppress(OSError):
                if MAKING in name and now - os.lstat(path).st_mtime > STALE:
                    if os.path.isdir(path) and not os.path.islink(path):
                        shutil.rmtree(path, ignore_errors=True)
                    else:
                        os.unlink(path)

    def make_ahead(self, wanted: int, fill: Callable[[str, str], str]) -> list[threading.Thread]:
        """Start making folders until ``wanted`` are free: each made by ``fill(path, index)``
        (which returns the commit it checked out) under a name no taker takes, then renamed
        into the pool, by at most :data:`MAKERS` threads (more checkouts at once only share
        the disk and the cores). Returns the threads."""
        self._drop_stale()
        count = max(0, wanted - self.count())
        with self._changed:
            self._making += count
        shares = [count // MAKERS + (n < count % MAKERS) for n in range(MAKERS)]
        threads = [
            threading.Thread(
                target=self._make_some, args=(fill, n), name="reins-make-ahead", daemon=True
            )
            for n in shares
            if n
        ]
        for thread in threads:
            thread.start()
        return threads

    def _make_some(self, fill: Callable[[str, str], str], count: int) -> None:
        for _ in range(count):
            self._make(fill)

    def _make(self, fill: Callable[[str, str], str]) -> None:
        os.makedirs(self.folder, exist_ok=True)
        name = os.path.join(self.folder, PREFIX + secrets.token_hex(6))
        path, index = name + MAKING, name + MAKING + ".index"
        try:
            os.makedirs(path)
            held = fill(path, index)
            with open(name + ".index" + HOLDS, "w", encoding="ascii") as f:
                f.write(held + "\n")
            os.replace(index, name + ".index")
            os.rename(path, name)
        except Exception:  # a folder not made is made when an item needs it
            shutil.rmtree(path, ignore_errors=True)
            with contextlib.suppress(OSError):
                os.unlink(index)
        finally:
            with self._changed:
                self._making -= 1
                self._changed.notify_all()
