"""Withdrawals: a lock already exported, then moved back to TODO by a person, is withdrawn in the
results file that holds it, so a reader of the file never trusts a lock that no longer stands.

A person's action on an item whose lock carries an export mark owes that file a withdrawal: a
reopen (or a re-judge that fails) moves it to TODO, and an action that leaves it locked (a
REVIEW rejected, say) clears its mark, so a reopen after it would find no mark to owe by. The
turn records it in the same transaction as its attempt, as a meta entry: key
``export.withdraw.<item key>``, value the path of the file the lock's batch went to (the meta
table, so no schema changes). The next export to that file claims it like a lock: in one
transaction the entry is deleted and the item, TODO, is marked with the new batch, whose line is
the item's TODO record; finishing the batch clears the mark again. A batch left open by a crash
is written again from what its items are then, as every batch is, so the withdrawal is written
exactly once. An item that locks again before the export needs no withdrawal: its new lock is
exported, superseding the old record, and its entry is dropped (so is the entry of an action
that left the item locked, unless a reopen follows before the export).
"""

from __future__ import annotations

from reins.store.model import Item

PREFIX = "export.withdraw."
# The first key after every key that starts with PREFIX ("." + 1 is "/"), for range scans.
PREFIX_END = PREFIX[:-1] + "/"


def meta_key(key: str) -> str:
    """The meta key of ``key``'s pending withdrawal."""
    return PREFIX + key


def owed(before: Item, after: Item) -> bool:
    """Whether the turn that took ``before`` to ``after`` owes a withdrawal: a person moved an
    exported lock (back to TODO, or to another lock, which clears the mark)."""
    return before.exported and before.state.terminal and not after.exported
