"""The PostgreSQL engine beyond the conformance suite: URLs and schemas, passwords, session
timeouts, triggers against any session, and connections lost between and during turns.

Connections are lost for real: the store's backends are ended with ``pg_terminate_backend``
from another connection, or a TCP proxy between the store and the server cuts the connection
right after it forwarded a turn (one statement in autocommit) and before the server's answer
comes back (the commit landed, the client never heard).
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import closing, suppress
from dataclasses import replace
from typing import Any

import psycopg
import pytest

from reins.errors import ConfigError, CorruptLedger, LedgerError, NotFound
from reins.store.model import AttemptKind, Claim, Draft, Notes, State, Transition
from reins.store.postgres import PostgresStore
from reins.store.postgres.schema import SCHEMA_VERSION
from reins.store.postgres.target import TIMEOUTS, parse, schema_name

pytestmark = pytest.mark.postgres


def fresh(url: str, **params: str) -> str:
    """A URL naming a schema no test used yet, with extra libpq parameters."""
    query = "&".join(
        f"{k}={v}" for k, v in {"schema": f"t_{os.urandom(5).hex()}", **params}.items()
    )
    return f"{url}?{query}"


def with_password(url: str, password: str) -> str:
    return url.replace("postgres@", f"postgres:{password}@", 1)


def draft(key: str, nonce: str, state: State = State.PASS, tries: int = 0) -> Draft:
    return Draft(
        key=key,
        kind=AttemptKind.JUDGED,
        transition=Transition(state, tries),
        outcome="PASS" if state is State.PASS else "FAIL",
        notes=Notes(via="loop", nonce=nonce),
    )


@pytest.fixture
def store(postgres_url: str) -> Iterator[PostgresStore]:
    with PostgresStore.open(fresh(postgres_url), create=True) as s:
        s.add((k, {"word": k}) for k in "abc")
        yield s


def attempts_of(store: PostgresStore, key: str) -> int:
    return len(store.snapshot(key)[1])


def terminate(url: str, application: str) -> int:
    """End every backend of ``application`` from another connection, and wait until they are
    gone (their goodbye sent); returns how many."""
    with psycopg.connect(url, autocommit=True) as conn:
        pids = [
            pid
            for (pid,) in conn.execute(
                "SELECT pid FROM pg_stat_activity WHERE application_name = %s",
                (application,),
            ).fetchall()
        ]
        conn.execute("SELECT pg_terminate_backend(pid) FROM unnest(%s::int[]) AS pid", (pids,))
        while conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(%s)", (pids,)
        ).fetchone() != (0,):
            time.sleep(0.01)
    return len(pids)


# -- URLs, schemas, passwords -------------------------------------------------------------


def test_the_schema_comes_from_the_url_else_the_argument_else_reins() -> None:
    base = "postgresql://u:pw@db.example:6543/quests"
    assert parse(f"{base}?schema=Run-7", "emails").schema == "run_7"
    assert parse(base, "My Quest!").schema == "my_quest"
    assert parse(base).schema == "reins"
    assert schema_name("2026 run") == "q_2026_run"
    assert schema_name("pg_catalog") == "q_pg_catalog"
    assert schema_name('x"; DROP SCHEMA public; --') == "x_drop_schema_public"
    assert len(schema_name("a" * 100)) == 63
    with pytest.raises(ConfigError):
        schema_name("---")


def test_the_location_names_the_schema_and_never_the_password() -> None:
    target = parse("postgresql://ann:s3cr%40t@db.example:6543/quests?sslmode=require", "emails")
    assert target.location == (
        "postgresql://ann@db.example:6543/quests?sslmode=require&schema=emails"
    )
    assert target.server == "db.example:6543/quests"
    assert "s3cr" not in target.location and "s3cr@t" in target.conninfo
    other = parse("postgresql://db.example/quests?password=hunter2&schema=x")
    assert "hunter2" not in other.location and other.location.endswith("?schema=x")
    assert other.scrub("password hunter2 failed") == "password *** failed"


def test_a_server_that_cannot_be_reached_is_named_without_the_password() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once the socket is closed
    url = f"postgresql://ann:hunter2@127.0.0.1:{port}/quests?connect_timeout=2"
    with pytest.raises(LedgerError) as caught:
        PostgresStore.open(url, create=True)
    assert f"127.0.0.1:{port}/quests" in str(caught.value)
    assert "hunter2" not in str(caught.value)


def test_a_store_opens_its_own_schema_and_the_location_opens_it_again(postgres_url: str) -> None:
    url = with_password(postgres_url, "hunter2")
    with PostgresStore.open(url, create=True, schema=f"Quest {os.urandom(3).hex()}") as one:
        assert "hunter2" not in one.location and one.location.startswith("postgresql://")
        assert one.schema.startswith("quest_") and f"schema={one.schema}" in one.location
        one.add([("a", 1)])
        with PostgresStore.open(one.location) as two:
            assert two.get("a").payload == 1 and two.schema == one.schema


def test_an_empty_schema_made_by_an_administrator_is_used(postgres_url: str) -> None:
    url = fresh(postgres_url)
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {parse(url).schema}".encode())
    with pytest.raises(NotFound):
        PostgresStore.open(url)
    with PostgresStore.open(url, create=True) as store:
        assert store.add([("a", None)]) == (1, 0) and store.check() == []


def test_two_processes_creating_one_ledger_at_once_build_it_once(postgres_url: str) -> None:
    url = fresh(postgres_url)
    opened: list[PostgresStore] = []
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def create() -> None:
        try:
            start.wait()
            opened.append(PostgresStore.open(url, create=True))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=create) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert not errors and len(opened) == 4
        assert opened[0].add([("a", None)]) == (1, 0)
        assert all(s.stats().total == 1 for s in opened)
    finally:
        for s in opened:
            s.close()


# -- sessions: timeouts, triggers for any session ------------------------------------------


def test_every_session_has_server_side_timeouts(store: PostgresStore) -> None:
    with store._db.pool.connection() as conn:
        shown = {name: conn.execute(f"SHOW {name}".encode()).fetchone() for name in TIMEOUTS}
    assert shown == {name: (value,) for name, value in TIMEOUTS.items()}


def test_a_row_lock_held_elsewhere_ends_in_a_lock_timeout(postgres_url: str) -> None:
    url = fresh(postgres_url, options="-c%20lock_timeout%3D200ms")
    with PostgresStore.open(url, create=True) as store:
        store.add([("a", None)])
        with psycopg.connect(parse(url).conninfo) as holder:  # a stuck client, mid-transaction
            holder.execute("SELECT * FROM items WHERE key = 'a' FOR UPDATE")
            with pytest.raises(LedgerError, match="lock"):
                store.record(draft("a", "n1"), Claim("ann", 0))
            holder.rollback()
        assert attempts_of(store, "a") == 0
        store.record(draft("a", "n1"), Claim("ann", 0))
        assert attempts_of(store, "a") == 1 and store.check() == []


def test_triggers_work_from_a_session_with_another_search_path(
    store: PostgresStore, postgres_url: str
) -> None:
    store.record(draft("a", "n1"), Claim("ann", 0))
    table = f'"{store.schema}".items'
    with psycopg.connect(postgres_url, autocommit=True) as conn:  # search_path: public
        conn.execute(f"UPDATE {table} SET tries = 2 WHERE key = 'c'".encode())
        for statement in (
            f"UPDATE {table} SET state = 'TODO' WHERE key = 'a'",
            f"TRUNCATE {table} CASCADE",
            f'TRUNCATE "{store.schema}".attempts',
        ):
            with pytest.raises(psycopg.errors.IntegrityConstraintViolation):
                conn.execute(statement.encode())
    stats = store.stats()
    assert stats.tries == {0: 2, 2: 1} and stats.counts[State.PASS] == 1
    assert attempts_of(store, "a") == 1


def test_a_schema_with_other_tables_is_refused_untouched(postgres_harness: Any) -> None:
    location = postgres_harness.make_foreign()
    before = postgres_harness.fingerprint(location)
    with pytest.raises(CorruptLedger, match="not a reins ledger"):
        PostgresStore.open(location, create=True)
    assert postgres_harness.fingerprint(location) == before


def test_counters_are_sharded_but_read_as_one(store: PostgresStore, postgres_url: str) -> None:
    # Turns from several connections land on several shards; status and check add them up.
    for n, key in enumerate("abc"):
        with PostgresStore.open(store.location) as other:
            other.record(draft(key, f"n{n}", State.TODO, 1), Claim("ann", 0))
    with psycopg.connect(parse(store.location).conninfo) as conn:
        shards = conn.execute("SELECT count(*) FROM usage_shards WHERE attempts > 0").fetchone()
        totals = conn.execute("SELECT attempts FROM usage_totals").fetchone()
    assert shards is not None and shards[0] >= 1 and totals == (3,)
    assert store.stats().attempts == 3 and store.stats().tries == {1: 3}
    assert store.check() == []


def test_kind_and_gate_counts_are_sharded_but_read_as_one(store: PostgresStore) -> None:
    for n, key in enumerate("abc"):
        with PostgresStore.open(store.location) as other:
            d = replace(draft(key, f"n{n}", State.TODO, 1), gate_digest=f"g{n % 2}")
            other.record(d, Claim("ann", 0))
    with PostgresStore.open(store.location) as other:
        error = Draft(
            key="a", kind=AttemptKind.JUDGE_ERROR, transition=Transition(State.TODO, 0), error="x"
        )
        other.record(error, Claim("ann", 1))
    stats = store.stats()
    assert stats.kinds == {"judged": 3, "judge_error": 1}
    assert stats.gates == {"g0": 2, "g1": 1}
    with psycopg.connect(parse(store.location).conninfo) as conn:
        kinds: dict[str, int] = dict(conn.execute("SELECT kind, n FROM kind_counts").fetchall())
        shards = conn.execute("SELECT count(*) FROM gate_count_shards").fetchone()
    assert kinds == {"judged": 3, "generation_error": 0, "judge_error": 1, "human": 0}
    assert shards is not None and shards[0] >= 2
    assert store.check() == []


def test_the_ratchet_trigger_wants_a_human_attempt_at_the_next_turn(
    store: PostgresStore, postgres_url: str
) -> None:
    """SQL written by hand in one transaction: an attempt, then the item's move. Only a human
    attempt at exactly the next turn lets a locked item move (SQLite cannot run this in one
    statement, so the conformance suite cannot)."""
    store.record(draft("a", "n1"), Claim("ann", 0))
    before = store.snapshot("a")
    move = (
        "UPDATE items SET state = 'TODO', tries = {tries}, round = {round}, turns = {turns}, "
        "locked_at = NULL WHERE key = 'a'"
    )
    add = (
        "INSERT INTO attempts (item_id, turn, kind, driver, state_after, tries_after, round, "
        "recorded_at) SELECT id, {turn}, '{kind}', 'pat', 'TODO', {tries}, {round}, 'now' "
        "FROM items WHERE key = 'a'"
    )
    # (attempt kind, its turn, the item's turns after, round, tries, what the refusal says)
    cases = [
        ("judged", 2, 2, 2, 0, "human"),
        ("generation_error", 2, 2, 2, 0, "human"),
        ("human", 3, 3, 2, 0, "human"),
        ("human", 2, 3, 2, 0, "human"),
        ("human", 2, 2, 3, 0, "round"),  # a new round is the next one
        ("human", 2, 2, 2, 1, "round"),  # from scratch
    ]
    with psycopg.connect(parse(store.location).conninfo, autocommit=True) as conn:
        for kind, turn, turns, round_, tries, says in cases:
            refused = pytest.raises(psycopg.errors.IntegrityConstraintViolation, match=says)
            with refused, conn.transaction():
                conn.execute(add.format(turn=turn, kind=kind, tries=tries, round=round_).encode())
                conn.execute(move.format(turns=turns, tries=tries, round=round_).encode())
        with conn.transaction(force_rollback=True):  # allowed, then rolled back
            conn.execute(add.format(turn=2, kind="human", tries=0, round=2).encode())
            conn.execute(move.format(turns=2, tries=0, round=2).encode())
            row = conn.execute("SELECT state, round FROM items WHERE key = 'a'").fetchone()
            assert row == ("TODO", 2)
    assert store.snapshot("a") == before and store.check() == []


@pytest.mark.parametrize("version", [2, 3, 4])
def test_a_migrated_ledger_keeps_one_function_of_each_name(
    postgres_harness: Any, version: int
) -> None:
    location = postgres_harness.make_at_version(version)
    with PostgresStore.open(location) as store:
        assert store.schema_version == SCHEMA_VERSION
        with psycopg.connect(parse(location).conninfo) as conn:
            found = conn.execute(
                "SELECT p.proname, count(*) FROM pg_proc p JOIN pg_namespace n "
                "ON n.oid = p.pronamespace WHERE n.nspname = %s "
                "AND p.proname IN ('reins_turn', 'reins_append') GROUP BY p.proname "
                "ORDER BY p.proname",
                (store.schema,),
            ).fetchall()
        assert found == [("reins_append", 1), ("reins_turn", 1)]
        store.record(draft("c", "n1"), Claim("ann", 0))
        assert store.stats().kinds == {"judged": 3} and store.check() == []


# -- connections lost ----------------------------------------------------------------------


def test_a_connection_ended_between_turns_is_replaced(postgres_url: str) -> None:
    app = f"t{os.urandom(4).hex()}"
    with PostgresStore.open(fresh(postgres_url, application_name=app), create=True) as store:
        store.add((k, None) for k in "ab")
        assert store.get("a").state is State.TODO
        assert terminate(postgres_url, app) >= 1  # the pooled connection dies while idle
        store.record(draft("a", "n1"), Claim("ann", 0))
        assert terminate(postgres_url, app) >= 1
        assert store.claim_export("/tmp/x.jsonl", 0, 10) is not None  # not idempotent: fine
        assert terminate(postgres_url, app) >= 1
        assert store.add([("c", None)]) == (1, 0)
        assert attempts_of(store, "a") == 1 and store.check() == []


def _waiting_on_a_lock(url: str, application: str) -> list[int]:
    """The backends of ``application`` waiting for a row lock."""
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = %s "
            "AND wait_event_type = 'Lock'",
            (application,),
        ).fetchall()
    return [pid for (pid,) in rows]


def _until(found: Any, deadline: float = 20.0) -> Any:
    """Poll ``found()`` until it returns something (a condition on the server's state)."""
    ends = time.monotonic() + deadline
    while not (value := found()):
        assert time.monotonic() < ends, "the server never reached the state waited for"
        time.sleep(0.01)
    return value


def test_a_connection_ended_mid_turn_records_the_turn_once(postgres_url: str) -> None:
    """The turn's statement is sent, and its backend ends while it waits for the item's row
    lock (held by another client): the turn is made again on a fresh connection, once."""
    app = f"t{os.urandom(4).hex()}"
    url = fresh(postgres_url, application_name=app)
    with PostgresStore.open(url, create=True) as store:
        store.add((k, None) for k in "ab")
        done: list[Any] = []
        with psycopg.connect(parse(url).conninfo) as holder:
            holder.execute("SELECT * FROM items WHERE key = 'a' FOR UPDATE")
            worker = threading.Thread(
                target=lambda: done.append(store.record(draft("a", "n1"), Claim("ann", 0)))
            )
            worker.start()
            (first,) = _until(lambda: _waiting_on_a_lock(postgres_url, app))
            with psycopg.connect(postgres_url, autocommit=True) as other:
                other.execute("SELECT pg_terminate_backend(%s)", (first,))
            (second,) = _until(
                lambda: [p for p in _waiting_on_a_lock(postgres_url, app) if p != first]
            )
            holder.rollback()  # the lock is free: the second try records the turn
            worker.join(timeout=30)
        assert done, "the turn was not recorded"
        item, attempt = done[0]
        assert first != second and item.state is State.PASS and attempt.turn == 1
        log = store.snapshot("a")[1]
        assert [a.notes.nonce for a in log] == ["n1"]
        assert store.stats().attempts == 1 and store.check() == []


class CuttingProxy:
    """A TCP proxy to the server that can drop a connection right after a statement that
    commits (one holding :attr:`marker`: a turn is one ``reins_turn`` call in autocommit) went
    through, before the server's answer comes back: the commit lands, the client never hears.
    """

    def __init__(self, port: int) -> None:
        self.marker = b"reins_turn"
        self.server_port = port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.cuts = 0  # how many COMMITs to cut
        self.cut_done = 0
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.server_port))
            cutting = threading.Event()
            threading.Thread(target=self._up, args=(client, upstream, cutting), daemon=True).start()
            threading.Thread(
                target=self._down, args=(upstream, client, cutting), daemon=True
            ).start()

    def _up(self, client: socket.socket, upstream: socket.socket, cutting: threading.Event) -> None:
        with closing(client), closing(upstream):
            while data := _recv(client):
                if self.marker in data:
                    with self._lock:
                        if self.cut_done < self.cuts:
                            self.cut_done += 1
                            cutting.set()
                try:
                    upstream.sendall(data)
                except OSError:
                    return

    def _down(
        self, upstream: socket.socket, client: socket.socket, cutting: threading.Event
    ) -> None:
        while data := _recv(upstream):
            if cutting.is_set():  # the server answered the commit: it landed. Drop it.
                for s in (client, upstream):
                    with_shutdown(s)
                return
            try:
                client.sendall(data)
            except OSError:
                return

    def close(self) -> None:
        self.listener.close()


