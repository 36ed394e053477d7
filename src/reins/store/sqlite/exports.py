"""Export bookkeeping in SQLite: claimed batches with their file offsets (the file side is
:mod:`reins.store.export`), of locks and of withdrawals (:mod:`reins.store.withdrawal`)."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from reins.store.codec import now_iso
from reins.store.model import ExportClaim
from reins.store.provenance import SOUND
from reins.store.sql import ENTRIES, EXPORTABLE, REFUSED, batch_of, refused_of
from reins.store.sqlite.connection import Database
from reins.store.withdrawal import PREFIX, PREFIX_END

if TYPE_CHECKING:
    from reins.store.lockfault import LockFault

_ENTRIES = ENTRIES.format(mark="?")
# The withdrawals owed to a file, with their items: TODO and unmarked ones are written; an item
# that locked again since is exported as a lock instead, so its entry is only dropped. One whose
# new lock no attempt produced keeps its entry: that lock is refused, and the file's old record
# still wants withdrawing once a person reopens the item.
_OWED = (
    "SELECT m.key, i.id, i.state = 'TODO' AND i.export_batch IS NULL FROM meta m "
    "JOIN items i ON i.key = substr(m.key, ?) WHERE m.key >= ? AND m.key < ? AND m.value = ? "
    f"AND (i.state = 'TODO' OR {SOUND}) ORDER BY i.id LIMIT ?"
)


def _batch(conn: sqlite3.Connection, batch: int, path: str, offset: int) -> ExportClaim:
    return batch_of(batch, path, offset, conn.execute(_ENTRIES, (batch,)))


def claim_export(db: Database, path: str, offset: int, limit: int) -> ExportClaim | None:
    with db.write() as conn:
        ids = [
            r[0]
            for r in conn.execute(
                f"SELECT i.id FROM items i WHERE {EXPORTABLE} ORDER BY i.id LIMIT ?",
                (limit,),
            )
        ]
        if len(ids) < limit:
            owed = conn.execute(
                _OWED, (len(PREFIX) + 1, PREFIX, PREFIX_END, path, limit - len(ids))
            ).fetchall()
            conn.executemany("DELETE FROM meta WHERE key = ?", [(r[0],) for r in owed])
            ids += [r[1] for r in owed if r[2]]
        if not ids:
            return None
        batch = conn.execute(
            "INSERT INTO export_batches (path, offset, created_at) VALUES (?, ?, ?) RETURNING id",
            (path, offset, now_iso()),
        ).fetchone()[0]
        conn.executemany(
            "UPDATE items SET export_batch = ? WHERE id = ?", [(batch, i) for i in ids]
        )
        return _batch(conn, batch, path, offset)


def open_exports(db: Database, path: str) -> list[ExportClaim]:
    with db.read() as conn:
        rows = conn.execute(
            "SELECT id, offset FROM export_batches WHERE path = ? AND done = 0 ORDER BY id",
            (path,),
        ).fetchall()
        return [_batch(conn, b, path, offset) for b, offset in rows]


def open_export_paths(db: Database) -> list[str]:
    with db.read() as conn:
        return [
            r[0]
            for r in conn.execute(
                "SELECT DISTINCT path FROM export_batches WHERE done = 0 ORDER BY path"
            )
        ]


def finish_export(db: Database, batch: int) -> None:
    with db.write() as conn:
        conn.execute("UPDATE export_batches SET done = 1 WHERE id = ?", (batch,))
        # A TODO item in a batch is a withdrawal, written now: it owes the file nothing more.
        conn.execute(
            "UPDATE items SET export_batch = NULL WHERE export_batch = ? AND state = 'TODO'",
            (batch,),
        )


def refused_locks(db: Database) -> list[LockFault]:
    with db.read() as conn:
        return refused_of(conn.execute(REFUSED))


def exported_count(db: Database) -> int:
    with db.read() as conn:
        return int(
            conn.execute(
                "SELECT count(*) FROM items i JOIN export_batches b ON b.id = i.export_batch "
                "WHERE b.done = 1"
            ).fetchone()[0]
        )
