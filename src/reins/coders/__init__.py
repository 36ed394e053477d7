"""Coding agents as generators: each runs with its tools on, in an item's own worktree.

:mod:`~reins.coders.protocol` is what an adapter implements (:class:`Agent`: how to launch a
run and how to read its output); :func:`~reins.coders.runner.run_agent` runs it, the same for
every agent (stdin closed, a clean environment, the watchdogs, the budgets, the kill of the
whole process tree, bubblewrap); :mod:`~reins.coders.registry` finds agents by the name in a
model spec (the ``reins.coders`` entry points); :mod:`~reins.coders.cmd` is ``cmd:``, for any
program that reads the prompt on stdin. The package imports none of its modules.
"""
