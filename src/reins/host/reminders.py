"""Reminders: an agent's tool calls since its last submit, counted in the ledger.

As TodoWrite reminds an agent of its list, the MCP server reminds it of its item: after
:data:`NAG_AFTER` calls that were not a recorded submit, every tool result carries the item in
progress and what remains. The count lives in the ledger's meta table, one key per driver, so a
restarted server under the same driver name goes on counting where the last one stopped.
"""

from __future__ import annotations

from reins.gate.wording import answer_of
from reins.store.model import Item, Stats
from reins.store.protocol import Store

NAG_AFTER = 3
PREFIX = "agents.calls."


def tick(store: Store, driver: str, *, submitted: bool) -> int:
    """Count one tool call of ``driver``; a recorded submit resets the count to 0.

    Returns:
        The calls since the last recorded submit, this one included (0 after a submit).
    """
    key = PREFIX + driver
    if submitted:
        store.set_meta(key, "0")
        return 0
    raw = store.meta(key)
    count = (int(raw) if raw and raw.isdigit() else 0) + 1
    store.set_meta(key, str(count))
    return count


def due(count: int) -> bool:
    """Whether a result carries a reminder: after NAG_AFTER other calls since the last submit."""
    return count > NAG_AFTER


def reminder(count: int, held: Item | None, stats: Stats, max_tries: int) -> str:
    """The reminder text: how long since a submit, the item in progress, what remains."""
    since = f"reminder: {count - 1} tool call(s) since your last submit."
    if held is not None:
        doing = (
            f" In progress: {held.key} ({answer_of(held.tries + 1, max_tries)} next). "
            "Finish it and call "
            "submit: only the gate can mark it done."
        )
    else:
        doing = " You hold no item: call next_item to take one."
    left = (
        f" Remaining: {stats.remaining} of {stats.total} item(s) to do"
        f" ({stats.leased} in progress)."
    )
    return since + doing + left
