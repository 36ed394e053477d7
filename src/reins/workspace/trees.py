"""The worktrees of one quest on one repository: one per item, on its own branch, from the base.

A worktree lives in a folder of reins' own (``root``), never in the repository's checkout:
``root/<slug>`` for an item, with what reins notes of it under ``root/.reins/``. Making and
removing worktrees changes the repository's list of worktrees, which git does not guard
against two processes at once, so those steps hold :meth:`Worktrees.lock` (a ``flock`` in the
repository's git folder, shared by every reins process on it, and a thread lock). Nothing here
touches the user's checkout, index or branches: reins moves only the branches it made, and
only in their own worktrees.

Every command on an item's worktree names its git folder and work tree explicitly, so a
worktree whose ``.git`` file an agent broke cannot send git to some other repository.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from reins.errors import ConfigError, WorkspaceError
from reins.values import Worktree
from reins.workspace.git import git, text
from reins.workspace.names import branch_of, slug
from reins.workspace.spec import Workspace

OWN = ".reins"
"""The folder under ``root`` where reins keeps its notes of each worktree, agents' HOMEs and
the pristine tree of the base."""
LOCK_FILE = "reins-worktrees.lock"

_THREADS = threading.Lock()


@contextlib.contextmanager
def locked(common: str) -> Iterator[None]:
    """Hold the worktree lock of the repository whose git folder is ``common``."""
    with _THREADS:
        fd = os.open(os.path.join(common, LOCK_FILE), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)


@dataclass(frozen=True, slots=True)
class Repository:
    """A repository as git reports it: its top folder (None when bare) and git folder."""

    top: str | None
    common: str

    @classmethod
    def find(cls, folder: str) -> Repository:
        """The repository at ``folder``.

        Raises:
            ConfigError: ``folder`` is missing or is not in a git repository.
        """
        if not os.path.isdir(folder):
            raise ConfigError(f"workspace repo {folder}: no such folder")
        done = git(
            ["rev-parse", "--path-format=absolute", "--git-common-dir"], cwd=folder, check=False
        )
        if done.returncode != 0:
            raise ConfigError(
                f"workspace repo {folder} is not a git repository: run `git init` and commit "
                "there (or make a playground with `reins new --pack coding DIR`)"
            )
        common = done.stdout.decode().strip()
        bare = text(["rev-parse", "--is-bare-repository"], cwd=folder) == "true"
        top = None if bare else text(["rev-parse", "--show-toplevel"], cwd=folder)
        return cls(top, common)

    def commit(self, revision: str) -> str:
        """The commit id ``revision`` names.

        Raises:
            ConfigError: it names no commit (an empty repository, a typo).
        """
        done = git(
            ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{revision}^{{commit}}"],
            cwd=self.top or self.common,
            check=False,
        )
        if done.returncode != 0:
            raise ConfigError(
                f"workspace base {revision!r} names no commit in {self.top or self.common}: "
                "commit something first, or set [workspace] base to a branch, tag or commit"
            )
        return done.stdout.decode().strip()


@dataclass(frozen=True, slots=True)
class Listed:
    """A worktree as ``git worktree list`` gives it."""

    path: str
    head: str
    branch: str | None  # refs/heads/…, None when detached
    locked: bool


class Worktrees:
    """The worktrees of quest ``quest`` on ``repo``, in ``root``, all from commit ``base``."""

    def __init__(self, repo: Repository, workspace: Workspace, *, base: str, root: str) -> None:
        self.repo, self.workspace, self.base = repo, workspace, base
        self.root = os.path.abspath(root)
        self.own = os.path.join(self.root, OWN)
        self.top = repo.top or repo.common

    @classmethod
    def open(cls, workspace: Workspace, *, root: str, base: str | None = None) -> Worktrees:
        """The worktrees of ``workspace`` in ``root``; ``base`` a commit id resolved before.

        Raises:
            ConfigError: the repository or base is not usable, or ``root`` is in the checkout.
        """
        repo = Repository.find(workspace.repo)
        root_path = Path(root).resolve()
        if repo.top is not None and root_path.is_relative_to(Path(repo.top).resolve()):
            raise ConfigError(
                f"the worktrees folder {root_path} is inside the repository's own checkout "
                f"{repo.top}: set [workspace] worktrees to a folder outside it (by default it "
                "is beside the ledger, so keep the ledger outside the checkout)"
            )
        commit = base or repo.commit(workspace.base)
        root_path.mkdir(parents=True, exist_ok=True)
        return cls(repo, workspace, base=commit, root=str(root_path))

    # -- names -----------------------------------------------------------------------------

    def path_of(self, key: str) -> str:
        return os.path.join(self.root, slug(key))

    def branch_of(self, key: str) -> str:
        return branch_of(self.workspace.branch, key)

    def tree(self, key: str) -> Worktree:
        """The value a turn hands the gate for item ``key``'s worktree."""
        return Worktree(self.path_of(key), self.branch_of(key), self.base, self.top, self.root)

    def admin(self, path: str) -> str:
        """The worktree's own git folder (``<repo>/.git/worktrees/<name>``), as git made it."""
        note = self._note(os.path.basename(path))
        admin = note.get("admin") if note else None
        if not isinstance(admin, str) or not os.path.isdir(admin):
            raise WorkspaceError(f"worktree {path}: reins has no record of its git folder")
        return admin

    def run(self, path: str, args: list[str], env: dict[str, str] | None = None) -> bytes:
        """``git ARGS`` on the worktree at ``path``, naming its git folder and work tree."""
        argv = [f"--git-dir={self.admin(path)}", f"--work-tree={path}", *args]
        return git(argv, cwd=path, env=env).stdout

    # -- the lock --------------------------------------------------------------------------

    def lock(self) -> contextlib.AbstractContextManager[None]:
        """Hold the repository's worktree lock (every reins process and thread on it)."""
        return locked(self.repo.common)

    # -- making and removing -----------------------------------------------------------------

    def prepare(self, key: str, start: str) -> Worktree:
        """Item ``key``'s worktree on its branch, its files exactly those of commit ``start``.

        Made from the base (or the branch's last commit) when missing; a worktree left by a
        crashed run is reused, and reset to ``start``.

        Raises:
            WorkspaceError: git failed, or the branch exists but is not reins' (no worktree of
                ours holds it and ``start`` is not on it).
        """
        tree = self.tree(key)
        if self._intact(tree):  # ours, whole: no change to the repository's worktree list
            self.reset(tree, start)
            return tree
        with self.lock():
            made = self._ensure(key, tree, start)
        # The checkout writes only this worktree's files and index: outside the lock, so that
        # eight worktrees of a large repository fill at once.
        self.reset(tree, start, made=made)
        return tree

    def _intact(self, tree: Worktree) -> bool:
        """Whether ``tree`` is a worktree reins made whose git folder and files are all there."""
        note = self._note(os.path.basename(tree.path))
        admin = note.get("admin") if note else None
        return (
            isinstance(admin, str)
            and os.path.isfile(os.path.join(admin, "HEAD"))
            and not os.path.exists(os.path.join(admin, "locked"))
            and os.path.isfile(os.path.join(tree.path, ".git"))
        )

    def _ensure(self, key: str, tree: Worktree, start: str) -> bool:
        """Add the worktree (without its files) if it is not there; True when added."""
        name = os.path.basename(tree.path)
        if not os.path.lexists(tree.path) and self._note(name) is None:
            try:  # the usual case, a new item: no need to read the list of worktrees
                return self._add(key, tree, start)
            except WorkspaceError:
                pass  # a stale entry of the list holds the path: clear it, as below
        listed = {w.path: w for w in self.listed()}
        here = listed.get(tree.path)
        if here is not None and (here.locked or not os.path.isdir(tree.path)):
            self._remove(tree.path)
            here = None
        whole = os.path.isfile(os.path.join(tree.path, ".git"))
        if here is not None and whole and self._note(name):
            return False  # ours from before (a crashed or earlier run): reset, not made
        if here is not None or os.path.lexists(tree.path):
            self._remove(tree.path)
        return self._add(key, tree, start)

    def _add(self, key: str, tree: Worktree, start: str) -> bool:
        """``git worktree add`` without a checkout: on the branch if it exists, else a new one
        at ``start``."""
        ref = f"refs/heads/{tree.branch}"
        exists = git(["show-ref", "--verify", "--quiet", ref], cwd=self.top, check=False)
        add = ["worktree", "add", "--quiet", "--no-checkout"]
        if exists.returncode == 0:
            if not self._is_ancestor(start, ref):
                raise WorkspaceError(
                    f"branch {tree.branch} exists but reins did not make it for this ledger "
                    f"(its history does not hold {start[:12]}): delete it (`git branch -D "
                    f"{tree.branch}`) or name the branches otherwise ([workspace] branch)"
                )
            git([*add, tree.path, tree.branch], cwd=self.top)
        else:
            git([*add, "-b", tree.branch, tree.path, start], cwd=self.top)
        self._write_note(key, tree)
        return True

    def _is_ancestor(self, commit: str, ref: str) -> bool:
        args = ["merge-base", "--is-ancestor", commit, ref]
        return git(args, cwd=self.top, check=False).returncode == 0

    def reset(self, tree: Worktree, start: str, *, made: bool = False) -> None:
        """Make the worktree's files, index and branch those of commit ``start``; ``made``:
        it was just added without a checkout (nothing to clean)."""
        self.run(tree.path, ["checkout", "--quiet", "--force", "-B", tree.branch, start])
        if not made:
            self.run(tree.path, ["clean", "--quiet", "-ffd"])

    def remove(self, key: str) -> None:
        """Remove item ``key``'s worktree (its branch stays).

        Under the lock, git is made to forget it and its folder is moved aside; the files are
        deleted after, so that removing a large worktree does not hold up the others."""
        path = self.path_of(key)
        note = self._note(os.path.basename(path))
        admin = note.get("admin") if note else None
        if not isinstance(admin, str):
            with self.lock():
                self._remove(path)
            return
        aside = os.path.join(
            self.own, "removed", f"{os.path.basename(path)}-{secrets.token_hex(4)}"
        )
        with self.lock():
            shutil.rmtree(admin, ignore_errors=True)
            os.makedirs(os.path.dirname(aside), exist_ok=True)
            with contextlib.suppress(FileNotFoundError):
                os.replace(path, aside)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._note_path(os.path.basename(path)))
        shutil.rmtree(aside, ignore_errors=True)

    def _remove(self, path: str) -> None:
        git(["worktree", "remove", "--force", "--force", path], cwd=self.top, check=False)
        if os.path.lexists(path):
            shutil.rmtree(path, ignore_errors=True)
        name = os.path.basename(path)
        note = self._note(name)
        admin = note.get("admin") if note else None
        if isinstance(admin, str) and os.path.isdir(admin):
            # git forgets a worktree whose folder is gone only on a prune, which would prune
            # the user's own missing worktrees too: forget just this one.
            shutil.rmtree(admin, ignore_errors=True)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self._note_path(name))

    def listed(self) -> list[Listed]:
        """Every worktree of the repository, as git lists them."""
        out = git(["worktree", "list", "--porcelain"], cwd=self.top).stdout.decode()
        found = []
        for block in out.split("\n\n"):
            fields: dict[str, str] = {}
            for line in block.splitlines():
                name, _, value = line.partition(" ")
                fields[name] = value
            if "worktree" in fields:
                found.append(
                    Listed(
                        os.path.abspath(fields["worktree"]),
                        fields.get("HEAD", ""),
                        fields.get("branch"),
                        "locked" in fields,
                    )
                )
        return found

    def ours(self) -> dict[str, str]:
        """The worktrees reins made in ``root``: path → the key of its item."""
        found: dict[str, str] = {}
        notes = os.path.join(self.own, "notes")
        for entry in sorted(os.listdir(notes)) if os.path.isdir(notes) else []:
            note = self._note(entry.removesuffix(".json"))
            key = note.get("key") if note else None
            if isinstance(key, str):
                found[os.path.join(self.root, entry.removesuffix(".json"))] = key
        return found

    # -- notes -----------------------------------------------------------------------------

    def _note_path(self, name: str) -> str:
        return os.path.join(self.own, "notes", f"{name}.json")

    def _note(self, name: str) -> dict[str, object] | None:
        try:
            with open(self._note_path(name), encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def _write_note(self, key: str, tree: Worktree) -> None:
        with open(os.path.join(tree.path, ".git"), encoding="utf-8") as f:
            admin = f.read().strip().removeprefix("gitdir:").strip()
        path = self._note_path(os.path.basename(tree.path))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            json.dump({"key": key, "branch": tree.branch, "admin": os.path.abspath(admin)}, f)
        os.replace(path + ".tmp", path)
