"""Compose: the prompt as a pure function of (quest, item, log).

Three layers: what to do, the manual (with coaching for the last judged FAIL's root cause),
and the feedback (that FAIL exactly as ``submit`` printed it). Generation errors never reach a
prompt; how a retry uses the log is the retry policy. Each backend call also carries a seed
derived from (item key, turn number): a retry samples anew, a restarted process repeats the call.
"""

from __future__ import annotations

from collections.abc import Sequence

from reins.quest import RETRY_POLICIES, Quest
from reins.store.model import Attempt, Item
from reins.values import Prompt

FEEDBACK_HEADER = "## Your last submission failed the gate"
# Not a prefix of FEEDBACK_HEADER: a reader (model or parser) tells the two sections apart.
PREVIOUS_HEADER = "## The submission that failed"


def last_judged(log: Sequence[Attempt]) -> Attempt | None:
    """The most recent judged attempt (on a TODO item, always a FAIL), or None."""
    for attempt in reversed(log):
        if attempt.judged:
            return attempt
    return None


def compose(
    quest: Quest, item: Item, log: Sequence[Attempt], *, policy: str | None = None
) -> Prompt:
    """Build the prompt for the next turn of ``item``.

    Args:
        policy: ``facts`` (feedback of the last judged FAIL), ``facts+previous`` (also the
            submission that failed) or ``fresh`` (no feedback); default the quest's.
    """
    policy = policy or quest.retry
    if policy not in RETRY_POLICIES:
        raise ValueError(f"unknown retry policy {policy!r}")
    last = None if policy == "fresh" else last_judged(log)
    system = quest.manual
    user = quest.render(item)
    if last is not None:
        coaching = quest.coaching.get(last.root_cause or "")
        if coaching:
            system = f"{system}\n\n{coaching}" if system else coaching
        user = f"{user}\n\n{FEEDBACK_HEADER}\n\n{last.feedback}"
        if policy == "facts+previous" and last.submission is not None:
            user = f"{user}\n{PREVIOUS_HEADER}\n\n{last.submission}\n"
    return Prompt(system, user, key=item.key, turn=item.turns + 1)
