"""The ledger's invariants as queries: ``reins ledger check`` runs them on either engine.

Both engines use the same table and column names, so each check is one SQL text that both
run. A query returns the offending rows; none means the invariant holds. The checks that find
tampering with an item or its log (a gap in the log, a lock no attempt produced, an attempt that
does not follow from the turn before: :mod:`reins.store.provenance`) report every item they
find, each in plain words that name it; the others the first ``LIMIT`` rows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from reins.store.lockfault import LockFault, misfit_words
from reins.store.provenance import FAULTS, MISFITS

LIMIT = 20


@dataclass(frozen=True, slots=True)
class Check:
    """One invariant and the query that finds what breaks it. ``words`` says a row in plain
    words (else the invariant and the row's values); ``every``: report every row found."""

    invariant: str
    sql: str
    words: Callable[[Sequence[Any]], str] | None = None
    every: bool = False

    def say(self, row: Sequence[Any]) -> str:
        if self.words is not None:
            return self.words(row)
        return f"{self.invariant}: violated by {', '.join(map(str, row))}"


def _failures(n: int) -> str:
    return f"{n} failure{'' if n == 1 else 's'} used"


def _gap(row: Sequence[Any]) -> str:
    key, turns, n, low, high, gap = row
    if n == 0:
        return f"item {key} counts {turns} turn(s), but its log is empty"
    if low < 1:
        return f"item {key}: its log holds an attempt numbered {low}, where turns count from 1"
    if gap is not None and gap <= high:
        counts = "" if turns == high else f", and the item counts {turns}"
        return (
            f"item {key}: its log skips turn {gap} (it holds {n} attempt(s) numbered up to "
            f"{high}{counts})"
        )
    return f"item {key} counts {turns} turn(s), but its log holds {n} (turns 1 to {n})"


_KINDS = {
    "judged": "a judged attempt",
    "generation_error": "a generation error",
    "judge_error": "a judge error",
}


def _unfollowed(row: Sequence[Any]) -> str:
    key, turn, kind, state = row
    return (
        f"item {key}: turn {turn} is {_KINDS.get(kind, repr(kind))} after turn {turn - 1} "
        f"locked it {state}: only a person's action follows a lock"
    )


def _todo(row: Sequence[Any]) -> str:
    key, tries, round_, turn, state, tries_after, round_after = row
    now = f"{_failures(tries)} in round {round_}"
    if turn is None:
        return f"item {key} has no turn, yet it is TODO with {now}"
    return (
        f"item {key} is TODO with {now}, but its last attempt (turn {turn}) left it {state} "
        f"with {_failures(tries_after)} in round {round_after}"
    )


def _lock_time(row: Sequence[Any]) -> str:
    key, state, _ = row
    if state == "TODO":
        return f"item {key} is TODO but has a lock time: only a locked item has one"
    return f"item {key} is {state} but has no lock time: every locked item has one"


def _kept(what: str) -> Callable[[Sequence[Any]], str]:
    """Words for a kept counter that disagrees with what it counts (``what`` names it)."""

    def say(row: Sequence[Any]) -> str:
        *name, kept, found = row
        return f"the kept count of {what.format(*name)} is {kept}, but the ledger holds {found}"

    return say


def _ended_job(row: Sequence[Any]) -> str:
    key, job, state = row
    return f"item {key} is leased to job {job}, {state}: a batch job that ended holds no lease"


def _export_mark(row: Sequence[Any]) -> str:
    return (
        f"item {row[0]} is TODO but marked by an export that finished: only a withdrawal being "
        "written marks a TODO item"
    )


CHECKS: tuple[Check, ...] = (
    Check(
        "an item's log holds turns 1 to n, n its turn count",
        "SELECT i.key, i.turns, coalesce(c.n, 0), coalesce(c.low, 1), coalesce(c.high, 0), "
        "CASE WHEN NOT EXISTS (SELECT 1 FROM attempts x WHERE x.item_id = i.id AND x.turn = 1) "
        "THEN 1 ELSE (SELECT min(x.turn) + 1 FROM attempts x WHERE x.item_id = i.id "
        "AND x.turn >= 1 AND NOT EXISTS (SELECT 1 FROM attempts y WHERE y.item_id = i.id "
        "AND y.turn = x.turn + 1)) END FROM items i "
        "LEFT JOIN (SELECT item_id, count(*) AS n, min(turn) AS low, max(turn) AS high "
        "FROM attempts GROUP BY item_id) c ON c.item_id = i.id "
        "WHERE i.turns != coalesce(c.n, 0) OR coalesce(c.high, 0) != coalesce(c.n, 0) "
        "OR coalesce(c.low, 1) != 1 ORDER BY i.id",
        _gap,
        every=True,
    ),
    Check(
        "a locked item's last attempt produced its lock",
        FAULTS.format(also=""),
        lambda row: LockFault.of(row).words(),
        every=True,
    ),
    Check(
        "each attempt follows from the turn before by turn.md's tables",
        MISFITS,
        misfit_words,
        every=True,
    ),
    Check(
        "only a person's action follows a lock (the ratchet)",
        "SELECT i.key, b.turn, b.kind, a.state_after FROM attempts a JOIN attempts b "
        "ON b.item_id = a.item_id AND b.turn = a.turn + 1 JOIN items i ON i.id = a.item_id "
        "WHERE a.state_after != 'TODO' AND b.kind != 'human' ORDER BY b.id",
        _unfollowed,
        every=True,
    ),
    Check(
        "a TODO item is what its last attempt left, or fresh when it has no turn",
        "SELECT i.key, i.tries, i.round, a.turn, a.state_after, a.tries_after, a.round "
        "FROM items i LEFT JOIN attempts a ON a.item_id = i.id AND a.turn = i.turns "
        "WHERE i.state = 'TODO' AND ((i.turns = 0 AND (i.tries != 0 OR i.round != 1)) "
        "OR a.state_after != 'TODO' OR a.tries_after != i.tries OR a.round != i.round) "
        "ORDER BY i.id",
        _todo,
        every=True,
    ),
    Check(
        "a terminal item has a lock time, a TODO item none",
        "SELECT key, state, locked_at FROM items WHERE (state = 'TODO') != (locked_at IS NULL)",
        _lock_time,
    ),
    Check(
        "the kept count per state matches the items",
        "SELECT s.state, s.n, coalesce(c.n, 0) FROM state_counts s "
        "LEFT JOIN (SELECT state, count(*) AS n FROM items GROUP BY state) c "
        "ON c.state = s.state WHERE s.n != coalesce(c.n, 0) "
        "UNION ALL SELECT c.state, 0, c.n FROM (SELECT state, count(*) AS n FROM items "
        "GROUP BY state) c WHERE c.state NOT IN (SELECT state FROM state_counts)",
        _kept("{} items"),
    ),
    Check(
        "the kept count per kind matches the log",
        "SELECT k.kind, k.n, coalesce(c.n, 0) FROM kind_counts k "
        "LEFT JOIN (SELECT kind, count(*) AS n FROM attempts GROUP BY kind) c "
        "ON c.kind = k.kind WHERE k.n != coalesce(c.n, 0) "
        "UNION ALL SELECT c.kind, 0, c.n FROM (SELECT kind, count(*) AS n FROM attempts "
        "GROUP BY kind) c WHERE c.kind NOT IN (SELECT kind FROM kind_counts)",
        _kept("{} attempts"),
    ),
    Check(
        "the kept count of attempts matches the log",
        "SELECT u.attempts, (SELECT count(*) FROM attempts) FROM usage_totals u "
        "WHERE u.attempts != (SELECT count(*) FROM attempts)",
        _kept("attempts"),
    ),
    Check(
        "a batch job that ended holds no lease",
        "SELECT i.key, j.id, j.state FROM items i JOIN batch_jobs j "
        "ON i.lease_owner = 'batch:' || j.id "
        "WHERE j.state IN ('collected', 'cancelled', 'discarded')",
        _ended_job,
    ),
    Check(
        "a TODO item is marked for export only while its withdrawal is being written",
        "SELECT i.key, i.state FROM items i JOIN export_batches b ON b.id = i.export_batch "
        "WHERE i.state = 'TODO' AND b.done <> 0",
        _export_mark,
    ),
)


def run_checks(query: Callable[[str], Sequence[Sequence[Any]]]) -> list[str]:
    """Run every check through ``query`` (SQL → rows); one line per violation found."""
    problems: list[str] = []
    for check in CHECKS:
        sql = check.sql if check.every else f"{check.sql} LIMIT {LIMIT}"
        problems.extend(check.say(row) for row in query(sql))
    return problems
