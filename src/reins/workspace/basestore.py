"""The base store: a bare repository of reins' own holding the base commit and its history only.

Every workspace and judge tree of a quest borrows its objects from it (git's alternates,
read-only), so an agent's repository holds what the base holds and nothing more: no branch of
the user's, no other item's result, no commit that came after the base (an agent must not read
an answer from git). It is made once per base, by fetching the base commit from the user's
repository with object checking on, under the quest's lock; a store left half made by a crash
is made again. Nothing else ever writes to it.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil

from reins.workspace.git import git
from reins.workspace.places import Places, locked
from reins.workspace.repository import Repository

STORE_CONFIG = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n"
DONE = "reins-base"
"""A file in the store naming the base commit, written last: the store is whole."""
REF = "refs/heads/base"


def base_store(repo: Repository, places: Places, base: str) -> str:
    """The folder of the base store of commit ``base`` (made now if it is not whole).

    Raises:
        WorkspaceError: git failed (the base's objects are missing or corrupt).
    """
    path = places.base_store(base)
    if _whole(path, base):
        return path
    with locked(places.lock_file):
        if _whole(path, base):
            return path
        shutil.rmtree(path, ignore_errors=True)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        partial = f"{path}.making"
        shutil.rmtree(partial, ignore_errors=True)
        git(["init", "--quiet", "--bare", "--template=", partial], cwd=places.own)
        fetch = ["--git-dir=" + partial, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head"]
        git([*fetch, repo.common, f"{base}:{REF}"], cwd=places.own)
        with open(os.path.join(partial, DONE), "w", encoding="ascii") as f:
            f.write(base + "\n")
        os.replace(partial, path)
    return path


def seal(store: str) -> None:
    """Put a store of reins' back as reins made it before git runs on it: its configuration
    written anew, and no hooks, attributes or replacement refs. Under the sandbox no agent can
    reach a store; unconfined, one could write an ``[include]`` or a filter into its config
    (which no ``-c`` setting can undo), so the store is sealed before each use."""
    path = os.path.join(store, "config")
    temporary = f"{path}.{secrets.token_hex(3)}.tmp"
    with open(temporary, "w", encoding="utf-8") as f:
        f.write(STORE_CONFIG)
    os.replace(temporary, path)
    for folder in ("hooks", os.path.join("refs", "replace")):
        shutil.rmtree(os.path.join(store, folder), ignore_errors=True)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(os.path.join(store, "info", "attributes"))


def objects_of(store: str) -> str:
    """The object folder of a repository of reins' own (what an alternates file names)."""
    return os.path.join(store, "objects")


def _whole(path: str, base: str) -> bool:
    try:
        with open(os.path.join(path, DONE), encoding="ascii") as f:
            return f.read().strip() == base
    except OSError:
        return False
