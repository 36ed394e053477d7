"""What a reviewer reads of a REVIEW item, for every surface: its text and ``reins review``'s
lines.

The dashboard's review card and ``reins review`` show the same text of an item (as its quest
renders it, or its payload); only ``review`` and the dashboard load this module.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from reins.quest import Quest
from reins.store.model import Attempt, Item
from reins.turn.compose import render
from reins.turn.views import label


@dataclass(frozen=True, slots=True)
class Source:
    """An item as a reviewer reads it: ``text`` and what it is (``rendered``: as the quest
    renders it, the first layer of every prompt; else the payload, with ``problem`` saying why
    when the quest could not render it)."""

    text: str
    rendered: bool
    problem: str | None = None


def source(quest: Quest | None, item: Item) -> Source:
    """The item's text as its quest renders it; its payload without the quest, or when the
    quest's render fails on it (then saying why, rather than failing the page or command)."""
    payload = json.dumps(item.payload, indent=2, ensure_ascii=False, sort_keys=True)
    if quest is None:
        return Source(payload, rendered=False)
    try:
        return Source(render(quest, item), rendered=True)
    except Exception as exc:  # a quest's code on a payload it did not expect: show, not fail
        return Source(payload, rendered=False, problem=f"{type(exc).__name__}: {exc}")


REVIEW_EXCERPT = 600  # characters of the item's text and of the submission `review` shows


def review_text(
    quest: Quest | None, item: Item, last: Attempt | None, *, now: float, full: bool = False
) -> str:
    """A REVIEW item as ``reins review`` prints it: what it waits on (and who claimed it, while
    the claim is live at ``now``), the item's text, the submission and the facts, each text cut
    at :data:`REVIEW_EXCERPT` characters unless ``full``."""
    from reins.gate import excerpt

    allowed = None if quest is None else quest.max_tries
    what = "REVIEW" if last is None else label(last, answers=True, max_tries=allowed)
    head = f"[?] {item.key}  {what} · root cause {item.root_cause or '-'}"
    if last is not None:
        head += f" · by {last.driver} at {last.recorded_at}"
    if item.lease_owner is not None and (item.lease_expires or 0) > now:
        head += f" · claimed by {item.lease_owner}"
    shown = source(quest, item)
    said = "the item" if shown.rendered else "the item (its payload)"
    text = shown.text if full else excerpt(shown.text, REVIEW_EXCERPT)
    out = [head, f"    {said}:", _indented(text)]
    submission = None if last is None else last.submission
    if submission is None:
        out.append("    submission: none recorded")
    else:
        text = submission if full else excerpt(submission, REVIEW_EXCERPT)
        out += ["    submission:", _indented(text)]
    facts = [] if last is None else last.facts
    out.append("    facts:" if facts else "    facts: none recorded")
    for f in facts:
        out.append(f"      - {f.rule}: {f.where}  expected {f.expected!r}, actual {f.actual!r}")
    return "\n".join(out) + "\n"


def _indented(text: str) -> str:
    return "\n".join("      " + line for line in text.splitlines() or [""])
