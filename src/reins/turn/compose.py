"""Compose: the prompt as a pure function of (quest, item, log).

Three layers: what to do, the manual (with coaching for the last judged FAIL's root cause),
and the feedback (that FAIL exactly as ``submit`` printed it). Generation errors never reach a
prompt; how a retry uses the log is the retry policy. Each backend call also carries a seed
derived from (item key, turn number): a retry samples anew, a restarted process repeats the call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from reins.ledger import Attempt, Item
from reins.quest import RETRY_POLICIES, Quest

FEEDBACK_HEADER = "## Your last submission failed the gate"
# Not a prefix of FEEDBACK_HEADER: a reader (model or parser) tells the two sections apart.
PREVIOUS_HEADER = "## The submission that failed"


@dataclass(frozen=True, slots=True)
class Prompt:
    """What a generator is asked: system text and user text.

    ``key`` and ``turn`` say which item and turn it was composed for (empty and 0 for a
    prompt built by hand). They are not part of the text: two prompts are equal when their
    texts are.
    """

    system: str
    user: str
    key: str = field(default="", compare=False)
    turn: int = field(default=0, compare=False)

    def text(self) -> str:
        """The prompt as one text, as ``reins next`` prints it."""
        if not self.system:
            return self.user
        return f"{self.system}\n\n{self.user}"

    def digest(self) -> str:
        """A short fingerprint, recorded on each attempt."""
        import hashlib  # here, not at import: `reins next` prints text and needs no digest

        h = hashlib.sha256(self.system.encode() + b"\x00" + self.user.encode())
        return h.hexdigest()[:16]

    @property
    def seed(self) -> int:
        """The seed of the backend call for this prompt: :func:`call_seed` of key and turn."""
        return call_seed(self.key, self.turn)


def call_seed(key: str, turn: int) -> int:
    """The sampling seed for turn ``turn`` of item ``key``: the same in every process.

    A hash (BLAKE2b), never Python's salted ``hash()``, cut to 31 bits so that every backend
    takes it (some keep seeds in a signed 32-bit integer, llama.cpp reads 0xFFFFFFFF as
    "random").
    """
    import hashlib

    digest = hashlib.blake2b(f"{key}\x00{turn}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") & 0x7FFF_FFFF


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
