"""The user's repository as reins sees it: where it is, which commit the base names, and its
``reins/<key>`` branches and the integration branch ``reins land`` names, the only things of it
reins ever changes.

reins reads the user's repository to resolve the base and to copy the base's history into a
store of its own (:mod:`reins.workspace.basestore`); it writes to it only to bring results
back, each a commit fetched from a store of reins' with object checking on: a locked item's onto
``reins/<key>`` (:meth:`Repository.land`), and the integration of ``reins land BRANCH`` onto
BRANCH, fast-forward only (:meth:`Repository.advance`). No agent ever runs in it, and no file of
its checkout, index, hooks or configuration is written.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from dataclasses import dataclass

from reins.errors import ConfigError, WorkspaceError
from reins.workspace.git import git, text


@dataclass(frozen=True, slots=True)
class Repository:
    """A repository as git reports it: its top folder (None when bare), its git folder and the
    common git folder (shared by every worktree of it, where its objects are)."""

    top: str | None
    git_dir: str
    common: str

    @property
    def where(self) -> str:
        """The folder git commands run in."""
        return self.top or self.common

    @classmethod
    def find(cls, folder: str) -> Repository:
        """The repository at ``folder``.

        Raises:
            ConfigError: ``folder`` is missing or is not in a git repository.
        """
        if not os.path.isdir(folder):
            raise ConfigError(f"workspace repo {folder}: no such folder")
        args = ["rev-parse", "--path-format=absolute", "--git-common-dir", "--git-dir"]
        done = git(args, cwd=folder, check=False)
        if done.returncode != 0:
            raise ConfigError(
                f"workspace repo {folder} is not a git repository: run `git init` and commit "
                "there (or make a playground with `reins new --pack coding DIR`)"
            )
        common, git_dir = done.stdout.decode().split("\n")[:2]
        bare = text(["rev-parse", "--is-bare-repository"], cwd=folder) == "true"
        top = None if bare else text(["rev-parse", "--show-toplevel"], cwd=folder)
        return cls(top, os.path.realpath(git_dir), os.path.realpath(common))

    def commit(self, revision: str) -> str:
        """The commit id ``revision`` names.

        Raises:
            ConfigError: it names no commit (an empty repository, a typo).
        """
        done = git(
            ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{revision}^{{commit}}"],
            cwd=self.where,
            check=False,
        )
        if done.returncode != 0:
            raise ConfigError(
                f"workspace base {revision!r} names no commit in {self.where}: "
                "commit something first, or set [workspace] base to a branch, tag or commit"
            )
        return done.stdout.decode().strip()

    def branch_commit(self, branch: str) -> str | None:
        """The commit ``refs/heads/BRANCH`` points at, or None when there is no such branch."""
        ref = f"refs/heads/{branch}"
        done = git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], cwd=self.where,
                   check=False)  # fmt: skip
        return done.stdout.decode().strip() if done.returncode == 0 else None

    def land(self, store: str, commit: str, branch: str, *, base: str) -> None:
        """Fetch ``commit`` from reins' ``store`` onto ``refs/heads/BRANCH``, objects checked.

        A branch of that name that reins did not make for this base (its history does not hold
        the base) is left alone and refused, unless the base holds it: a branch merged since (an
        earlier ledger's result, say) loses nothing when it moves.

        Raises:
            WorkspaceError: the branch is not reins', or git failed (a corrupt object).
        """
        here = self.branch_commit(branch)
        if (here is not None and here != commit and not self.holds(base, here)
                and not self.holds(here, base)):  # fmt: skip
            raise WorkspaceError(
                f"branch {branch} exists but reins did not make it for this ledger (its "
                f"history does not hold the base {base[:12]}): delete it (`git branch -D "
                f"{branch}`) or name the branches otherwise ([workspace] branch)"
            )
        if here == commit:
            return
        refspec = f"+{commit}:refs/heads/{branch}"
        git(["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules",
             store, refspec], cwd=self.where)  # fmt: skip

    def checked_out(self, branch: str) -> str | None:
        """The folder of a worktree of the repository that has ``branch`` checked out, if any
        (its files would no longer match its branch if reins moved it)."""
        args = ["for-each-ref", "--format=%(worktreepath)", f"refs/heads/{branch}"]
        done = git(args, cwd=self.where, check=False)
        said = done.stdout.decode("utf-8", "replace").strip() if done.returncode == 0 else ""
        return said or None

    def advance(self, store: str, commit: str, branch: str) -> None:
        """Move ``refs/heads/BRANCH`` to ``commit``, fetched from reins' ``store``, objects
        checked, and only as a fast-forward (git refuses any other move of a branch named
        without ``+``), never a branch a worktree has checked out.

        Raises:
            WorkspaceError: the branch is checked out, would not fast-forward, or git failed.
        """
        where = self.checked_out(branch)
        if where is not None:
            raise WorkspaceError(
                f"branch {branch} is checked out in {where}: reins never moves a branch under "
                "your files; check out another branch there, or name another branch to land on"
            )
        if self.branch_commit(branch) == commit:
            return
        refspec = f"{commit}:refs/heads/{branch}"
        git(["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules",
             store, refspec], cwd=self.where)  # fmt: skip

    def repack(self) -> None:
        """Pack what reins brought into your object store: each branch it fetched in left a
        small pack or loose objects, and enough of them make your next git command stop for a
        gc. A geometric repack merges the small packs (your large ones stay as they are) and
        the loose objects; nothing when you turned automatic gc off (``gc.auto = 0``)."""
        yours = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        with contextlib.suppress(OSError, subprocess.SubprocessError):  # your own settings
            auto = subprocess.run(
                ["git", "config", "--get", "gc.auto"], cwd=self.where, env=yours,
                stdin=subprocess.DEVNULL, capture_output=True, timeout=30,
            )  # fmt: skip
            if auto.stdout.strip() == b"0":
                return
        git(["repack", "-d", "-q", "--geometric=2"], cwd=self.where, check=False)

    def holds(self, ancestor: str, commit: str) -> bool:
        """Whether ``ancestor`` is in the history of ``commit``."""
        args = ["merge-base", "--is-ancestor", ancestor, commit]
        return git(args, cwd=self.where, check=False).returncode == 0
