"""Counters, metadata and the invariant check in PostgreSQL: status never scans the items."""

from __future__ import annotations

import time
from typing import Any

from psycopg import Cursor

from reins.store.checks import run_checks
from reins.store.model import State, Stats
from reins.store.postgres.connection import Database


def stats(db: Database, *, now: float | None) -> Stats:
    t = time.time() if now is None else now

    def read(cur: Cursor[Any]) -> Stats:
        counts = {State(s): n for s, n in cur.execute("SELECT state, n FROM state_counts")}
        tries = dict(cur.execute("SELECT tries, n FROM tries_counts WHERE n > 0").fetchall())
        rules = {
            r: (f, root)
            for r, f, root in cur.execute(
                'SELECT rule, fired, root FROM rule_counts ORDER BY fired DESC, rule COLLATE "C"'
            )
        }
        usage = cur.execute(
            "SELECT attempts, input_tokens, output_tokens, cost FROM usage_totals"
        ).fetchone()
        assert usage is not None
        leased = cur.execute(
            "SELECT count(*) FROM items WHERE lease_owner IS NOT NULL AND lease_expires > %s",
            (t,),
        ).fetchone()
        assert leased is not None
        return Stats(
            counts={s: counts.get(s, 0) for s in State},
            tries=tries,
            rules=rules,
            attempts=usage[0] or 0,
            input_tokens=usage[1] or 0,
            output_tokens=usage[2] or 0,
            cost=usage[3] or 0.0,
            leased=leased[0],
        )

    return db.read(read)


def meta(db: Database, key: str) -> str | None:
    def read(cur: Cursor[Any]) -> Any:
        return cur.execute("SELECT value FROM meta WHERE key = %s", (key,)).fetchone()

    row = db.read(read)
    return None if row is None else str(row[0])


def set_meta(db: Database, key: str, value: str) -> None:
    def write(cur: Cursor[Any]) -> None:
        cur.execute(
            "INSERT INTO meta (key, value) VALUES (%s, %s) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    db.write(write, what=f"setting {key!r}")


def check(db: Database) -> list[str]:
    def scan(cur: Cursor[Any]) -> list[str]:
        cur.execute("SET LOCAL statement_timeout = 0")  # a deliberate scan of the whole ledger
        return run_checks(lambda sql: cur.execute(sql).fetchall())

    return db.read(scan, what="checking the ledger")
