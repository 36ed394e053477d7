"""Export bookkeeping in SQLite: claimed batches with their file offsets (the file side is
:mod:`reins.store.export`)."""

from __future__ import annotations

import sqlite3

from reins.store.codec import ATTEMPT_COLUMNS, ITEM_COLUMNS, attempt_of, item_of, now_iso
from reins.store.model import ExportBatch, ExportEntry
from reins.store.sqlite.connection import Database

# Each item with the attempt that locked it (its last), in one query.
_ENTRIES = (
    f"SELECT {', '.join('i.' + c.strip() for c in ITEM_COLUMNS.split(','))}, "
    f"{', '.join('a.' + c.strip() for c in ATTEMPT_COLUMNS.split(','))} "
    "FROM items i LEFT JOIN attempts a ON a.item_id = i.id AND a.turn = i.turns "
    "WHERE i.export_batch = ? ORDER BY i.id"
)
_ITEM_WIDTH = len(ITEM_COLUMNS.split(","))


def _batch(conn: sqlite3.Connection, batch: int, path: str, offset: int) -> ExportBatch:
    entries = []
    for row in conn.execute(_ENTRIES, (batch,)):
        item = item_of(row[:_ITEM_WIDTH])
        tail = row[_ITEM_WIDTH:]
        attempt = None if tail[0] is None else attempt_of(item.key, tail)
        entries.append(ExportEntry(item, attempt))
    return ExportBatch(batch, path, offset, tuple(entries))


def claim_batch(db: Database, path: str, offset: int, limit: int) -> ExportBatch | None:
    with db.write() as conn:
        ids = [
            r[0]
            for r in conn.execute(
                "SELECT id FROM items WHERE state != 'TODO' AND export_batch IS NULL "
                "ORDER BY id LIMIT ?",
                (limit,),
            )
        ]
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


def open_batches(db: Database, path: str) -> list[ExportBatch]:
    with db.read() as conn:
        rows = conn.execute(
            "SELECT id, offset FROM export_batches WHERE path = ? AND done = 0 ORDER BY id",
            (path,),
        ).fetchall()
        return [_batch(conn, b, path, offset) for b, offset in rows]


def open_batch_paths(db: Database) -> list[str]:
    with db.read() as conn:
        return [
            r[0]
            for r in conn.execute(
                "SELECT DISTINCT path FROM export_batches WHERE done = 0 ORDER BY path"
            )
        ]


def finish_batch(db: Database, batch: int) -> None:
    with db.write() as conn:
        conn.execute("UPDATE export_batches SET done = 1 WHERE id = ?", (batch,))


def exported_count(db: Database) -> int:
    with db.read() as conn:
        return int(
            conn.execute(
                "SELECT count(*) FROM items i JOIN export_batches b ON b.id = i.export_batch "
                "WHERE b.done = 1"
            ).fetchone()[0]
        )
