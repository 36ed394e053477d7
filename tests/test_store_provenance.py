"""store/provenance.py: its tables are turn.md's, and its SQL (which both engines run) and its
words (which say what is wrong) agree on every attempt of a grid, on SQLite and PostgreSQL."""

from __future__ import annotations

import itertools
import sqlite3
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest

from reins.store.lockfault import LockFault, Step, misfit
from reins.store.provenance import (
    BEFORE,
    ERROR_KINDS,
    FAULTS,
    FITS,
    HUMAN,
    HUMAN_KIND,
    JUDGED,
    JUDGED_KIND,
    TODO,
)
from reins.turn.human import HUMAN as HUMAN_TABLE
from reins.turn.table import NO_OUTCOME, NO_VERDICT, TABLE


def test_the_judged_outcomes_are_read_as_turn_md_s_record_table_says() -> None:
    rows = TABLE.rows
    for outcome, judgment in JUDGED.items():
        mine = {(r.state.value, r.tries_delta) for r in rows if r.outcome == outcome}
        assert mine == {(state, judgment.uses) for state in judgment.leaves}, outcome
    assert {r.outcome for r in rows if r.kind.value == JUDGED_KIND} == set(JUDGED)
    # An error (generation or judge) leaves TODO and uses no try, as misfit and FITS have it.
    errors = {(r.kind.value, r.state.value, r.tries_delta) for r in rows if r.kind in NO_VERDICT}
    assert errors == {(kind, TODO, 0) for kind in ERROR_KINDS}


def test_a_person_s_actions_are_read_as_turn_md_s_human_table_says() -> None:
    table = {
        (r.action.value, None if r.outcome == NO_OUTCOME else r.outcome): (
            {s.value for s in r.sources},
            r.state.value,
            r.new_round,
        )
        for r in HUMAN_TABLE.rows
    }
    mine = {k: (set(a.acts_on), a.leaves, a.new_round) for k, a in HUMAN.items()}
    assert mine == table


KINDS = (JUDGED_KIND, *ERROR_KINDS, HUMAN_KIND, "bogus")
OUTCOMES = (None, "PASS", "FAIL", "REVIEW")
ACTIONS = (None, "accept", "reject", "reopen", "rejudge")
STATES = ("TODO", "PASS", "DONE", "REVIEW")
BEFORES: tuple[Step | None, ...] = (
    None,
    Step(1, JUDGED_KIND, "FAIL", None, "TODO", 1, 1),
    Step(1, JUDGED_KIND, "REVIEW", None, "REVIEW", 1, 1),
    Step(1, JUDGED_KIND, "PASS", None, "PASS", 0, 1),
    Step(1, HUMAN_KIND, None, "reopen", "TODO", 0, 2),
)


def grid() -> Iterator[tuple[Step, Step | None]]:
    """Attempts of every kind, outcome, action, state, tries and round, after each turn."""
    for kind, outcome, action, state, tries, round_ in itertools.product(
        KINDS, OUTCOMES, ACTIONS, STATES, (0, 1, 2), (1, 2, 3)
    ):
        for before in BEFORES:
            turn = 1 if before is None else 2
            yield Step(turn, kind, outcome, action, state, tries, round_), before


Query = Callable[[str, Sequence[tuple[Any, ...]]], list[tuple[Any, ...]]]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def engine(request: pytest.FixtureRequest) -> Iterator[Query]:
    """A bare database holding the grid's ``items`` and ``attempts``: rows in, query out."""
    if request.param == "sqlite":
        conn = sqlite3.connect(":memory:")

        def query(sql: str, rows: Sequence[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
            if rows:
                conn.executemany(sql, rows)
                return []
            return conn.execute(sql).fetchall()

        yield query
        conn.close()
        return
    import psycopg

    schema = f"grid_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(request.getfixturevalue("postgres_url"), autocommit=True) as pg:
        pg.execute(f"CREATE SCHEMA {schema}")
        pg.execute(f"SET search_path TO {schema}")

        def on_pg(sql: str, rows: Sequence[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
            sql = sql.replace("?", "%s")
            with pg.cursor() as cur:
                if rows:
                    cur.executemany(sql, rows)
                    return []
                cur.execute(sql)
                return cur.fetchall() if cur.description else []

        yield on_pg
        pg.execute(f"DROP SCHEMA {schema} CASCADE")


def load(query: Query, pairs: list[tuple[Step, Step | None]]) -> None:
    """Item n holds pair n: its last attempt (whatever it left, the item stands so) and the
    one before it."""
    query(
        "CREATE TABLE items (id integer PRIMARY KEY, key text, state text, tries integer, "
        "round integer, turns integer, export_batch integer)",
        [],
    )
    query(
        "CREATE TABLE attempts (id integer PRIMARY KEY, item_id integer, turn integer, "
        "kind text, outcome text, action text, state_after text, tries_after integer, "
        "round integer, UNIQUE (item_id, turn))",
        [],
    )
    items: list[tuple[Any, ...]] = []
    attempts: list[tuple[Any, ...]] = []
    for n, (a, before) in enumerate(pairs):
        items.append((n, f"k{n}", a.state, a.tries, a.round, a.turn, None))
        for step in (before, a):
            if step is not None:
                attempts.append((len(attempts), n, *_values(step)))
    query("INSERT INTO items VALUES (?, ?, ?, ?, ?, ?, ?)", items)
    query("INSERT INTO attempts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", attempts)


def _values(s: Step) -> tuple[Any, ...]:
    return (s.turn, s.kind, s.outcome, s.action, s.state, s.tries, s.round)


def test_the_sql_and_the_words_agree_on_what_follows_and_what_locks(engine: Query) -> None:
    pairs = list(grid())
    load(engine, pairs)
    unfit = {
        row[0]
        for row in engine(f"SELECT a.item_id FROM attempts a {BEFORE} WHERE NOT "
                          f"coalesce({FITS}, FALSE) AND a.turn = (SELECT turns FROM items "
                          "WHERE id = a.item_id)", [])
    }  # fmt: skip
    assert unfit == {n for n, (a, before) in enumerate(pairs) if misfit(a, before) is not None}
    assert 0 < len(unfit) < len(pairs)
    faults = {int(row[0][1:]): LockFault.of(row) for row in engine(FAULTS.format(also=""), [])}
    expected = {
        n
        for n, (a, before) in enumerate(pairs)
        if a.state != TODO
        and (
            a.kind not in (JUDGED_KIND, HUMAN_KIND)
            or misfit(a, before) is not None
            or (a.kind == JUDGED_KIND and before is not None and before.state != TODO)
        )
    }
    assert set(faults) == expected
    sound = {n for n, (a, _) in enumerate(pairs) if a.state != TODO} - expected
    assert sound  # locks that stand are in the grid too: judged ones and a person's
    for fault in faults.values():  # each in words that say what is wrong, not a shrug
        assert "does not follow turn.md's tables" not in fault.words(), fault
