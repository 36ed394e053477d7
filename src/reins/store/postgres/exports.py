"""Export bookkeeping in PostgreSQL: claimed batches with their file offsets (the file side is
:mod:`reins.store.export`).

Items are claimed with ``FOR UPDATE SKIP LOCKED``, so two processes exporting at once claim
disjoint batches, and an item another exporter marked meanwhile fails the recheck.
"""

from __future__ import annotations

from typing import Any

from psycopg import Cursor

from reins.store.codec import ATTEMPT_COLUMNS, attempt_of, now_iso
from reins.store.model import ExportBatch, ExportEntry
from reins.store.postgres.connection import Database
from reins.store.postgres.items import ITEM_COLUMNS, item_of

# Each item with the attempt that locked it (its last), in one query.
_ENTRIES = (
    f"SELECT {', '.join('i.' + c.strip() for c in ITEM_COLUMNS.split(','))}, "
    f"{', '.join('a.' + c.strip() for c in ATTEMPT_COLUMNS.split(','))} "
    "FROM items i LEFT JOIN attempts a ON a.item_id = i.id AND a.turn = i.turns "
    "WHERE i.export_batch = %s ORDER BY i.id"
)
_ITEM_WIDTH = len(ITEM_COLUMNS.split(","))


def _batch(cur: Cursor[Any], batch: int, path: str, offset: int) -> ExportBatch:
    entries = []
    for row in cur.execute(_ENTRIES, (batch,)).fetchall():
        item = item_of(row[:_ITEM_WIDTH])
        tail = row[_ITEM_WIDTH:]
        attempt = None if tail[0] is None else attempt_of(item.key, tail)
        entries.append(ExportEntry(item, attempt))
    return ExportBatch(batch, path, offset, tuple(entries))


def claim_batch(db: Database, path: str, offset: int, limit: int) -> ExportBatch | None:
    def claim(cur: Cursor[Any]) -> ExportBatch | None:
        ids = [
            r[0]
            for r in cur.execute(
                "SELECT id FROM items WHERE state <> 'TODO' AND export_batch IS NULL "
                "ORDER BY id LIMIT %s FOR UPDATE SKIP LOCKED",
                (limit,),
            ).fetchall()
        ]
        if not ids:
            return None
        found = cur.execute(
            'INSERT INTO export_batches (path, "offset", created_at) VALUES (%s, %s, %s) '
            "RETURNING id",
            (path, offset, now_iso()),
        ).fetchone()
        assert found is not None
        batch = int(found[0])
        cur.execute(
            "UPDATE items SET export_batch = %s WHERE id = ANY(%s) AND export_batch IS NULL",
            (batch, ids),
        )
        return _batch(cur, batch, path, offset)

    # Never made twice: a second batch at the same offset would be cut away by the first's
    # recovery. A lost answer leaves the batch open, and the next export finishes it.
    return db.write(
        claim, what=f"claiming an export batch for {path}", idempotent=False,
        outcome="the batch was either claimed, and the next export writes it, or not at all",
    )  # fmt: skip


def open_batches(db: Database, path: str) -> list[ExportBatch]:
    def read(cur: Cursor[Any]) -> list[ExportBatch]:
        rows = cur.execute(
            'SELECT id, "offset" FROM export_batches WHERE path = %s AND done = 0 ORDER BY id',
            (path,),
        ).fetchall()
        return [_batch(cur, b, path, offset) for b, offset in rows]

    return db.read(read)


def open_batch_paths(db: Database) -> list[str]:
    def read(cur: Cursor[Any]) -> list[str]:
        return [
            r[0]
            for r in cur.execute(
                'SELECT DISTINCT path COLLATE "C" FROM export_batches WHERE done = 0 '
                'ORDER BY path COLLATE "C"'
            ).fetchall()
        ]

    return db.read(read)


def finish_batch(db: Database, batch: int) -> None:
    def finish(cur: Cursor[Any]) -> None:
        cur.execute("UPDATE export_batches SET done = 1 WHERE id = %s", (batch,))

    db.write(finish, what=f"finishing export batch {batch}")


def exported_count(db: Database) -> int:
    def read(cur: Cursor[Any]) -> int:
        row = cur.execute(
            "SELECT count(*) FROM items i JOIN export_batches b ON b.id = i.export_batch "
            "WHERE b.done = 1"
        ).fetchone()
        return 0 if row is None else int(row[0])

    return db.read(read)
