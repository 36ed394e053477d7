"""Counters, metadata and the invariant check in SQLite: status never scans the items."""

from __future__ import annotations

from reins.store.model import State, Stats
from reins.store.sql import DROPPED
from reins.store.sqlite.connection import Database


def stats(db: Database, *, now: float) -> Stats:
    with db.read() as conn:
        counts = {State(s): n for s, n in conn.execute("SELECT state, n FROM state_counts")}
        tries = dict(conn.execute("SELECT tries, n FROM tries_counts WHERE n > 0"))
        rules = {
            r: (f, root)
            for r, f, root in conn.execute(
                "SELECT rule, fired, root FROM rule_counts ORDER BY fired DESC, rule"
            )
        }
        usage = conn.execute(
            "SELECT attempts, input_tokens, output_tokens, cost, cache_read_tokens, "
            "cache_write_tokens, batch_cost, list_cost FROM usage_totals"
        ).fetchone()
        leased = conn.execute(
            "SELECT count(*) FROM items WHERE lease_owner IS NOT NULL AND lease_expires > ? "
            "AND +state = 'TODO'",  # a person's claim on a REVIEW item is no lease of work
            (now,),
        ).fetchone()[0]
        claimed = conn.execute(
            "SELECT count(*) FROM items WHERE lease_owner IS NOT NULL AND lease_expires > ? "
            "AND +state = 'REVIEW'",
            (now,),
        ).fetchone()[0]
        kinds = dict(conn.execute("SELECT kind, n FROM kind_counts WHERE n > 0"))
        reopened = conn.execute("SELECT count(*) FROM items WHERE round > 1").fetchone()[0]
        gates = dict(conn.execute("SELECT digest, n FROM gate_counts WHERE n > 0"))
        dropped = conn.execute(DROPPED).fetchone()[0]
    return Stats(
        counts={s: counts.get(s, 0) for s in State},
        tries=tries,
        rules=rules,
        attempts=usage[0],
        input_tokens=usage[1],
        output_tokens=usage[2],
        cost=usage[3],
        leased=leased,
        kinds=kinds,
        reopened=reopened,
        gates=gates,
        cache_read_tokens=usage[4],
        cache_write_tokens=usage[5],
        batch_cost=usage[6],
        list_cost=usage[7],
        dropped=dropped,
        claimed=claimed,
    )


def meta(db: Database, key: str) -> str | None:
    with db.read() as conn:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def set_meta(db: Database, key: str, value: str) -> None:
    with db.write() as conn:
        conn.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )


def swap_meta(db: Database, key: str, old: str | None, new: str | None) -> bool:
    with db.write() as conn:
        if old is None and new is None:
            return conn.execute("SELECT 1 FROM meta WHERE key = ?", (key,)).fetchone() is None
        if old is None:
            sql = "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT DO NOTHING"
            args: tuple[str | None, ...] = (key, new)
        elif new is None:
            sql, args = "DELETE FROM meta WHERE key = ? AND value = ?", (key, old)
        else:
            sql, args = "UPDATE meta SET value = ? WHERE key = ? AND value = ?", (new, key, old)
        return bool(conn.execute(sql, args).rowcount == 1)


def check(db: Database) -> list[str]:
    from reins.store.checks import run_checks  # only `ledger check` needs the checks

    with db.read() as conn:
        return run_checks(lambda sql: conn.execute(sql).fetchall())
