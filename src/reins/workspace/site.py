"""Where a coding quest's work stands on disk, for every command that needs the base: the base
a ledger recorded, the hidden tests' folder, and a tree of the base in reins' own folder.

The loop and ``reins scan`` both read the base through here, so the items a scan finds and the
items the loop works start from one commit (the ledger records it at the first of the two).
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from reins.errors import ConfigError
from reins.workspace.git import git
from reins.workspace.spec import Workspace

if TYPE_CHECKING:
    from reins.workspace.environment import Environment
    from reins.workspace.judgetree import JudgeTrees
    from reins.workspace.workspaces import Workspaces

BASE_META = "workspace.base"
"""The ledger's meta key for the base commit its items start from."""


def settled_base(recorded: str | None, named: str, workspace: Workspace) -> str:
    """The base to work from: the one the ledger recorded, which must be the one
    ``[workspace] base`` names now (``named``, resolved).

    Raises:
        ConfigError: the base moved since the ledger recorded it.
    """
    if recorded is not None and recorded != named:
        raise ConfigError(
            f"the workspace base moved: this ledger's items start from {recorded[:12]}, and "
            f"{workspace.base!r} now names {named[:12]}. Every item and every "
            f'restart must start from one base: pin it (set [workspace] base = "{recorded}") '
            "to go on with this ledger, or start a new ledger from the new base (move this "
            "one aside, or name another with --ledger); docs/agents.md says which to choose"
        )
    return named


def hidden_folder(workspace: Workspace, spaces: Workspaces) -> str | None:
    """The hidden tests' folder, checked: a folder, outside the repository; or, for a folder of
    a git ref, the one in reins' own folder they are read into (:mod:`reins.workspace.hiddenref`).

    Raises:
        ConfigError: it is missing, or inside the repository (the agent would see it there);
            the ref or its folder is missing, or the base's history holds it.
    """
    if workspace.hidden is None:
        return None
    repo = spaces.repo
    ref = workspace.hidden_ref
    if ref is not None:
        from reins.workspace.hiddenref import read

        remote = workspace.remote is not None
        return read(ref, repo, spaces.places, spaces.store, remote=remote)
    folder = Path(workspace.hidden).resolve()
    if not folder.is_dir():
        raise ConfigError(f"workspace hidden {folder}: no such folder")
    for mine in (repo.top, repo.common):
        if mine is not None and folder.is_relative_to(Path(mine).resolve()):
            raise ConfigError(
                f"workspace hidden {folder} is inside the repository {mine}, where the agent "
                "would see it: keep hidden tests in a folder outside the repository"
            )
    return str(folder)


@dataclass(frozen=True, slots=True)
class BaseTree:
    """A checkout of the base in reins' own folder (the judge's, with the hidden tests), held
    while a scan reads it: ``path`` is the folder, ``commit`` the base, ``store`` the git store
    that holds it."""

    path: str
    commit: str
    store: str
    python: str = ""
    """the project's interpreter its tests run with ("": reins' own)"""
    readable: tuple[str, ...] = ()
    """what a run with that interpreter must see (its environment, its installation)"""
    plugins: tuple[str, ...] = ()
    """the pytest plugins the project's tests need (``[workspace] plugins``)"""

    def files(self) -> list[str]:
        """The base's tracked files, by path from the top, sorted (the hidden tests are the
        judge's, never the repository's: they are not among them)."""
        args = [f"--git-dir={self.store}", "ls-tree", "-r", "-z", "--name-only", self.commit]
        out = git(args, cwd=self.path).stdout
        return sorted(p for p in out.decode("utf-8", "surrogateescape").split("\0") if p)


@contextlib.contextmanager
def base_tree(
    workspace: Workspace, *, root: str, base: str, say: Callable[[str], None] = lambda _: None
) -> Iterator[BaseTree]:
    """A tree of ``base`` in the workspaces folder ``root`` (made as the loop makes it, so the
    loop reuses its base store), held while the block runs.

    Raises:
        ConfigError: the repository, the base or the hidden tests are unusable.
        WorkspaceError: git failed.
    """
    from reins.workspace.judgetree import JudgeTrees
    from reins.workspace.workspaces import Workspaces

    spaces = Workspaces.open(workspace, root=root, base=base)
    hidden = hidden_folder(workspace, spaces)
    trees = JudgeTrees(
        spaces.places,
        spaces.base,
        judge=workspace.judge_globs,
        hidden=hidden,
        sandbox=workspace.sandbox,
    )
    env = equip(trees, workspace, spaces, say)
    with trees.base_tree() as path:
        python, readable = (env.python, env.readable) if env else ("", ())
        yield BaseTree(os.path.realpath(path), spaces.base, spaces.store, python, readable,
                       workspace.plugins)  # fmt: skip


def equip(
    trees: JudgeTrees,
    workspace: Workspace,
    spaces: Workspaces,
    say: Callable[[str], None] = lambda _: None,
) -> Environment | None:
    """The project's environment for the judge's ``trees`` (built by its setup, or found
    built and unchanged; :mod:`reins.workspace.environment`): the trees hold its generated
    files and name its interpreter. None: the quest declares none.

    Raises:
        ConfigError: its setup failed, or its interpreter is not there.
    """
    from reins.errors import WorkspaceError
    from reins.workspace.environment import prepared

    try:
        # a tree of the base without the hidden tests: setup must neither read nor keep them
        bare = functools.partial(trees.built, trees.base_tree_id(), hidden=False)
        env = prepared(workspace, own=spaces.places.own, store=spaces.store, base=spaces.base,
                       base_tree=bare, say=say)  # fmt: skip
    except WorkspaceError as exc:
        raise ConfigError(str(exc)) from None
    trees.environment = env
    trees.plugins = workspace.plugins
    if env is not None:
        say(f"the judge's tests run with the project's interpreter, {env.python}")
    return env
