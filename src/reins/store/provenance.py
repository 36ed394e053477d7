"""Provenance: each attempt follows from the turn before by turn.md's tables, and each lock
from the attempt that left it.

A lock stands only if its item's last attempt produced it: a judged attempt whose outcome
leads to exactly that state by the record table (PASS → PASS, REVIEW → REVIEW, SKIPPED,
BLOCKED, a FAIL on the last try → DONE), or a person's action by the human table, each with
the tries and the round the table gives after the turn before. A generation or judge error
never locks. Anything else is a lock no attempt produced — an item moved by hand-written SQL
(``UPDATE items SET state = 'PASS'``), an attempt row forged with an outcome or tries that do
not follow — which ``reins ledger check`` reports (:mod:`reins.store.checks`) and no export
writes (:mod:`reins.store.export`).

The store knows nothing of ``turn``: :data:`JUDGED` and :data:`HUMAN` are its reading of
turn.md's record and human tables (a test holds them to the document), rendered here into SQL
that both engines run and into the plain words that say what does not follow. Whether a FAIL
reached ``max_tries`` is the quest's to say, so a FAIL may leave TODO or DONE. A forger who
writes a whole consistent log (attempt rows that follow, an item that follows from them) is
not found here: only judging the recorded submission again (``rejudge``) tells. What does
not follow is said in words by :mod:`reins.store.lockfault`, loaded only when something does not.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from reins.store.model import TERMINAL_STATES, AttemptKind, State

TODO = State.TODO.value
TERMINAL = tuple(s.value for s in TERMINAL_STATES)
JUDGED_KIND = AttemptKind.JUDGED.value
HUMAN_KIND = AttemptKind.HUMAN.value
ERROR_KINDS = (AttemptKind.GENERATION_ERROR.value, AttemptKind.JUDGE_ERROR.value)


# NamedTuples, not dataclasses: this module loads with every command that may export (an
# agent's submit), and a dataclass costs ten times as much to make (tests/test_import_budget.py).
class Judgment(NamedTuple):
    """A judged outcome by the record table: the states it may leave, the tries it uses."""

    leaves: tuple[str, ...]
    uses: int


class Act(NamedTuple):
    """A person's action by the human table: the states it acts on, the state it leaves,
    whether it starts the next round (with no tries used) or keeps the round and the tries."""

    acts_on: tuple[str, ...]
    leaves: str
    new_round: bool


JUDGED: dict[str, Judgment] = {
    "PASS": Judgment(("PASS",), 0),
    "REVIEW": Judgment(("REVIEW",), 0),
    "SKIPPED": Judgment(("SKIPPED",), 0),
    "BLOCKED": Judgment(("BLOCKED",), 0),
    "FAIL": Judgment((TODO, "DONE"), 1),  # TODO below max_tries, DONE when it reaches it
}
# Keyed by (action, re-judged outcome); accept, reject, reopen, drop and undo apply no verdict.
HUMAN: dict[tuple[str, str | None], Act] = {
    ("accept", None): Act(("REVIEW",), "PASS", False),
    ("reject", None): Act(("REVIEW",), "DONE", False),
    ("reopen", None): Act(TERMINAL, TODO, True),
    **{("rejudge", o): Act(TERMINAL, o, False) for o in ("PASS", "REVIEW", "SKIPPED", "BLOCKED")},
    ("rejudge", "FAIL"): Act(TERMINAL, TODO, True),
    ("drop", None): Act((TODO, *TERMINAL), "DONE", False),
    ("undo", None): Act(("PASS", "DONE"), "REVIEW", False),
}


# -- the SQL: attempt ``a``, the attempt before it ``p`` (none before turn 1), item ``i`` ------

# What the turn before left; a first turn starts from a fresh item.
_S0, _T0, _R0 = (
    "coalesce(p.state_after, 'TODO')",
    "coalesce(p.tries_after, 0)",
    "coalesce(p.round, 1)",
)


def _in(values: Sequence[str]) -> str:
    return "(" + ", ".join(f"'{v}'" for v in values) + ")"


def _case(column: str, branches: dict[str, str]) -> str:
    """``branches`` by the value of ``column``; any other value (NULL too) is false."""
    whens = " ".join(f"WHEN '{value}' THEN {test}" for value, test in branches.items())
    return f"CASE {column} {whens} ELSE FALSE END"


def _act(act: Act) -> str:
    after = (
        f"a.tries_after = 0 AND a.round = {_R0} + 1"
        if act.new_round
        else f"a.tries_after = {_T0} AND a.round = {_R0}"
    )
    return f"({_S0} IN {_in(act.acts_on)} AND a.state_after = '{act.leaves}' AND {after})"


def _fits() -> str:
    # A CASE on the kind, then on the outcome or the action, so that each attempt is tested
    # against its own row of the tables only: a scan of the whole log stays cheap.
    judged = {
        o: f"(a.state_after IN {_in(j.leaves)} AND a.tries_after = {_T0} + {j.uses})"
        for o, j in JUDGED.items()
    }
    error = f"(a.state_after = '{TODO}' AND a.tries_after = {_T0} AND a.round = {_R0})"
    actions: dict[str, str] = {}
    for action in dict.fromkeys(a for a, _ in HUMAN):
        applied = {o: _act(act) for (a, o), act in HUMAN.items() if a == action and o}
        plain = HUMAN.get((action, None))
        verdicts = _case("a.outcome", applied) if applied else "FALSE"
        actions[action] = (
            f"(CASE WHEN a.outcome IS NULL THEN {_act(plain) if plain else 'FALSE'} "
            f"ELSE {verdicts} END)"
        )
    kinds = {
        JUDGED_KIND: f"(a.round = {_R0} AND {_case('a.outcome', judged)})",
        **dict.fromkeys(ERROR_KINDS, error),
        HUMAN_KIND: _case("a.action", actions),
    }
    return f"({_case('a.kind', kinds)})"


# Whether attempt ``a`` follows from ``p`` by the tables (NULL, in SQL, counts as no).
FITS = _fits()
# ``p``, joined to ``a``.
BEFORE = "LEFT JOIN attempts p ON p.item_id = a.item_id AND p.turn = a.turn - 1"
# Whether item ``i``'s lock stands: its last attempt produced it. A judged attempt may not
# follow a lock (the ratchet); a person's action acts on one by its table. The OFFSET keeps
# PostgreSQL from turning the test into a join that hashes the whole log (0.7 s at 100k items,
# for each batch an export claims); so each item costs two lookups of (item_id, turn).
SOUND = (
    f"EXISTS (SELECT 1 FROM attempts a {BEFORE} WHERE a.item_id = i.id AND a.turn = i.turns "
    "AND a.state_after = i.state AND a.tries_after = i.tries AND a.round = i.round "
    f"AND (a.kind = '{HUMAN_KIND}' OR (a.kind = '{JUDGED_KIND}' AND {_S0} = '{TODO}')) "
    f"AND {FITS} LIMIT 1 OFFSET 0)"
)
_STEP = "{t}.turn, {t}.kind, {t}.outcome, {t}.action, {t}.state_after, {t}.tries_after, {t}.round"
STEP_COLUMNS = _STEP.format(t="a") + ", " + _STEP.format(t="p")
# The terminal items whose lock no attempt produced, as :meth:`LockFault.of` reads them;
# ``{also}`` narrows them (an SQL condition on ``i``, or nothing).
FAULTS = (
    "SELECT i.key, i.state, i.tries, i.round, i.turns, "
    f"(SELECT count(*) FROM attempts x WHERE x.item_id = i.id), {STEP_COLUMNS} FROM items i "
    "LEFT JOIN attempts a ON a.item_id = i.id AND a.turn = i.turns "
    "LEFT JOIN attempts p ON p.item_id = i.id AND p.turn = i.turns - 1 "
    f"WHERE i.state <> '{TODO}'{{also}} AND NOT {SOUND} ORDER BY i.id"
)
# The attempts that do not follow from the turn before, each with its item's key.
MISFITS = (
    f"SELECT i.key, {STEP_COLUMNS} FROM attempts a JOIN items i ON i.id = a.item_id {BEFORE} "
    f"WHERE NOT coalesce({FITS}, FALSE) ORDER BY a.id"
)
