"""A pristine tree of the base revision, for a check that asks "does this fail at the base too?".

One detached worktree of the base commit per quest, under reins' own folder
(``<root>/.reins/base-<commit>``), made on first use under the repository's worktree lock and
reset before each use, so it holds exactly the base's files. It is never an item's workspace
and no agent works in it.
"""

from __future__ import annotations

import os
import shutil

from reins.values import Worktree
from reins.workspace.git import git
from reins.workspace.trees import OWN, Repository, locked


def pristine(tree: Worktree) -> str:
    """The folder of a clean worktree of ``tree.base`` (made, or reset, now).

    Raises:
        WorkspaceError: git failed.
    """
    repo = Repository.find(tree.repo)
    path = os.path.join(tree.root, OWN, f"base-{tree.base[:12]}")
    with locked(repo.common):
        if not os.path.isfile(os.path.join(path, ".git")):
            git(["worktree", "remove", "--force", "--force", path], cwd=tree.repo, check=False)
            shutil.rmtree(path, ignore_errors=True)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            git(["worktree", "add", "--quiet", "--detach", path, tree.base], cwd=tree.repo)
        else:
            git(["checkout", "--quiet", "--force", "--detach", tree.base], cwd=path)
            git(["clean", "--quiet", "-ffdx"], cwd=path)
    return path
