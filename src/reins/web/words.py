"""The dashboard's words for tries, outcomes and times: one vocabulary on every page.

- **answer k of N**: what was judged. ``k`` is the failures used before the answer, plus one
  (generation errors, judge errors and a person's actions are not answers); ``N`` is the
  quest's ``max_tries``, the answers allowed.
- **f of N failures used**: the ledger's ``tries``, a count of judged FAILs (the words of
  :mod:`reins.gate.wording`, as the loop's lines and ``submit`` say them).
- **DONE** keeps its name and says what it means: "DONE — out of tries, not passed", or
  "DONE (unsolved)" where space is tight; a DONE a person's reject locked says so: "DONE —
  rejected by a person", "DONE (rejected)" (no try ran out: the person decided).

Times are the ledger's ISO 8601 stamps in UTC; how long ago one was is worked out here, on the
server, against a ``now`` the page passes (a report made offline says it against the moment it
was made), so no page depends on the reader's clock.
"""

from __future__ import annotations

from datetime import UTC, datetime

from reins.gate.wording import answer_of, failures_of, state_meaning, state_short
from reins.store.model import Attempt, AttemptKind, Item, State


def state_text(state: State | str, *, long: bool = False, rejected: bool = False) -> str:
    """The state's name, and for DONE what it means (``rejected``: a person's reject locked
    it, so no try ran out)."""
    name = str(state)
    return state_meaning(name, rejected=rejected) if long else state_short(name, rejected=rejected)


def rejected(last: Attempt | None) -> bool:
    """Whether ``last`` (an item's last turn) is a person's reject: its DONE is theirs."""
    return last is not None and last.kind is AttemptKind.HUMAN and last.action == "reject"


def of(n: int, allowed: int | None) -> str:
    """``n of N``, or ``n`` alone when the answers allowed are not known (no quest given)."""
    return f"{n} of {allowed}" if allowed is not None else str(n)


def answer(a: Attempt) -> int | None:
    """Which answer of its round a judged attempt was (1 = the first); None for any other."""
    if a.kind is not AttemptKind.JUDGED:
        return None
    # tries_after counts the FAILs up to and including this answer; only a FAIL adds one.
    return a.tries_after - (1 if a.outcome == "FAIL" else 0) + 1


def what(a: Attempt, allowed: int | None) -> str:
    """What happened in a turn: "FAIL on answer 1 of 3", "generation error", "accept by a
    person (PASS)"; a later round says so."""
    from reins.turn.views import label

    k = answer(a)
    if k is None:
        return label(a)
    said = f"{a.outcome or 'judged'} on answer {of(k, allowed)}"
    return said + (f" · round {a.round}" if a.round > 1 else "")


def standing(item: Item, allowed: int | None) -> str:
    """Where an item stands in its round: "answer 2 of 3 next" for a TODO item (the answers
    left to it), "1 of 3 failures used" for a locked one."""
    if item.state is State.TODO:
        return f"answer {of(item.tries + 1, allowed)} next"
    return failures_of(item.tries, allowed)


def turn_text(a: Attempt, allowed: int | None) -> str:
    """A turn in one line, as the loop prints it (its ``turn_line`` without the turn, the key
    and the backend): "FAIL (rule) → TODO, 1 of 3 failures used", "PASS on answer 2 of 3 →
    PASS"; any other turn says what it was and the state it left ("accept by a person →
    PASS"). A later round says so at the end."""
    later = f" · round {a.round}" if a.round > 1 else ""
    if a.kind is not AttemptKind.JUDGED:
        after = state_short(a.state_after, rejected=rejected(a))
        return f"{what(a, allowed).removesuffix(later)} → {after}{later}"
    cause = f" ({a.root_cause})" if a.root_cause else ""
    if a.outcome == "FAIL":
        used = failures_of(a.tries_after, allowed)
        return f"FAIL{cause} → {state_short(a.state_after)}, {used}{later}"
    k = answer_of(answer(a) or a.tries_after + 1, allowed)
    return f"{a.outcome}{cause} on {k} → {state_short(a.state_after)}{later}"


DECIDED = {
    "accept": "accepted",
    "reject": "rejected",
    "reopen": "reopened",
    "rejudge": "re-judged",
    "undo": "decision undone",
}


def decided(last: Attempt | None) -> str | None:
    """Who settled an item by hand, when its last turn is a person's action: "accepted by
    ann" (a locked item that reads PASS is then a person's PASS, not the gate's)."""
    if last is None or last.kind is not AttemptKind.HUMAN or last.action is None:
        return None
    return f"{DECIDED.get(last.action, last.action)} by {last.driver}"


def _when(text: str) -> datetime | None:
    try:
        found = datetime.fromisoformat(text)
    except (TypeError, ValueError):
        return None
    return found if found.tzinfo is not None else found.replace(tzinfo=UTC)


def exact(text: str) -> str:
    """A stamp as a person reads it: ``2026-12-01 14:03:05 UTC``."""
    found = _when(text)
    return text if found is None else found.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def ago(text: str, now: float) -> str:
    """How long before ``now`` (a Unix time) the stamp ``text`` was: "just now", "40 s ago",
    "3 min ago", "5 h ago", "2 days ago"; past a month, the date."""
    found = _when(text)
    if found is None:
        return text
    seconds = now - found.timestamp()
    if seconds < 10:  # a clock a little ahead of this one reads as now, not as the future
        return "just now"
    if seconds < 60:
        return f"{int(seconds)} s ago"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86_400:
        return f"{int(seconds // 3600)} h ago"
    days = int(seconds // 86_400)
    if days < 31:
        return "1 day ago" if days == 1 else f"{days} days ago"
    return found.astimezone(UTC).strftime("%Y-%m-%d")
