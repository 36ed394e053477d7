"""Escalation: which generator a turn goes to, read from the log on every turn.

An item moves to the stronger generator once any of its judged FAILs had a root cause the quest
(or the command line) lists in ``escalate_on``. There is no latch in memory: the same log gives
the same choice in any process, so a restarted loop picks the same backend. Generation errors
have no root cause and never escalate.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TypeVar

from reins.gate import Outcome
from reins.store.model import Attempt

G = TypeVar("G")


def escalating_cause(log: Sequence[Attempt], rules: Collection[str]) -> str | None:
    """The root cause of the first judged FAIL in ``log`` listed in ``rules``, or None."""
    if not rules:
        return None
    for attempt in log:
        if (
            attempt.judged
            and attempt.outcome == Outcome.FAIL.value
            and attempt.root_cause is not None
            and attempt.root_cause in rules
        ):
            return attempt.root_cause
    return None


def choose(
    log: Sequence[Attempt], rules: Collection[str], primary: G, strong: G | None
) -> tuple[G, str | None]:
    """The generator for the next turn, and the root cause that escalated it (None: primary).

    Without a stronger generator every turn stays on ``primary``, and the cause is None.
    """
    if strong is None:
        return primary, None
    cause = escalating_cause(log, rules)
    return (strong, cause) if cause is not None else (primary, None)
