"""The facts a quest can raise besides its gate's rules: its ``prepare``'s and reins' own.

``reins rules`` lists the gate's catalog, and then these, so that what blocks an answer is one
checklist: a quest's ``prepare`` refuses a submission it cannot read with a rule of its own
(``json-shape``, say; the quest names it where it gives it coaching), and reins itself refuses a
submission too large or not UTF-8 (``reins:submission``) and, for a quest with a workspace, a
change over its caps or that does not apply (``reins:change``), a change to a path the judge
owns (``reins:judge-owned``), a link out of the tree (``reins:link``), a module named like one
of Python's own (``reins:shadow``) and a file in the hidden tests' place (``reins:hidden``).
Last come a coding
quest's land rules, which ``reins land`` judges after each merge (and the gate, on a land
item). Each comes with the coaching the next prompt carries after a FAIL of it, if any.
"""

from __future__ import annotations

from dataclasses import dataclass

from reins.gate import Level
from reins.quest import Quest
from reins.turn.judge import SUBMISSION_RULE

# reins' own rules: id → (for a quest with a workspace only, what it refuses)
OWN: dict[str, tuple[bool, str]] = {
    SUBMISSION_RULE: (False, "a submission over its size limit, or not UTF-8 text"),
    "reins:change": (True, "a change over its caps (files, bytes), or a patch that does not apply"),
    "reins:judge-owned": (True, "a change to a path the judge owns ([workspace] judge)"),
    "reins:link": (
        True,
        "a symbolic link that leads out of the tree, followed as the system would",
    ),
    "reins:shadow": (True, "a module added at the top named like one of Python's own (json.py)"),
    "reins:hidden": (True, "a file or link where a folder of the judge's hidden tests goes"),
}

# what reins' readers of quest documents refuse in their prepare, by rule id
PREPARED = {"reins:json": "a submission that is not one JSON value ([prompt] output = json)"}


@dataclass(frozen=True, slots=True)
class Raised:
    """A fact that no rule of the gate's catalog raises: who raises it, what it refuses, and
    the coaching the quest gives for it (empty: none)."""

    id: str
    level: Level
    by: str  # "prepare" (the quest's own), "reins", or "land" (a land rule)
    description: str
    coaching: str


def raised_beside_the_gate(quest: Quest) -> list[Raised]:
    """The facts ``quest`` can raise outside its gate: its ``prepare``'s, reins', its land
    rules'."""
    land = {r.id: r for r in quest.land_rules}
    known = {e.id for e in quest.judge.catalog()} | set(OWN) | set(land)
    found = [
        Raised(rule, Level.FAIL, "prepare", PREPARED.get(rule, "a submission it cannot read"), text)
        for rule, text in sorted(quest.coaching.items())
        if rule not in known
    ]
    for rule, (workspace_only, refuses) in OWN.items():
        if workspace_only and quest.workspace is None:
            continue
        found.append(Raised(rule, Level.FAIL, "reins", refuses, quest.coaching.get(rule, "")))
    for r in land.values():
        found.append(Raised(r.id, r.level, "land", r.description, quest.coaching.get(r.id, "")))
    return found
