"""Items found in a coding quest's repository, at its base: ``[items] from`` in quest.toml,
``Quest(found=...)`` in Python.

- :class:`~reins.sources.failing.FailingTests` (``from = "pytest"``): one item per test that
  fails at the base, as pytest's own report says (the judge's run: :mod:`reins.checks.pytestrun`);
- :class:`~reins.sources.findings.Findings` (``from = "command"``): one item per value of a
  field of the JSON records a program prints (a linter's or a type checker's findings, per file);
- :class:`~reins.sources.matching.MatchingFiles` (``from = "files"``): one item per tracked file
  whose path matches the globs (a migration).

Each reads a tree of the base in reins' own folder (:func:`reins.workspace.site.base_tree`),
never the user's checkout, so what is found is what the judge's trees hold. ``reins scan`` adds
the items; a rescan adds only what is new, and a locked item is never reopened (the ledger's
``add`` leaves a present key alone).
"""
