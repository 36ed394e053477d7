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

How a retry uses the log is a :class:`~reins.retry.RetryPolicy`, one step per retry: the step of
the item's n-th FAIL in its round (:func:`tries_before`) makes answer n + 1, its feedback and,
when it declares one, its sampling temperature (carried on the prompt; the first answer always
samples at the backend's own, so it is the same under every policy). Under ``facts+previous``
the submission that failed is shown as what failed: before the feedback, with a word that it is
not to be sent back unchanged, so the facts come after it (a small model shown its answer last,
bare, copies it back).

What the feedback layer quotes is bounded (invariant 15): the feedback as the gate rendered it
(:data:`~reins.gate.bounds.FEEDBACK_CAP`; a ledger written by an older reins may hold more) and,
under ``facts+previous``, at most :data:`PREVIOUS_CAP` characters of the submission that failed.
"""

from __future__ import annotations

from collections.abc import Sequence

from reins.gate.bounds import FEEDBACK_CAP, clip_block
from reins.quest import Quest
from reins.retry import parse_retry
from reins.store.model import Attempt, AttemptKind, Item, State
from reins.values import Prompt

FEEDBACK_HEADER = "## Your last submission failed the gate"
EXAMPLES_HEADER = "## Examples"
# Not a prefix of FEEDBACK_HEADER: a reader (model or parser) tells the two sections apart.
PREVIOUS_HEADER = "## The submission that failed"
PREVIOUS_CAP = 16_000
"""Characters of the failed submission a ``facts+previous`` prompt quotes; the log keeps all."""
PREVIOUS_NOTE = (
    "That answer failed the gate, as the facts below say; it is shown for reference only. "
    "Do not send it back unchanged: write a new answer, in full, that fixes what they point to."
)


def last_judged(log: Sequence[Attempt]) -> Attempt | None:
    """The most recent judged attempt (on a TODO item, always a FAIL), or None."""
    for attempt in reversed(log):
        if attempt.judged:
            return attempt
    return None


def tries_before(log: Sequence[Attempt]) -> int:
    """The item's FAILs in its round before the next turn, read from the log (not the item, so
    that a page showing an old turn composes it as it was): which retry step makes it."""
    for attempt in reversed(log):
        if attempt.kind in (AttemptKind.JUDGED, AttemptKind.HUMAN):
            return attempt.tries_after
    return 0


def compose(
    quest: Quest, item: Item, log: Sequence[Attempt], *, policy: str | None = None
) -> Prompt:
    """Build the prompt for the next turn of ``item``.

    Args:
        policy: ``facts`` (feedback of the last judged FAIL), ``facts+previous`` (also the
            submission that failed) or ``fresh`` (no feedback), or a schedule of them per
            retry with declared temperatures (:mod:`reins.retry`); default the quest's.

    Raises:
        ConfigError: a policy that does not parse.
    """
    retry = tries_before(log)
    step = parse_retry(policy or quest.retry).step(retry)
    last = None if step.feedback == "fresh" else last_judged(log)
    user = render(quest, item)
    if last is not None:
        # The coaching depends on this item's last FAIL: in the system text it would make the
        # shared prefix differ from one item to the next and defeat the provider's cache.
        coaching = quest.coaching.get(last.root_cause or "")
        if coaching:
            user = f"{user}\n\n{coaching}"
        if step.feedback == "facts+previous" and last.submission is not None:
            previous = clip_block(last.submission, PREVIOUS_CAP).rstrip("\n")
            user = f"{user}\n\n{PREVIOUS_HEADER}\n\n{previous}\n\n{PREVIOUS_NOTE}"
        # A no-op on feedback rendered by this reins, which fits already (feedback parity).
        feedback = clip_block(last.feedback, FEEDBACK_CAP)
        user = f"{user}\n\n{FEEDBACK_HEADER}\n\n{feedback}"
    temperature = step.temperature if retry else None
    return Prompt(
        shared_text(quest), user, key=item.key, turn=item.turns + 1, temperature=temperature
    )


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
