"""Compose: the prompt as a pure function of (quest, item, log).

What every item shares comes first, in the same bytes: the system text is the manual and the
quest's worked examples (each an input as ``render`` shows it and an output that passes the
gate), and nothing else, so a provider's prompt cache can keep it from one item to the next (a
backend marks its end where the provider wants a marker). The user text holds what depends on
the item: what to do for it, then, after a judged FAIL, the coaching for that FAIL's root cause
and the feedback (the FAIL exactly as ``submit`` printed it). Generation errors never reach a
prompt; how a retry uses the log is the retry policy. Each backend call also carries a seed
derived from (item key, turn number): a retry samples anew, a restarted process repeats the
call.

What the feedback layer quotes is bounded (invariant 15): the feedback as the gate rendered it
(:data:`~reins.gate.bounds.FEEDBACK_CAP`; a ledger written by an older reins may hold more) and,
under ``facts+previous``, at most :data:`PREVIOUS_CAP` characters of the submission that failed.
"""

from __future__ import annotations

from collections.abc import Sequence

from reins.gate.bounds import FEEDBACK_CAP, clip_block
from reins.quest import RETRY_POLICIES, Quest
from reins.store.model import Attempt, Item, State
from reins.values import Prompt

FEEDBACK_HEADER = "## Your last submission failed the gate"
EXAMPLES_HEADER = "## Examples"
# Not a prefix of FEEDBACK_HEADER: a reader (model or parser) tells the two sections apart.
PREVIOUS_HEADER = "## The submission that failed"
PREVIOUS_CAP = 16_000
"""Characters of the failed submission a ``facts+previous`` prompt quotes; the log keeps all."""


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
    user = render(quest, item)
    if last is not None:
        # The coaching depends on this item's last FAIL: in the system text it would make the
        # shared prefix differ from one item to the next and defeat the provider's cache.
        coaching = quest.coaching.get(last.root_cause or "")
        if coaching:
            user = f"{user}\n\n{coaching}"
        # A no-op on feedback rendered by this reins, which fits already (feedback parity).
        feedback = clip_block(last.feedback, FEEDBACK_CAP)
        user = f"{user}\n\n{FEEDBACK_HEADER}\n\n{feedback}"
        if policy == "facts+previous" and last.submission is not None:
            previous = clip_block(last.submission, PREVIOUS_CAP)
            user = f"{user}\n{PREVIOUS_HEADER}\n\n{previous}\n"
    return Prompt(shared_text(quest), user, key=item.key, turn=item.turns + 1)


def render(quest: Quest, item: Item) -> str:
    """What to do for ``item``: the quest's ``render``, or, for a land item of a coding quest,
    reins' own task text (:meth:`~reins.workspace.landtask.LandTask.render`: the quest's
    template cannot know its fields)."""
    if quest.workspace is not None:
        from reins.workspace.landtask import LandTask  # only a coding quest's prompt loads it

        task = LandTask.of(item.payload)
        if task is not None:
            return task.render()
    return quest.render(item)


def shared_text(quest: Quest) -> str:
    """The system text of every prompt of ``quest``: the manual, then the examples layer."""
    if not quest.examples:
        return quest.manual
    shown = examples_text(quest)
    return f"{quest.manual}\n\n{shown}" if quest.manual else shown


def examples_text(quest: Quest) -> str:
    """The examples layer: each example's input as ``render`` shows it, then its output."""
    parts = [EXAMPLES_HEADER]
    for n, example in enumerate(quest.examples, start=1):
        item = Item(example.key or f"example-{n}", State.TODO, 0, example.input)
        parts.append(
            f"### Example {n}\n\nInput:\n\n{quest.render(item).rstrip()}\n\n"
            f"Output:\n\n{example.output.rstrip()}"
        )
    return "\n\n".join(parts)
