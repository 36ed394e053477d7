"""Where a coding run works, and what its sandboxed agents may not see.

The workspaces go beside the ledger, unless that lies in the repository's checkout
(:func:`default_root`); a sandboxed agent sees its item's workspace and its toolchain, and
nothing of reins' folder, the user's repository, the hidden tests
(:func:`reins.workspace.site.hidden_folder`) or the ledger's files (:func:`walls_of`,
:func:`confined`).
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from reins.coders.protocol import Launch
from reins.coders.runner import Wrap
from reins.sandbox import Policy, confine, launched, reaped, reins_package
from reins.sandbox.allow import Allowance
from reins.sandbox.egress import Egress
from reins.workspace.basestore import objects_of
from reins.workspace.environment import Environment
from reins.workspace.repository import Repository
from reins.workspace.spec import Workspace
from reins.workspace.workspaces import Workspaces


def default_root(workspace: Workspace, quest: str, preferred: str | None) -> str:
    """Where the workspaces go: ``preferred`` (the CLI's: beside the ledger) unless it lies in
    the repository's checkout, else ``.reins-worktrees/<quest>`` beside the repository (with
    a remote there is no checkout: ``preferred``, else ``.reins-worktrees/<quest>`` here)."""
    if workspace.remote is not None:
        return str(Path(preferred or os.path.join(".reins-worktrees", quest)).resolve())
    found = Repository.find(workspace.repo)
    repo = Path(found.top or found.common).resolve()
    if preferred is not None and not Path(preferred).resolve().is_relative_to(repo):
        return str(Path(preferred).resolve())
    return str(repo.parent / ".reins-worktrees" / quest)


def walls_of(
    spaces: Workspaces, repo: Repository, hidden: str | None, ledger: str, env: Environment | None
) -> Policy:
    """The sandbox of the run's agents: reads denied but for the toolchain (the system folders,
    and per launch the agent's own program, interpreter and ``PATH``: see :func:`confined`) and
    the quest's ``[workspace] read``; no network but the run's egress proxy (:func:`confined`).
    Out of sight even where a read path would show them: reins' folder (but for the object
    folders an agent's ``.git`` borrows), reins' own package, the user's git folder, the hidden
    tests and the ledger's files. The project's environment (``env``) is shown read-only."""
    own = [spaces.root, repo.common, repo.git_dir, reins_package(), *([hidden] if hidden else [])]
    ledger = os.path.abspath(ledger)
    files = [ledger + suffix for suffix in ("", "-wal", "-shm", "-journal")]
    return Policy(view="toolchain", readable=spaces.workspace.read, hidden=(*own, *files),
                  shown=(objects_of(spaces.store), *(env.readable if env else ())),
                  network=False)  # fmt: skip


def seen_by_agents(walls: Policy, allowed: Allowance) -> str:
    """What a run's agents can see and reach, in one line for the person."""
    extra = f"; read: {', '.join(walls.readable)}" if walls.readable else ""
    hosts = f"its model and {allowed}" if allowed.entries else "only its model"
    return ("agents see their workspace, an empty HOME and a private /tmp, and read-only the "
            f"system folders and their own program and interpreter{extra}; each reaches "
            f"{hosts}, through reins' proxy")  # fmt: skip


def confined(
    spaces: Workspaces, walls: Policy, key: str, home: str, allowed: Allowance
) -> tuple[Wrap, Egress]:
    """How an agent's launch runs in ``walls`` in item ``key``'s workspace, writing only there
    and to ``home`` (the objects of the item's own store shown too), reaching only its model
    (its launch's :attr:`~reins.coders.protocol.Launch.network`) and the ``allowed`` hosts,
    through the egress proxy of its own returned with it (to start before, and close after)."""
    egress = Egress(allowed, os.path.join(spaces.root, ".egress"))
    cwd = spaces.path_of(key)
    key_store = objects_of(spaces.places.item_store(key))
    policy = dataclasses.replace(walls, shown=(*walls.shown, key_store), writable=(cwd, home),
                                 cwd=cwd)  # fmt: skip

    def wrap(launch: Launch) -> list[str]:
        egress.allowance = allowed + Allowance.of(launch.network, where="the agent's model")
        inner, walled = egress.behind(launch.argv, launched(launch.argv, policy))
        return confine(inner, launched(inner[:1], walled))

    return wrap, egress


def unconfined(launch: Launch) -> list[str]:
    """An unconfined agent's command line (``--sandbox none``): in a process namespace of its
    own where the host allows one, nothing else."""
    return reaped(launch.argv)
