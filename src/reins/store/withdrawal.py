"""Withdrawals: a lock already exported, then moved back to TODO by a person, is withdrawn in
the results file that holds it, so a reader of the file never trusts a lock that no longer
stands.

A person's reopen (or a re-judge that fails) of an item whose lock carries an export mark owes
that file a withdrawal. The turn records it in the same transaction as its attempt, as a meta
entry: key ``export.withdraw.<item key>``, value the path of the file the lock's batch went to
(the meta table, so no schema changes). The next export to that file claims it like a lock: in
one transaction the entry is deleted and the item, TODO, is marked with the new batch, whose
line is the item's TODO record; finishing the batch clears the mark again. A batch left open by
a crash is written again from what its items are then, as every batch is, so the withdrawal is
written exactly once. An item that locks again before the export needs no withdrawal: its new
lock is exported, superseding the old record, and its entry is dropped. A person who decides an
exported REVIEW (accept, reject) moves it to another lock and takes its mark off, so that turn
records the entry too: should the item be reopened before the decision is exported, the file
still holds the REVIEW, and the entry is what says which file.
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
    """Whether the turn that took ``before`` to ``after`` may owe a withdrawal: it took the
    export mark off an exported lock. A move back to TODO owes one; a move to another lock (a
    person's accept or reject of a REVIEW) owes one only if the item is back to TODO before its
    new lock is exported, and the entry recorded now keeps the file for that case (the mark,
    which names it, is gone): an export that finds the item locked only drops the entry."""
    return before.exported and before.state.terminal and not after.exported
