"""What only the SQLite engine has: its file, its header marks, its mode, how it is made.

Everything engine-neutral is in the conformance suite (tests/test_store_conformance.py).
"""

from __future__ import annotations

import gc
import hashlib
import os
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

import reins.store.sqlite.connection as connection
from reins.errors import CorruptLedger, LedgerError, WrongQuest
from reins.store.codec import now_iso
from reins.store.model import State
from reins.store.owner import Owner
from reins.store.sqlite import SQLiteStore
from reins.store.sqlite.schema import APPLICATION_ID, SCHEMA_VERSION, run_script
from reins.store.walk import iter_items
from reins.testing.conformance._kit import T0, TTL, turn
from reins.testing.harness import SQLiteHarness


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.fixture
def umask_022() -> Iterator[None]:
    """A common umask, under which a file made without an explicit mode is world-readable."""
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def test_a_new_ledger_carries_its_marks(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    SQLiteStore.open(path, create=True).close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
    assert names(tmp_path) == ["new.db"]  # no temporary file left beside it


def test_an_older_ledger_is_migrated_on_disk(tmp_path: Path) -> None:
    path = Path(SQLiteHarness(tmp_path).make_at_version(0))
    with SQLiteStore.open(path) as store:
        assert store.add([("a", None)]) == (1, 0)
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    conn.close()


def test_a_ledger_and_its_wal_and_shm_are_readable_by_their_owner_only(
    tmp_path: Path, umask_022: None
) -> None:
    path = tmp_path / "private.reins.db"
    with SQLiteStore.open(path, create=True) as store:
        store.add([("a", {"email": "someone@example.com"})])
        turn(store, "a", "FAIL")
        assert store.lease("ann", ttl=TTL, now=T0) is not None
        files = [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]
        for file in files:
            assert file.exists(), file
            assert oct(file.stat().st_mode & 0o777) == "0o600", file


def test_a_failed_creation_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(conn: sqlite3.Connection, version: int) -> None:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(connection, "run_script", broken)
    path = tmp_path / "l.reins.db"
    with pytest.raises(LedgerError, match="cannot create"):
        SQLiteStore.open(path, create=True)
    assert names(tmp_path) == []  # neither a half-made ledger nor its temporary file


class Killed(BaseException):
    """The process dies here: no handler runs."""


def test_a_creation_killed_midway_leaves_no_ledger(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = run_script

    def killed(conn: sqlite3.Connection, version: int) -> None:
        real(conn, version)
        raise Killed

    monkeypatch.setattr(connection, "run_script", killed)
    path = tmp_path / "l.reins.db"
    with pytest.raises(Killed):
        SQLiteStore.open(path, create=True)
    assert not path.exists()  # only a hidden temporary file may be left, never a half ledger
    gc.collect()  # the dead process's connection is gone with it; here, collect it
    monkeypatch.setattr(connection, "run_script", real)
    with SQLiteStore.open(path, create=True) as store:
        assert store.check() == [] and store.stats().total == 0


def test_a_creation_race_keeps_the_ledger_made_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    theirs = tmp_path / "theirs" / "l.reins.db"
    theirs.parent.mkdir()
    with SQLiteStore.open(theirs, create=True) as store:
        store.add([("theirs", None)])
    path = tmp_path / "l.reins.db"
    real_now = now_iso

    def another_process_wins() -> str:  # called while our ledger is built under its temp name
        if not path.exists():
            shutil.copyfile(theirs, path)
        return real_now()

    monkeypatch.setattr(connection, "now_iso", another_process_wins)
    with SQLiteStore.open(path, create=True) as store:
        assert [i.key for i in iter_items(store)] == ["theirs"]
    assert names(tmp_path) == ["l.reins.db", "theirs"]


def test_a_text_file_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("these are my notes, not a database\n" * 10)
    before = digest(path)
    for create in (False, True):
        with pytest.raises(CorruptLedger, match="not a reins ledger"):
            SQLiteStore.open(path, create=create)
    assert digest(path) == before
    assert names(tmp_path) == ["notes.db"]


def test_a_newer_ledger_in_rollback_journal_mode_is_refused_byte_identical(
    tmp_path: Path,
) -> None:
    path = tmp_path / "future.db"
    SQLiteStore.open(path, create=True).close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = DELETE")  # as a newer reins may leave it
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    assert before[18:20] == b"\x01\x01"  # rollback journal: opening a connection would change it
    for create in (False, True):
        with pytest.raises(CorruptLedger, match="Upgrade reins-quest"):
            SQLiteStore.open(path, create=create)
    assert path.read_bytes() == before
    assert names(tmp_path) == ["future.db"]


def test_a_newer_version_still_in_the_wal_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "future.db"
    SQLiteStore.open(path, create=True).close()
    newer = sqlite3.connect(path, isolation_level=None)
    try:
        newer.execute("PRAGMA wal_autocheckpoint = 0")  # the bump stays in the WAL
        newer.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
        assert int.from_bytes(path.read_bytes()[60:64], "big") == SCHEMA_VERSION
        with pytest.raises(CorruptLedger, match="Upgrade reins-quest"):
            SQLiteStore.open(path)
    finally:
        newer.close()


def test_a_damaged_ledger_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "damaged.db"
    with SQLiteStore.open(path, create=True) as store:
        store.add((f"k{i}", {"n": i}) for i in range(2000))
    data = bytearray(path.read_bytes())
    data[4096:] = b"\xff" * (len(data) - 4096)  # scribble over every page after the first
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptLedger, match="damaged"), SQLiteStore.open(path) as store:
        list(iter_items(store))
        store.stats()


def test_the_database_itself_refuses_to_break_the_ratchet(tmp_path: Path) -> None:
    path = tmp_path / "l.db"
    with SQLiteStore.open(path, create=True) as store:
        store.add([("a", None), ("b", None)])
        turn(store, "a", "PASS")
        turn(store, "b", "FAIL")
    conn = sqlite3.connect(path)
    try:
        with pytest.raises(sqlite3.IntegrityError, match="ratchet"):
            conn.execute("UPDATE items SET state = 'TODO' WHERE key = 'a'")
        with pytest.raises(sqlite3.IntegrityError, match="ratchet"):
            conn.execute("UPDATE items SET tries = 0 WHERE key = 'b'")
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            conn.execute("UPDATE attempts SET outcome = 'PASS'")
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            conn.execute("DELETE FROM attempts")
        with pytest.raises(sqlite3.IntegrityError, match="never deleted"):
            conn.execute("DELETE FROM items")
    finally:
        conn.close()
    with SQLiteStore.open(path) as store:
        assert store.get("a").state is State.PASS and store.check() == []


@pytest.mark.parametrize(
    ("kind", "state", "tries", "round_", "allowed"),
    [
        ("judged", "TODO", 0, 2, False),  # a machine's attempt cannot reopen
        ("generation_error", "PASS", None, 1, False),  # nor move a lock
        ("human", "TODO", 0, 3, False),  # a round is skipped
        ("human", "TODO", 1, 2, False),  # a new round starts with no tries
        ("human", "DONE", 0, 1, False),  # tries go down without a new round
        ("human", "PASS", None, 1, True),  # a person moves the lock (tries kept)
        ("human", "TODO", 0, 2, True),  # a person reopens
    ],
)
def test_hand_written_sql_moves_a_lock_only_with_a_person_s_attempt(
    tmp_path: Path, kind: str, state: str, tries: int | None, round_: int, allowed: bool
) -> None:
    """Two statements, as a person with a SQL shell would write them: the triggers decide."""
    path = tmp_path / "t.reins.db"
    with SQLiteStore.open(path, create=True) as store:
        store.add([("a", None)])
        while store.get("a").state is State.TODO:  # FAILs until the kit's quest locks it DONE
            turn(store, "a", "FAIL")
    conn = sqlite3.connect(path, isolation_level=None)
    before = conn.execute("SELECT state, tries, turns, round FROM items").fetchone()
    assert before[0] == "DONE" and before[1] > 0
    tries = before[1] if tries is None else tries
    conn.execute("BEGIN")
    try:
        conn.execute(
            "INSERT INTO attempts (item_id, turn, kind, driver, state_after, tries_after, "
            "recorded_at, round) VALUES (1, ?, ?, 'me', ?, ?, 'now', ?)",
            (before[2] + 1, kind, state, tries, round_),
        )
        conn.execute(
            "UPDATE items SET state = ?, tries = ?, turns = turns + 1, round = ?",
            (state, tries, round_),
        )
        conn.execute("COMMIT")
        moved = True
    except sqlite3.IntegrityError as exc:
        assert "reins ratchet" in str(exc)
        conn.execute("ROLLBACK")
        moved = False
    after = conn.execute("SELECT state, tries, turns, round FROM items").fetchone()
    conn.close()
    assert moved is allowed
    assert (after == before) is not allowed


def test_another_quest_s_ledger_in_rollback_journal_mode_is_refused_byte_identical(
    tmp_path: Path,
) -> None:
    """The quest is checked before the switch to WAL, which would rewrite the header."""
    path = tmp_path / "theirs.db"
    with SQLiteStore.open(path, create=True, owner=Owner("tiny", "tests.kit:TINY")) as s:
        s.add([("a", None)])
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = DELETE")  # as copied by a tool, or an older reins
    conn.commit()
    conn.close()
    before = path.read_bytes()
    assert before[18:20] == b"\x01\x01"
    for create in (False, True):
        with pytest.raises(WrongQuest, match="belongs to quest 'tiny'"):
            SQLiteStore.open(path, create=create, owner=Owner("other"))
    assert path.read_bytes() == before
    assert names(tmp_path) == ["theirs.db"]
    with SQLiteStore.open(path, owner=Owner("tiny")) as mine:  # its own quest: WAL from now on
        assert mine.get("a").key == "a"
    assert path.read_bytes()[18:20] == b"\x02\x02"
