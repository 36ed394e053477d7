"""Hidden tests kept in git (``[workspace] hidden = "refs/reins/hidden:tests"``): read from a
ref into reins' own folder, where the judge's trees take them as from any folder.

::

    root/.reins/hidden/<tree>/    the files of the ref's folder, by that folder's git tree

The ref is read in the repository the workspaces come from: the user's, or with ``[workspace]
remote`` this host's copy of the remote (which fetches its ``refs/heads``, ``refs/tags`` and
``refs/reins`` at every run's start), so every host judges by the tests the remote holds, and
a new commit on the ref is what the next run judges by. The files are written by git
(``read-tree`` into a work tree of reins', with an index of its own): never into an agent's
workspace, never into a store an agent's ``.git`` borrows. An agent's git holds the base's
history and nothing else (:mod:`reins.workspace.basestore`): the ref's commit is not in it,
and a ref whose folder is (a commit of the base's history, say) is refused, since every agent
could read it there. A file of the folder that the base's history once held elsewhere is as
readable as the history is: keep hidden tests out of it.
"""

from __future__ import annotations

import os
import shutil

from reins.errors import ConfigError
from reins.workspace.git import git
from reins.workspace.places import Places, locked
from reins.workspace.repository import Repository
from reins.workspace.spec import HiddenRef

FETCHED = ("refs/heads/", "refs/tags/", "refs/reins/")
"""The refs a host's copy of the remote holds (:data:`reins.workspace.remote.REFSPECS`)."""


def read(hidden: HiddenRef, repo: Repository, places: Places, base_store: str, *,
         remote: bool) -> str:  # fmt: skip
    """The folder holding the hidden tests of ``hidden`` in ``repo`` (with ``remote``: this
    host's copy of the remote), read into ``places``' own folder now unless already there.

    Raises:
        ConfigError: the ref or its folder is not there, is not a folder, or the base's
            history (``base_store``) holds it.
    """
    tree = _tree(hidden, repo, remote=remote)
    if git([f"--git-dir={base_store}", "cat-file", "-e", tree], cwd=base_store,
           check=False).returncode == 0:  # fmt: skip
        raise ConfigError(
            f"workspace hidden {hidden}: the base's history holds these files (git tree "
            f"{tree[:12]}), and every agent's git holds the base's history: keep the hidden "
            "tests on a commit of their own that the base's history never held (a ref out of "
            "its branches, as refs/reins/hidden)"
        )
    folder = os.path.join(places.hidden, tree)
    if os.path.isdir(folder):
        return folder
    with locked(places.lock_file):  # one reader at a time; the folder appears whole
        if not os.path.isdir(folder):
            _written(repo, tree, folder)
    return folder


def _tree(hidden: HiddenRef, repo: Repository, *, remote: bool) -> str:
    """The git tree of the ref's folder in ``repo``."""
    where = repo.common
    commit = _rev_parse(repo, f"{hidden.ref}^{{commit}}")
    if commit is None:
        held = f" (this host's copy of the remote holds {', '.join(FETCHED)})" if remote else ""
        raise ConfigError(f"workspace hidden {hidden}: no ref {hidden.ref} in {where}{held}")
    tree = _rev_parse(repo, f"{commit}:{hidden.path}")
    if tree is None:
        raise ConfigError(
            f"workspace hidden {hidden}: no folder {hidden.path} in {hidden.ref} ({commit[:12]})"
        )
    kind = git([f"--git-dir={where}", "cat-file", "-t", tree], cwd=where).stdout.strip()
    if kind != b"tree":
        raise ConfigError(
            f"workspace hidden {hidden}: {hidden.path} in {hidden.ref} is not a folder"
        )
    return tree


def _rev_parse(repo: Repository, name: str) -> str | None:
    args = [f"--git-dir={repo.common}", "rev-parse", "--verify", "--quiet", "--end-of-options"]
    done = git([*args, name], cwd=repo.common, check=False)
    return done.stdout.decode("ascii").strip() if done.returncode == 0 else None


def _written(repo: Repository, tree: str, folder: str) -> None:
    """Write the files of ``tree`` into ``folder`` (by way of a partial folder, renamed)."""
    partial = f"{folder}.making"
    index = f"{folder}.index"
    shutil.rmtree(partial, ignore_errors=True)
    os.makedirs(partial)
    args = [f"--git-dir={repo.common}", f"--work-tree={partial}", "read-tree", "-u", "--reset"]
    try:
        git([*args, tree], cwd=partial, env={"GIT_INDEX_FILE": index})
    finally:
        if os.path.exists(index):
            os.unlink(index)
    os.replace(partial, folder)
