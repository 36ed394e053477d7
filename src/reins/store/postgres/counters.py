"""Counters, metadata and the invariant check in PostgreSQL: status never scans the items."""

from __future__ import annotations

from reins.store.model import State, Stats
from reins.store.postgres.connection import SNAPSHOT, Database, Session
from reins.store.sql import DROPPED


def stats(db: Database, *, now: float) -> Stats:
    counts, tries, rules, usage, leased, kinds, reopened, gates, dropped, claimed = db.read(
        lambda s: s.batch(
            "SELECT state, n FROM state_counts",
            "SELECT tries, n FROM tries_counts WHERE n > 0",
            'SELECT rule, fired, root FROM rule_counts ORDER BY fired DESC, rule COLLATE "C"',
            "SELECT attempts, input_tokens, output_tokens, cost, cache_read_tokens, "
            "cache_write_tokens, batch_cost, list_cost FROM usage_totals",
            (
                "SELECT count(*) FROM items WHERE lease_owner IS NOT NULL AND lease_expires > %s "
                "AND state = 'TODO'",  # a person's claim is no lease of work
                (now,),
            ),
            "SELECT kind, n FROM kind_counts WHERE n > 0",
            "SELECT count(*) FROM items WHERE round > 1",  # through the index items_reopened
            "SELECT digest, n FROM gate_counts WHERE n > 0",
            DROPPED,  # through the index attempts_human
            (
                "SELECT count(*) FROM items WHERE lease_owner IS NOT NULL AND lease_expires > %s "
                "AND state = 'REVIEW'",  # a person's claims (reins.store.people)
                (now,),
            ),
            begin=SNAPSHOT,
            commit=True,
        )
    )
    by_state = {State(s): n for s, n in counts}
    attempts, tokens_in, tokens_out, cost, read, written, batch_cost, list_cost = usage[0]
    return Stats(
        counts={s: by_state.get(s, 0) for s in State},
        tries=dict(tries),
        rules={r: (f, root) for r, f, root in rules},
        attempts=attempts or 0,
        input_tokens=tokens_in or 0,
        output_tokens=tokens_out or 0,
        cost=cost or 0.0,
        leased=leased[0][0],
        kinds=dict(kinds),
        reopened=reopened[0][0],
        gates=dict(gates),
        cache_read_tokens=read or 0,
        cache_write_tokens=written or 0,
        batch_cost=batch_cost or 0.0,
        list_cost=list_cost or 0.0,
        dropped=dropped[0][0],
        claimed=claimed[0][0],
    )


def meta(db: Database, key: str) -> str | None:
    rows = db.read(lambda s: s.rows("SELECT value FROM meta WHERE key = %s", (key,)))
    return str(rows[0][0]) if rows else None


def set_meta(db: Database, key: str, value: str) -> None:
    db.write(
        lambda s: s.count(
            "INSERT INTO meta (key, value) VALUES (%s, %s) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        ),
        what=f"setting {key!r}",
    )


def swap_meta(db: Database, key: str, old: str | None, new: str | None) -> bool:
    if old is None and new is None:
        return not db.read(lambda s: s.rows("SELECT 1 FROM meta WHERE key = %s", (key,)))
    if old is None:
        sql = "INSERT INTO meta (key, value) VALUES (%s, %s) ON CONFLICT DO NOTHING"
        args: tuple[str, ...] = (key, str(new))
    elif new is None:
        sql, args = "DELETE FROM meta WHERE key = %s AND value = %s", (key, old)
    else:
        sql, args = "UPDATE meta SET value = %s WHERE key = %s AND value = %s", (new, key, old)
    # Not made again on a fresh connection: a swap whose commit was lost may have been done.
    done = db.write(lambda s: s.count(sql, args), what=f"setting {key!r}", idempotent=False)
    return bool(done == 1)


def check(db: Database) -> list[str]:
    from reins.store.checks import run_checks  # only `ledger check` needs the checks

    def scan(s: Session) -> list[str]:
        # A deliberate full scan; and the provenance checks' long expressions cost the JIT
        # more to compile (0.9 s) than they take to run at 100k items (0.3 s).
        s.batch("SET LOCAL statement_timeout = 0", "SET LOCAL jit = off", begin=SNAPSHOT)
        return run_checks(s.rows)

    return db.read(scan, what="checking the ledger")
