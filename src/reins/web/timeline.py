"""An item's whole log as a timeline: each turn with its prompt, submission, facts, verdict,
driver, usage, and what changed since the previous submission; a coding turn's submission as
its diff per file, and the item's latest change beside the test output of its last judged
turn."""

from __future__ import annotations

import dataclasses
import difflib
import json
from dataclasses import dataclass

from reins.errors import ConfigError
from reins.quest import Quest
from reins.retry import parse_retry
from reins.store.model import Attempt, AttemptKind, Item
from reins.store.protocol import Store
from reins.web.desk import fact_texts, hidden
from reins.web.patch import Patch, patch
from reins.web.words import decided, rejected, turn_text


@dataclass(frozen=True, slots=True)
class DiffLine:
    """One line of a unified diff; ``sign`` is ``+``, ``-``, ``@`` (a hunk header) or blank."""

    sign: str
    text: str


@dataclass(frozen=True, slots=True)
class Turn:
    """One attempt as the timeline shows it.

    ``prompt`` is the prompt composed again from the log before this turn (None for a person's
    action, or without the quest); ``prompt_matches`` says whether its digest is the one
    recorded (None when nothing was recorded to compare).
    """

    attempt: Attempt
    label: str
    prompt: str | None
    prompt_matches: bool | None
    diff: tuple[DiffLine, ...]
    change: Patch | None = None

    @property
    def a(self) -> Attempt:
        return self.attempt


@dataclass(frozen=True, slots=True)
class Timeline:
    """An item, its payload, its turns, and the answers its quest allows (None: no quest);
    ``decided``: who settled it by hand ("accepted by ann"), when its last turn is a person's
    (``rejected``: a person's reject, so its DONE reads "DONE — rejected by ann");
    ``change``: a coding item's latest change, per file, and ``tested`` the last judged turn
    (its facts are the test output beside it); ``hidden``: how many hidden characters
    (bidirectional controls, zero-widths) the page shows as markers."""

    item: Item
    payload: str
    turns: tuple[Turn, ...]
    allowed: int | None
    decided: str | None = None
    change: Patch | None = None
    tested: Attempt | None = None
    rejected: bool = False
    hidden: int = 0


def _a_policy(recorded: str) -> bool:
    """Whether ``recorded`` is a retry policy reins reads (a name or a schedule of them)."""
    try:
        parse_retry(recorded)
    except (ConfigError, ValueError):
        return False
    return True


def _prompt(quest: Quest, item: Item, log: list[Attempt], a: Attempt) -> tuple[str, bool | None]:
    from reins.turn.compose import compose

    before = dataclasses.replace(item, turns=a.turn - 1, round=a.round)
    policy = a.policy if _a_policy(a.policy) else None  # else the quest's own
    try:
        prompt = compose(quest, before, log[: a.turn - 1], policy=policy)
    except Exception as exc:  # the quest's render failed on this payload: show why, not a 500
        return f"(the prompt cannot be composed again: {type(exc).__name__}: {exc})", False
    matches = None if not a.prompt_digest else prompt.digest() == a.prompt_digest
    return prompt.text(), matches


def _diff(before: str | None, after: str | None) -> tuple[DiffLine, ...]:
    if before is None or after is None or before == after:
        return ()
    lines = difflib.unified_diff(
        before.splitlines(), after.splitlines(), "previous", "this", lineterm="", n=2
    )
    out = []
    for line in list(lines)[2:]:  # the ---/+++ header names nothing useful here
        sign = line[:1] if line[:1] in "+-@" else " "
        out.append(DiffLine(sign, line[1:] if sign in "+- " else line))
    return tuple(out)


def timeline(store: Store, quest: Quest | None, key: str) -> Timeline:
    """Raises NotFound for an unknown key."""
    item, log = store.snapshot(key)
    allowed = None if quest is None else quest.max_tries
    turns = []
    previous: str | None = None
    change: Patch | None = None
    for a in log:
        prompt, matches = None, None
        if quest is not None and a.kind is not AttemptKind.HUMAN:
            prompt, matches = _prompt(quest, item, log, a)
        own = patch(a)
        diff = () if own is not None else _diff(previous, a.submission)  # per file instead
        turns.append(Turn(a, turn_text(a, allowed), prompt, matches, diff, own))
        if a.submission is not None:
            previous = a.submission
        change = own or change
    payload = json.dumps(item.payload, indent=2, ensure_ascii=False, sort_keys=True)
    tested = next((a for a in reversed(log) if a.judged), None)
    last = log[-1] if log else None
    texts: list[str | None] = [item.key, payload]
    for a in log:
        texts += [a.submission, a.note, a.error, a.feedback, *fact_texts(a.facts)]
    return Timeline(
        item, payload, tuple(turns), allowed, decided(last), change, tested, rejected(last),
        hidden(*texts),
    )  # fmt: skip
