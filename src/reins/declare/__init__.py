"""Quests as documents: ``quest.toml`` and ``gate.md`` read into a :class:`~reins.quest.Quest`.

One concept per module: :mod:`~reins.declare.tables` (Markdown tables with positions),
:mod:`~reins.declare.gatedoc` (gate.md → a gate, from :mod:`~reins.declare.rules`,
:mod:`~reins.declare.parameters` and :mod:`~reins.declare.edges`), :mod:`~reins.declare.questdoc`
(quest.toml → a Quest), :mod:`~reins.declare.template` (Jinja2, sandboxed, imported lazily),
:mod:`~reins.declare.examples` (every example judged by the quest's own gate at load).
Nothing is imported here: turn.md's reader uses the table module on every start.
"""
