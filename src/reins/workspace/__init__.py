"""Workspaces: each item of a coding quest is a change to a git repository, made in a worktree.

:class:`~reins.workspace.spec.Workspace` is what a quest declares (``[workspace]`` in
quest.toml); :class:`~reins.workspace.trees.Worktrees` makes, resets and removes the worktree of
each item, on its own branch, from the base; :func:`~reins.workspace.snapshot.snapshot` commits
what an agent changed and gives its diff; :mod:`~reins.workspace.submission` writes that as the
turn's submission; :func:`~reins.workspace.pristine.pristine` is a clean tree of the base.
Nothing here knows of gates, ledgers or models: the loop joins them. The package imports none
of its modules, so a quest that names its workspace loads no git machinery.
"""
