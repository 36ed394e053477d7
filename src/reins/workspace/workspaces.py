"""The workspaces of one quest: for each item, a repository of the agent's own, and a store of
reins' own beside it that the agent never writes.

An item's workspace (``root/<slug>``) is a plain git repository: its work tree, and a ``.git``
whose object store, refs, index, config and hooks are its own. It borrows the base's objects
(and the item's earlier turns') read-only through git's alternates, so it holds the base and
its history and nothing else. The agent may do anything in it: commit, branch, rewrite its
config, plant hooks or filters, break its ``.git``. None of it reaches reins, because reins
never runs git on the agent's ``.git``: it keeps the item's index and commits in its own store
(``root/.reins/items/<slug>.git``, see :mod:`reins.workspace.places`) and names that store and
the work tree explicitly in every command. Before each turn reins resets the work tree to the
commit the turn starts from (only the files that differ are written) and writes the agent's
``.git`` anew, by hand, so whatever the last run left there is gone.

The user's repository is only read here; results go back to it through
:meth:`Workspaces.land`, onto ``reins/<key>`` (see :mod:`reins.workspace.repository`).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import threading
from collections.abc import Sequence
from pathlib import Path

from reins.errors import ConfigError, WorkspaceError
from reins.workspace.basestore import base_store, objects_of, seal
from reins.workspace.git import git
from reins.workspace.gitlocks import clear, marking
from reins.workspace.names import branch_of
from reins.workspace.places import Places, write_whole
from reins.workspace.pool import Pool
from reins.workspace.remote import mirrored, publish
from reins.workspace.repository import Repository
from reins.workspace.spec import Workspace

HOLDS = ".holds"
AGENT_CONFIG = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n"


class Workspaces:
    """The workspaces of ``workspace`` in ``root``, every item starting from commit ``base``."""

    def __init__(self, repo: Repository, workspace: Workspace, *, base: str, root: str) -> None:
        self.repo, self.workspace, self.base = repo, workspace, base
        self.places = Places(os.path.realpath(root))
        self.root = self.places.root
        self.store = ""  # the base store, made by open()
        self.pool = Pool(self.places)
        self._pushed: dict[str, str] = {}  # item → the commit this process pushed to the remote

    @classmethod
    def open(cls, workspace: Workspace, *, root: str, base: str | None = None) -> Workspaces:
        """The workspaces of ``workspace`` in ``root``; ``base`` a commit id resolved before.
        Makes the base store if this base has none yet.

        Raises:
            ConfigError: the repository or base is not usable, or ``root`` is in the checkout.
            WorkspaceError: the base's history cannot be copied.
        """
        root_path = Path(root).resolve()
        if workspace.remote is not None:  # every host's: this host's copy of it stands for it
            os.makedirs(Places(str(root_path)).own, exist_ok=True)
            repo = mirrored(workspace.remote, Places(str(root_path)))
        else:
            repo = Repository.find(workspace.repo)
        for mine in (repo.top, repo.common) if workspace.remote is None else ():
            if mine is not None and root_path.is_relative_to(Path(mine).resolve()):
                raise ConfigError(
                    f"the workspaces folder {root_path} is inside the repository {mine}: set "
                    "[workspace] worktrees to a folder outside it (by default it is beside the "
                    "ledger, so keep the ledger outside the checkout)"
                )
        commit = base or repo.commit(workspace.base)
        root_path.mkdir(parents=True, exist_ok=True)
        found = cls(repo, workspace, base=commit, root=str(root_path))
        for folder in (found.places.own, os.path.dirname(found.places.index("x"))):
            os.makedirs(folder, exist_ok=True)
        found.store = base_store(repo, found.places, commit)
        return found

    # -- names -----------------------------------------------------------------------------

    def path_of(self, key: str) -> str:
        return self.places.workspace(key)

    def branch_of(self, key: str) -> str:
        return branch_of(self.workspace.branch, key)

    def item_store(self, key: str) -> str:
        """Reins' own store of item ``key`` (made, and its configuration written, now)."""
        path = self.places.item_store(key)
        if not os.path.isfile(os.path.join(path, "HEAD")):  # made by hand: one spawn saved
            shutil.rmtree(path, ignore_errors=True)
            for folder in ("objects/info", "objects/pack", "refs/heads", "refs/tags"):
                os.makedirs(os.path.join(path, folder), exist_ok=True)
            write_whole(os.path.join(path, "HEAD"), "ref: refs/heads/main\n")
        self.seal(key)
        return path

    def seal(self, key: str) -> None:
        """Item ``key``'s store as reins made it (before each use: an unconfined agent could
        have written to it), borrowing from the base store alone."""
        path = self.places.item_store(key)
        seal(path)
        alternates = os.path.join(path, "objects", "info", "alternates")
        write_whole(alternates, objects_of(self.store) + "\n")

    def run(
        self, key: str, args: list[str], *, tree: bool = True, stdin: bytes | None = None
    ) -> bytes:
        """``git ARGS`` on item ``key``'s store, with its workspace's index and (``tree``) the
        workspace as work tree: never the agent's ``.git``."""
        store = self.places.item_store(key)
        head = [f"--git-dir={store}"] + ([f"--work-tree={self.path_of(key)}"] if tree else [])
        env = {"GIT_INDEX_FILE": self.places.index(key), **marking(self.path_of(key))}
        cwd = self.path_of(key) if tree else store
        return git([*head, *args], cwd=cwd, env=env, stdin=stdin).stdout

    def unlock(self, key: str) -> list[str]:
        """Delete the locks a git killed with its reins left in item ``key``'s store and index
        (:mod:`reins.workspace.gitlocks`): the item's lease is this run's. Returns those."""
        store, index = self.places.item_store(key), self.places.index(key)
        return clear(self.path_of(key), stores=[store], indexes=[index])

    def has(self, key: str, commit: str) -> bool:
        """Whether item ``key``'s store (or the base store) holds ``commit``."""
        store = self.places.item_store(key)
        args = [f"--git-dir={store}", "cat-file", "-e", f"{commit}^{{commit}}"]
        return git(args, cwd=self.places.own, check=False).returncode == 0

    # -- a turn's start --------------------------------------------------------------------

    def prepare(
        self, key: str, start: str, *, patch: str | None = None, origin: str | None = None
    ) -> str:
        """Item ``key``'s workspace, its files those of commit ``start``, and a fresh ``.git``
        on its branch there. Returns the commit the workspace stands on: ``start``, or, when
        its store lost ``start`` (a workspace removed since), one made again from ``patch``
        (the recorded change from the base) on top of ``origin`` (where the item starts: the
        base, or a land item's integration commit), or ``origin`` when there is no patch.

        Raises:
            WorkspaceError: git failed, or ``origin`` is in no store of the item's.
        """
        self.item_store(key)
        self.unlock(key)
        origin = origin or self.base
        path = self._folder(key)
        holds = self._holds(key)
        if start != self.base and not self.has(key, start):
            start = self._rebuild(key, patch, origin) if patch else origin
        if start != self.base and not self.has(key, start):
            raise WorkspaceError(
                f"item {key} starts from commit {start[:12]}, which no store of reins holds "
                "any more (was reins' folder of the quest removed?)"
            )
        try:
            if holds != start:  # else it holds start already: not a file to write
                self._reset(key, path, start)
            else:
                self._drop_agent_git(path)
        except (WorkspaceError, OSError):  # what the agent left cannot be reset: start over
            _wipe(path)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.places.index(key))
            self._reset(key, self._folder(key), start)
        self._agent_git(key, path, start)
        self._write_note(key)
        return start

    def holds(self, key: str, commit: str) -> None:
        """Note that item ``key``'s workspace holds ``commit`` exactly, with its index (reins'
        change was just taken, or the folder just reset): the next turn that starts there need
        not read the workspace again. The note is used once (:meth:`_holds`)."""
        write_whole(self.places.index(key) + HOLDS, commit + "\n")

    def forget(self, key: str) -> None:
        """Forget what item ``key``'s workspace was noted to hold (a person may change it)."""
        self._holds(key)

    def _holds(self, key: str) -> str | None:
        """The commit item ``key``'s workspace was last noted to hold, the note taken away (an
        agent is about to change the folder)."""
        note = self.places.index(key) + HOLDS
        try:
            with open(note, encoding="ascii") as f:
                held = f.read().strip()
            os.unlink(note)
        except (OSError, UnicodeDecodeError):
            return None
        return held or None

    def _reset(self, key: str, path: str, start: str) -> None:
        """The work tree's files and reins' index those of ``start``, nothing else in it."""
        self._drop_agent_git(path)
        self.run(key, ["read-tree", "-u", "--reset", start])
        self.run(key, ["clean", "--quiet", "-ffdx"])

    def _folder(self, key: str) -> str:
        """The workspace's folder, a real folder where reins put it (an agent that swapped it
        for a link to elsewhere gets nothing written through the link): the item's own from
        its last turn, else a free one from the pool, else a new one."""
        path = self.path_of(key)
        if os.path.islink(path) or (os.path.lexists(path) and not os.path.isdir(path)):
            os.unlink(path)
        if not os.path.isdir(path):
            if not self.pool.take(path, self.places.index(key)):
                for stale in (self.places.index(key), self.places.index(key) + HOLDS):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(stale)  # of a folder long gone
            elif self.pool.count() == 0:  # the last free one: the next item's is made now
                self.make_ahead(1)
        os.makedirs(path, exist_ok=True)
        if os.path.realpath(path) != path:
            raise WorkspaceError(f"workspace {path} is not where reins made it")
        return path

    def _rebuild(self, key: str, patch: str, parent: str) -> str:
        """The commit of the base plus ``patch`` on top of ``parent``, made again in the
        item's store."""
        if parent != self.base and not self.has(key, parent):
            return parent  # refused by the caller: no store holds it
        path = self.path_of(key)
        _wipe(path)
        self._reset(key, self._folder(key), self.base)
        self.run(key, ["apply", "--index", "--binary", "-"], stdin=patch.encode())
        tree = self.run(key, ["write-tree"]).decode().strip()
        made = ["commit-tree", tree, "-p", parent, "-m", f"reins: {key}, made again"]
        return self.run(key, made).decode().strip()

    def borrow(self, key: str, commits: Sequence[str]) -> None:
        """Fetch ``commits`` from reins' land store into item ``key``'s store (a land item's
        integration commit, and the change it lands, for its agent to merge), objects checked;
        those it holds already are left.

        Raises:
            WorkspaceError: the land store does not hold one of them, or git failed.
        """
        self.item_store(key)
        self.unlock(key)
        wanted = [c for c in dict.fromkeys(commits) if not self.has(key, c)]
        if not wanted:
            return
        source = self.places.land_store(self.base)
        refspecs = [f"+{c}:refs/reins/borrowed/{c}" for c in wanted]
        fetch = ["fetch", "--quiet", "--no-tags", "--no-write-fetch-head",
                 "--no-recurse-submodules"]  # fmt: skip
        try:
            if self.workspace.remote is not None and not self._in(source, wanted):
                source = self.repo.common  # landed on another host: on the remote, copied here
            self.run(key, [*fetch, source, *refspecs], tree=False)
        except WorkspaceError as exc:
            raise WorkspaceError(
                f"item {key}: reins' land store ({source}) does not hold commits "
                f"{', '.join(c[:12] for c in wanted)}: {exc}"
            ) from None

    def _in(self, store: str, commits: Sequence[str]) -> bool:
        """Whether the git folder ``store`` holds every one of ``commits``."""
        if not os.path.isdir(store):
            return False
        args = [f"--git-dir={store}", "cat-file", "--batch-check"]
        said = git(args, cwd=self.places.own, stdin="".join(f"{c}\n" for c in commits).encode())
        return b"missing" not in said.stdout

    @staticmethod
    def _drop_agent_git(path: str) -> None:
        dot_git = os.path.join(path, ".git")
        if os.path.islink(dot_git) or os.path.isfile(dot_git):
            os.unlink(dot_git)
        elif os.path.isdir(dot_git):
            shutil.rmtree(dot_git)

    def _agent_git(self, key: str, path: str, start: str) -> None:
        """The agent's ``.git``, written by hand: its branch at ``start``, the index of reins'
        checkout (so it sees a clean tree), objects borrowed from the two stores."""
        dot_git = os.path.join(path, ".git")
        branch = self.branch_of(key)
        store = self.places.item_store(key)
        write_whole(os.path.join(dot_git, "HEAD"), f"ref: refs/heads/{branch}\n")
        write_whole(os.path.join(dot_git, "config"), AGENT_CONFIG)
        write_whole(os.path.join(dot_git, "refs", "heads", *branch.split("/")), start + "\n")
        os.makedirs(os.path.join(dot_git, "refs", "tags"), exist_ok=True)
        borrowed = f"{objects_of(store)}\n{objects_of(self.store)}\n"
        write_whole(os.path.join(dot_git, "objects", "info", "alternates"), borrowed)
        shutil.copyfile(self.places.index(key), os.path.join(dot_git, "index"))

    # -- results, removal ------------------------------------------------------------------

    def land(self, key: str, commit: str) -> None:
        """Bring ``commit`` of item ``key`` back to the user's repository, onto its branch.

        With a remote, ``commit`` is pushed onto the item's branch there instead (nothing when
        it is there already: :func:`reins.workspace.remote.publish`).

        Raises:
            WorkspaceError: the branch is not reins', another host moved it, or git failed.
        """
        store, branch = self.places.item_store(key), self.branch_of(key)
        remote = self.workspace.remote
        if remote is not None:
            if self._pushed.get(key) == commit:  # its turn pushed it (the item's lease is ours)
                return
            publish(store, remote, commit, f"refs/heads/{branch}", copy=self.repo, base=self.base,
                    expected=self._pushed.get(key))  # fmt: skip
            self._pushed[key] = commit
        else:
            self.repo.land(store, commit, branch, base=self.base)

    def landed(self, key: str, commit: str) -> bool:
        """Whether item ``key``'s branch holds ``commit`` (this host's copy of the remote's,
        as fetched when the run started, with a remote: a turn pushed it before its record)."""
        if self.workspace.remote is not None:
            return True
        return self.repo.branch_commit(self.branch_of(key)) == commit

    def remove(self, key: str) -> None:
        """Done with item ``key`` (its branch in the user's repository stays): its workspace
        goes back to the pool of free folders, for the next item to reset in place; its store
        is moved aside and deleted (a crash mid-way leaves no half of it)."""
        path = self.path_of(key)
        if os.path.isdir(path) and not os.path.islink(path):
            with contextlib.suppress(WorkspaceError, OSError):  # else the next taker resets it
                self._holds(key)
                self._reset(key, path, self.base)  # off the turn's path: the taker's is done
                self.holds(key, self.base)
            self.pool.give(path, self.places.index(key))
        aside = os.path.join(self.places.removed, secrets.token_hex(6))
        os.makedirs(aside, exist_ok=True)
        for gone in (path, self.places.item_store(key), self.places.index(key)):
            with contextlib.suppress(FileNotFoundError):
                os.replace(gone, os.path.join(aside, os.path.basename(gone)))
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.places.note(os.path.basename(path)))
        shutil.rmtree(aside, ignore_errors=True)

    def make_ahead(self, wanted: int) -> list[threading.Thread]:
        """Make free folders of the base in the background until ``wanted`` are free."""
        return self.pool.make_ahead(wanted, self._fill)

    def _fill(self, path: str, index: str) -> str:
        head = [f"--git-dir={self.store}", f"--work-tree={path}"]
        git([*head, "read-tree", "-u", "--reset", self.base], cwd=path,
            env={"GIT_INDEX_FILE": index})  # fmt: skip
        return self.base

    def ours(self) -> dict[str, str]:
        """The workspaces reins made in ``root``: path → the key of its item."""
        found: dict[str, str] = {}
        notes = self.places.notes
        for entry in sorted(os.listdir(notes)) if os.path.isdir(notes) else []:
            name = entry.removesuffix(".json")
            try:
                with open(self.places.note(name), encoding="utf-8") as f:
                    key = json.load(f).get("key")
            except (OSError, ValueError, AttributeError):
                continue
            if isinstance(key, str):
                found[os.path.join(self.root, name)] = key
        return found

    def _write_note(self, key: str) -> None:
        path = self.places.note(os.path.basename(self.path_of(key)))
        if not os.path.exists(path):
            write_whole(path, json.dumps({"key": key, "branch": self.branch_of(key)}))


def _wipe(path: str) -> None:
    """Delete the folder ``path`` whatever the agent did to its permissions."""
    if not os.path.lexists(path):
        return
    if os.path.islink(path) or not os.path.isdir(path):
        os.unlink(path)
        return
    with contextlib.suppress(OSError):
        os.chmod(path, 0o700)
    for folder, dirs, _files in os.walk(path):
        for name in dirs:
            with contextlib.suppress(OSError):
                if not os.path.islink(os.path.join(folder, name)):
                    os.chmod(os.path.join(folder, name), 0o700)
    shutil.rmtree(path, ignore_errors=True)
