"""How a ledger's items' branches are named: the template recorded in the ledger at first use.

``[workspace] branch`` defaults to ``reins/{quest}/{key}``, so that two quests on one
repository never share a branch (each quest's results land on its own, and its export names a
branch holding its own commit). The template a ledger first gives branches under is recorded
in its meta table (``workspace.branch``, with ``{quest}`` filled), as the base is
(:data:`reins.workspace.site.BASE_META`), and every later run and ``reins land`` names the
branches by it. A ledger whose items were given branches before templates were recorded
(``reins/{key}`` was the default then) keeps that name. A quest whose declared template no
longer names the ledger's branches is refused, with what to do.
"""

from __future__ import annotations

import dataclasses

from reins.errors import ConfigError
from reins.store.protocol import Store
from reins.workspace.names import for_quest
from reins.workspace.spec import DEFAULT_BRANCH, LEGACY_BRANCH, Workspace

BRANCH_META = "workspace.branch"
"""The ledger's meta key for its items' branch template (``{quest}`` filled)."""
SANDBOX_META = "workspace.sandbox"  # as reins.loop.workshop writes it on every run's start
RECENT = 50  # the newest attempts read for a branch noted before templates were recorded


def settled_branch(recorded: str | None, declared: str, quest: str, *, named_before: bool) -> str:
    """The template of a ledger's branches: the one it recorded (``recorded``); else, for a
    ledger that gave its items branches before templates were recorded (``named_before``),
    the one it gave them (``reins/{key}`` when the quest declares none); else the quest's
    (``declared``) with ``{quest}`` its name.

    Raises:
        ConfigError: the quest declares a template other than the one the ledger recorded.
    """
    if recorded is not None:
        if declared != DEFAULT_BRANCH and for_quest(declared, quest) != recorded:
            raise ConfigError(
                f"[workspace] branch = {declared!r} does not name this ledger's branches: its "
                f"items' branches are named {recorded!r}. One ledger names its branches one "
                f'way: set [workspace] branch = "{recorded}" (or leave it out) to go on, or '
                "start a new ledger for the new names"
            )
        return recorded
    if named_before and declared == DEFAULT_BRANCH:
        return LEGACY_BRANCH
    return for_quest(declared, quest)


def settle_branches(store: Store, workspace: Workspace, quest: str) -> Workspace:
    """``workspace`` with the branch template of the ledger ``store`` (see
    :func:`settled_branch`), recorded in the ledger when it had none.

    Raises:
        ConfigError: the quest declares a template other than the one the ledger recorded.
    """
    recorded = store.meta(BRANCH_META)
    named_before = recorded is None and _named_before(store)
    template = settled_branch(recorded, workspace.branch, quest, named_before=named_before)
    if recorded is None:
        store.set_meta(BRANCH_META, template)
    return dataclasses.replace(workspace, branch=template)


def _named_before(store: Store) -> bool:
    """Whether a loop of a reins that recorded no template ran on this ledger: it noted its
    sandbox, or one of the newest attempts names a branch."""
    if store.meta(SANDBOX_META) is not None:
        return True
    return any(attempt.notes.branch for attempt in store.recent(limit=RECENT))
