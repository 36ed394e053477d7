"""Running a quest's repository source: the base it reads, then its items, in a tree of the
base held while they are read."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

from reins.quest import Quest, Seed
from reins.workspace.places import Places
from reins.workspace.remote import mirrored
from reins.workspace.repository import Repository
from reins.workspace.site import base_tree, settled_base


def found_items(
    quest: Quest, *, root: str, recorded: str | None, say: Callable[[str], None] = lambda _: None
) -> tuple[str, Iterator[Seed]]:
    """The base commit, and the items ``quest.found`` finds there (read as they are taken).

    ``recorded`` is the base the ledger recorded (None: none yet); ``root`` the workspaces'
    folder, whose base store the loop goes on to use; ``say`` hears of long steps (the
    project's environment built).

    Raises:
        ConfigError: the quest finds no items in a repository, or the base moved.
    """
    workspace, found = quest.workspace, quest.found
    assert workspace is not None and found is not None
    if workspace.remote is not None:  # this host's copy of the remote, where the loop keeps it
        places = Places(os.path.realpath(root))
        os.makedirs(places.own, exist_ok=True)
        repo = mirrored(workspace.remote, places)
    else:
        repo = Repository.find(workspace.repo)
    named = repo.commit(workspace.base)
    base = settled_base(recorded, named, workspace)

    def items() -> Iterator[Seed]:
        with base_tree(workspace, root=root, base=base, say=say) as tree:
            for seed in found.scan(tree):
                yield seed if isinstance(seed, Seed) else Seed(*seed)

    return base, items()
