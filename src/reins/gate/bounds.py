"""Bounds: how much of a fact, and of the feedback a prompt carries, the gate lets through.

A generator's answer is hostile and may be large. A rule that quotes it whole would put a
megabyte into a fact, into the text ``submit`` prints and into every later prompt of the item,
which no model can then read: the item would hold the loop hostage (invariant 15). So every
fact's ``where``, ``expected`` and ``actual`` are cut at :data:`FACT_CAP` characters, and the
feedback shows at most :data:`FACTS_SHOWN` facts and :data:`FEEDBACK_CAP` characters. Each cut
says how much it left out; the verdict keeps every fact and the ledger the whole submission.

A cut text is never longer than its cap, so cutting it again changes nothing: a fact bounded
where a rule fired stays the same when its verdict is built, recorded and rendered.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from reins.values import Fact

FACT_CAP = 2_000
"""Characters kept of a fact's ``where``, ``expected`` and ``actual`` each (the facts of the
shipped packs need under 400)."""

FACTS_SHOWN = 20
"""Facts the feedback lists; the rest are counted, and kept in the verdict and the log."""

FEEDBACK_CAP = 16_000
"""Characters of the feedback: what ``submit`` prints and the next prompt quotes."""


def clip(text: str, cap: int) -> str:
    """``text``, or its start and ``… (N more characters)`` in at most ``cap`` characters."""
    if len(text) <= cap:
        return text
    # Room for the marker at its longest (N is at most len(text)), so the result fits the cap.
    keep = max(cap - len(_marker(len(text))), 0)
    return text[:keep] + _marker(len(text) - keep)


def clip_block(text: str, cap: int) -> str:
    """:func:`clip` for a block of lines: a final newline stays the last character."""
    if len(text) <= cap or not text.endswith("\n"):
        return clip(text, cap)
    return clip(text[:-1], cap - 1) + "\n"


def bounded(fact: Fact) -> Fact:
    """``fact`` with its where, expected and actual cut at :data:`FACT_CAP` characters."""
    fields = (fact.where, fact.expected, fact.actual)
    if all(not isinstance(v, str) or len(v) <= FACT_CAP for v in fields):
        return fact  # the common case: nothing to cut, nothing copied
    where, expected, actual = (clip(v, FACT_CAP) if isinstance(v, str) else v for v in fields)
    return replace(fact, where=where, expected=expected, actual=actual)


def bounded_facts(facts: Iterable[Fact]) -> tuple[Fact, ...]:
    """Every fact of ``facts``, each :func:`bounded`."""
    return tuple(bounded(f) for f in facts)


def hidden_line(count: int, indent: str) -> str:
    """The line that stands for ``count`` facts the feedback does not list."""
    return f"{indent}… and {count} more fact(s), not shown here (the log keeps every one)"


def _marker(left_out: int) -> str:
    return f"… ({left_out} more characters)"
