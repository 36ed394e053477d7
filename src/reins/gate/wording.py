"""The words for tries and outcomes, written once for every surface (the README's glossary).

- **answer k of N**: what was judged. ``k`` is the k-th judged answer of the item in its
  round (the failures used before it, plus one); ``N`` is the quest's ``max_tries``, the
  *answers allowed*. Generation errors, judge errors and a person's actions are no answers.
- **f of N failures used**: the judged FAILs of the round, the ledger's ``tries``.
- **DONE**: out of tries, not passed (*unsolved*); never worded or coloured as a success. A
  DONE a person's reject locked says so instead: rejected by a person (*rejected*); so does one
  a person dropped: dropped by a person (*dropped*).

``submit``, ``next``, ``status``, ``report``, ``log``, the loop's lines and summary and the MCP
tools all word these through this module, so no two of them can drift apart.
"""

from __future__ import annotations

DONE_MEANS = "out of tries, not passed"
"""What DONE means, said wherever DONE is shown."""

UNSOLVED = "unsolved"
"""DONE's one-word meaning, for summaries and tight places."""

REJECTED = "rejected by a person"
"""What DONE means when a person's reject locked it: no try ran out, a person decided."""

DROPPED = "dropped by a person"
"""What DONE means when a person dropped the item: retired for good, never worked again."""


FLIP = "To flip the verdict to "
"""How the walkthrough's last line of a FAIL starts: what the next answer must clear. Where no
answer is left (the FAIL locked the item DONE), :func:`~reins.gate.verdict.render` says so
instead."""
SPENT = (
    "No answer is left to clear them: the item is DONE, out of tries, not passed "
    "(a person may reopen it for a new round)."
)


def answer_of(k: int, allowed: int | None) -> str:
    """``answer 2 of 3`` (``answer 2`` when the answers allowed are not known: no quest)."""
    return f"answer {k}" + (f" of {allowed}" if allowed is not None else "")


def failures_of(used: int, allowed: int | None) -> str:
    """``1 of 3 failures used`` (``1 failure used`` when the answers allowed are not known)."""
    if allowed is None:
        return f"{used} failure{'' if used == 1 else 's'} used"
    return f"{used} of {allowed} failures used"


def answers_left(used: int, allowed: int) -> str:
    """``2 answers left``, ``1 answer left``, ``no answer left``."""
    left = max(allowed - used, 0)
    if left == 0:
        return "no answer left"
    return f"{left} answer{'' if left == 1 else 's'} left"


def judged_answer(outcome: str | None, failures_after: int) -> int | None:
    """The number of the answer a judged attempt judged, from the failures used after it.

    A FAIL is itself counted in ``failures_after``; any other outcome is not. None for an
    attempt that judged no answer (``outcome`` None: an error or a person's action).
    """
    if outcome is None:
        return None
    return failures_after if outcome == "FAIL" else failures_after + 1


def state_meaning(state: str, *, rejected: bool = False, dropped: bool = False) -> str:
    """The state's name, and for DONE what it means: ``DONE — out of tries, not passed``, or
    ``DONE — rejected by a person`` when a person's reject locked it (``rejected``), ``DONE —
    dropped by a person`` when a person dropped it (``dropped``)."""
    if state != "DONE":
        return state
    return f"{state} — {DROPPED if dropped else REJECTED if rejected else DONE_MEANS}"


def state_short(state: str, *, rejected: bool = False, dropped: bool = False) -> str:
    """The state's name, and for DONE its one-word meaning: ``DONE (unsolved)``, or
    ``DONE (rejected)`` when a person's reject locked it (``rejected``), ``DONE (dropped)``
    when a person dropped it (``dropped``)."""
    if state != "DONE":
        return state
    return f"{state} ({'dropped' if dropped else 'rejected' if rejected else UNSOLVED})"
