"""Quests in Python: the ``emails`` example quest, and :mod:`reins.quests.find`, which finds any
quest by reference (a folder, a pack's name, ``module:attr``, an entry point)."""
