"""What becomes of a coding item once it locks: its result lands, its workspace is kept or goes
back to the pool, off the turn's path.

The landing (a fetch into the user's repository onto ``reins/<key>``) and the giving back of
the workspace run in a thread of their own, one at a time, while the slot goes on to its next
item; the run waits for them at its end (:meth:`Landing.close`). What a crash cuts short is
done by the next run when it starts (:meth:`Landing.tidy`).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from reins.errors import NotFound, WorkspaceError
from reins.store.model import Attempt, Item, State
from reins.store.protocol import Store
from reins.workspace.workspaces import Workspaces


def last_commit(attempt: Attempt | None) -> str | None:
    return attempt.notes.commit if attempt is not None else None


class Landing:
    """The locked items of one run on ``spaces``, under the keep policy ``keep``."""

    def __init__(self, spaces: Workspaces, keep: str) -> None:
        self.spaces, self.keep = spaces, keep
        self.after = ThreadPoolExecutor(max_workers=1, thread_name_prefix="reins-land")

    def tidy(self, store: Store) -> int:
        """Land the result of, and apply the keep policy to, each workspace whose item locked
        while no run could (a crash between the record and the landing)."""
        tidied = 0
        for key in self.spaces.ours().values():
            try:
                item, log = store.snapshot(key)
            except NotFound:
                continue
            last = log[-1] if log else None
            commit = last_commit(last)
            landed = commit is None or self.spaces.landed(key, commit)
            if item.state.terminal and not (landed and not self._removes(item.state)):
                self._settle(item, last)
                tidied += 1
        return tidied

    def _removes(self, state: State) -> bool:
        keep = self.keep
        return keep == "none" or (keep == "failed" and state is State.PASS)

    def locked(self, item: Item, attempt: Attempt | None, say: Callable[[str], None]) -> None:
        """Item ``item`` locked: land it and apply the keep policy, off the turn's path (in a
        thread of its own, one landing at a time); ``say`` gets what the person must know.
        Called on the event loop; :meth:`close` waits for what is under way."""
        loop = asyncio.get_running_loop()

        def settle() -> None:
            try:
                said = self._settle(item, attempt)
            except Exception as exc:  # a landing's failure is said, never lost with its thread
                said = f"{item.key}: its result could not land: {exc}"
            if said:
                loop.call_soon_threadsafe(say, said)

        self.after.submit(settle)

    def close(self) -> None:
        """Wait for the landings under way (the run's end)."""
        self.after.shutdown(wait=True)

    def _settle(self, item: Item, attempt: Attempt | None) -> str | None:
        """Bring ``item``'s last commit to the user's repository (onto its branch), then give
        its workspace back to the pool unless the keep policy keeps it. Returns a note when the
        result cannot land (a branch of that name that is not reins'): the person's to sort
        out, and the workspace is kept."""
        spaces = self.spaces
        commit = last_commit(attempt)
        if commit is not None and os.path.isdir(spaces.places.item_store(item.key)):
            try:
                spaces.land(item.key, commit)
            except WorkspaceError as exc:
                return f"{item.key}: its result stays in {spaces.path_of(item.key)}: {exc}"
        if self._removes(item.state):
            spaces.remove(item.key)
        else:  # kept, for a person who may change it: its next turn resets it whole
            spaces.forget(item.key)
        return None
