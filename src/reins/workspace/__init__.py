"""Workspaces: each item of a coding quest is a change to a git repository, made by an agent in a
repository of its own and judged by reins in a tree of its own.

:class:`~reins.workspace.spec.Workspace` is what a quest declares (``[workspace]`` in
quest.toml); :class:`~reins.workspace.workspaces.Workspaces` makes and resets each item's
repository, borrowing the base's objects from the base store
(:mod:`~reins.workspace.basestore`); :func:`~reins.workspace.change.take` reads what an agent
changed, with reins' own index, capped, and gives its patch; :mod:`~reins.workspace.submission`
writes that as the turn's submission; :class:`~reins.workspace.judgetree.JudgeTrees` builds the
tree the gate judges in from the recorded patch; :meth:`Repository.land
<reins.workspace.repository.Repository.land>` brings a locked item's commit back to the user's
repository. Every git command goes through :mod:`~reins.workspace.git`. Nothing here knows of
gates, ledgers or models: the loop joins them. The package imports none of its modules, so a
quest that names its workspace loads no git machinery.
"""