def _recv(s: socket.socket) -> bytes:
    try:
        return s.recv(65536)
    except OSError:
        return b""


def with_shutdown(s: socket.socket) -> None:
    with suppress(OSError):
        s.shutdown(socket.SHUT_RDWR)
    s.close()


@pytest.fixture
def proxy(postgres_url: str) -> Iterator[CuttingProxy]:
    p = CuttingProxy(int(parse(postgres_url).server.split(":")[1].split("/")[0]))
    yield p
    p.close()


def test_a_commit_whose_answer_is_lost_is_found_not_written_twice(
    postgres_url: str, proxy: CuttingProxy
) -> None:
    url = fresh(f"postgresql://postgres:hunter2@127.0.0.1:{proxy.port}/postgres")
    with PostgresStore.open(url, create=True) as store:
        store.add((k, None) for k in "ab")
        proxy.cuts = 1
        item, attempt = store.record(draft("a", "n1"), Claim("ann", 0))
        assert proxy.cut_done == 1  # the first try's commit landed unanswered
        assert item.state is State.PASS and attempt.notes.nonce == "n1"
        assert [a.notes.nonce for a in store.snapshot("a")[1]] == ["n1"]
        # Both tries cut: the error names the server, not the password, and says what holds.
        proxy.cuts += 2
        with pytest.raises(LedgerError) as caught:
            store.record(draft("b", "n2", State.TODO, 1), Claim("ann", 0))
        message = str(caught.value)
        assert f"127.0.0.1:{proxy.port}/postgres" in message and "hunter2" not in message
        assert "either wholly recorded or absent" in message
        assert [a.notes.nonce for a in store.snapshot("b")[1]] == ["n2"]  # it was, once
        assert store.stats().attempts == 2 and store.check() == []
