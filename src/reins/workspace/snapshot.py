"""What an agent changed: its worktree committed on the item's branch, and the diff from the base.

The snapshot stages everything the agent left — changed, new and deleted files, binary ones
too, as ``git add -A`` sees them (ignored files stay out) — into a copy of the worktree's own
index (so unchanged files are not read again), writes the tree, and commits it on the item's
branch on top of whatever the agent committed itself. The worktree's index then becomes that
tree's, so the worktree is clean on its branch. The diff is ``git diff --binary`` from the
base commit: any bytes, binary files as git's own base85 patches, so the branch and the diff
can each be applied elsewhere.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from dataclasses import dataclass

from reins.errors import WorkspaceError
from reins.values import Worktree
from reins.workspace.trees import Worktrees


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One turn's work: the commit on the item's branch and the diff from the base to it."""

    commit: str
    diff: bytes
    files: int  # how many files the diff touches

    @property
    def changed(self) -> bool:
        return bool(self.diff)


def snapshot(trees: Worktrees, tree: Worktree, *, message: str) -> Snapshot:
    """Commit the worktree as it stands on its branch; return the commit and its diff.

    Raises:
        WorkspaceError: git failed (the worktree is gone, the disk is full).
    """
    admin = trees.admin(tree.path)
    index = os.path.join(admin, "index")
    staging = os.path.join(admin, "reins-index")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(staging)
    if os.path.exists(index):
        shutil.copyfile(index, staging)
    env = {"GIT_INDEX_FILE": staging}
    # --ignore-errors: a file the agent made unreadable is left out, not the whole snapshot
    trees.run(tree.path, ["add", "--all", "--ignore-errors", "--", "."], env=env)
    new_tree = trees.run(tree.path, ["write-tree"], env=env).decode().strip()
    head, head_tree = _head(trees, tree)
    if head_tree == new_tree:
        commit = head
    else:
        args = ["commit-tree", new_tree, "-p", head, "-m", message]
        commit = trees.run(tree.path, args).decode().strip()
    trees.run(tree.path, ["update-ref", f"refs/heads/{tree.branch}", commit])
    trees.run(tree.path, ["symbolic-ref", "HEAD", f"refs/heads/{tree.branch}"])
    os.replace(staging, index)
    with contextlib.suppress(FileNotFoundError):  # a killed agent's git may leave its lock
        os.unlink(index + ".lock")
    diff = trees.run(tree.path, ["diff", *DIFF_OPTIONS, tree.base, commit, "--"])
    return Snapshot(commit, diff, _files(diff))


DIFF_OPTIONS = ("--binary", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames")


def _head(trees: Worktrees, tree: Worktree) -> tuple[str, str]:
    """The commit the worktree stands on (the agent may have committed or moved HEAD), and
    its tree."""
    try:
        out = trees.run(tree.path, ["rev-parse", "--verify", "HEAD^{commit}", "HEAD^{tree}"])
    except WorkspaceError:  # HEAD broken by the agent: its branch's commit is the parent
        ref = f"refs/heads/{tree.branch}"
        out = trees.run(tree.path, ["rev-parse", f"{ref}^{{commit}}", f"{ref}^{{tree}}"])
    commit, tree_id = out.decode().split()
    return commit, tree_id


def _files(diff: bytes) -> int:
    """How many files a ``git diff`` touches: one ``diff --git`` header each."""
    return diff.count(b"\ndiff --git ") + diff.startswith(b"diff --git ")
