"""The ledger's invariants as queries: ``reins ledger check`` runs them on either engine.

Both engines use the same table and column names, so each check is one SQL text that both
run. A query returns the offending rows (at most ``LIMIT``); none means the invariant holds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

LIMIT = 20

CHECKS: tuple[tuple[str, str], ...] = (
    (
        "an item's turn count is the length of its log, numbered 1..n",
        "SELECT i.key, i.turns, coalesce(a.n, 0), coalesce(a.m, 0) FROM items i "
        "LEFT JOIN (SELECT item_id, count(*) AS n, max(turn) AS m FROM attempts "
        "GROUP BY item_id) a ON a.item_id = i.id "
        "WHERE i.turns != coalesce(a.n, 0) OR coalesce(a.m, 0) != coalesce(a.n, 0)",
    ),
    (
        "an item's state, tries and round are those its last attempt left",
        "SELECT i.key, i.state, a.state_after, i.tries, a.tries_after, i.round, a.round "
        "FROM items i JOIN attempts a ON a.item_id = i.id AND a.turn = i.turns "
        "WHERE a.state_after != i.state OR a.tries_after != i.tries OR a.round != i.round",
    ),
    (
        "an item with no turn is TODO with no tries",
        "SELECT key, state, tries FROM items WHERE turns = 0 AND (state != 'TODO' OR tries != 0)",
    ),
    (
        "only a person's action follows a lock (the ratchet)",
        "SELECT i.key, b.turn, b.kind FROM attempts a JOIN attempts b "
        "ON b.item_id = a.item_id AND b.turn = a.turn + 1 JOIN items i ON i.id = a.item_id "
        "WHERE a.state_after != 'TODO' AND b.kind != 'human'",
    ),
    (
        "tries never go down within a round, and rounds never go down",
        "SELECT i.key, b.turn FROM attempts a JOIN attempts b "
        "ON b.item_id = a.item_id AND b.turn = a.turn + 1 JOIN items i ON i.id = a.item_id "
        "WHERE (b.tries_after < a.tries_after AND b.round = a.round) OR b.round < a.round "
        "OR (b.round != a.round AND b.kind != 'human')",
    ),
    (
        "a terminal item has a lock time, a TODO item none",
        "SELECT key, state, locked_at FROM items WHERE (state = 'TODO') != (locked_at IS NULL)",
    ),
    (
        "the kept count per state matches the items",
        "SELECT s.state, s.n, coalesce(c.n, 0) FROM state_counts s "
        "LEFT JOIN (SELECT state, count(*) AS n FROM items GROUP BY state) c "
        "ON c.state = s.state WHERE s.n != coalesce(c.n, 0) "
        "UNION ALL SELECT c.state, 0, c.n FROM (SELECT state, count(*) AS n FROM items "
        "GROUP BY state) c WHERE c.state NOT IN (SELECT state FROM state_counts)",
    ),
    (
        "the kept count per kind matches the log",
        "SELECT k.kind, k.n, coalesce(c.n, 0) FROM kind_counts k "
        "LEFT JOIN (SELECT kind, count(*) AS n FROM attempts GROUP BY kind) c "
        "ON c.kind = k.kind WHERE k.n != coalesce(c.n, 0) "
        "UNION ALL SELECT c.kind, 0, c.n FROM (SELECT kind, count(*) AS n FROM attempts "
        "GROUP BY kind) c WHERE c.kind NOT IN (SELECT kind FROM kind_counts)",
    ),
    (
        "the kept count of attempts matches the log",
        "SELECT u.attempts, (SELECT count(*) FROM attempts) FROM usage_totals u "
        "WHERE u.attempts != (SELECT count(*) FROM attempts)",
    ),
    (
        "a batch job that ended holds no lease",
        "SELECT i.key, j.id, j.state FROM items i JOIN batch_jobs j "
        "ON i.lease_owner = 'batch:' || j.id "
        "WHERE j.state IN ('collected', 'cancelled', 'discarded')",
    ),
    (
        "a TODO item is marked for export only while its withdrawal is being written",
        "SELECT i.key, i.state FROM items i JOIN export_batches b ON b.id = i.export_batch "
        "WHERE i.state = 'TODO' AND b.done <> 0",
    ),
)


def run_checks(query: Callable[[str], Sequence[Sequence[Any]]]) -> list[str]:
    """Run every check through ``query`` (SQL → rows); one line per violation found."""
    problems = []
    for invariant, sql in CHECKS:
        for row in query(f"{sql} LIMIT {LIMIT}"):
            problems.append(f"{invariant}: violated by {', '.join(map(str, row))}")
    return problems
