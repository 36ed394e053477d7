"""Export bookkeeping in PostgreSQL: claimed batches with their file offsets (the file side is
:mod:`reins.store.export`).

Items are claimed with ``FOR UPDATE SKIP LOCKED``, so two processes exporting at once claim
disjoint batches, and an item another exporter marked meanwhile fails the recheck.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reins.store.codec import now_iso
from reins.store.model import ExportClaim
from reins.store.postgres.connection import SNAPSHOT, Database, Session
from reins.store.provenance import SOUND
from reins.store.sql import ENTRIES, EXPORTABLE, REFUSED, batch_of, refused_of
from reins.store.withdrawal import PREFIX

if TYPE_CHECKING:
    from reins.store.lockfault import LockFault

_ENTRIES = ENTRIES.format(mark="%s")
# Up to N unexported terminal items, then up to N in all with the withdrawals owed to the file
# (see reins.store.withdrawal), marked as one new batch, none if there is none. An owed item
# that locked again since is exported as a lock instead: its entry is only dropped. The items
# are locked, and rechecked once locked, and so are the entries: an exporter whose statement
# began before another claimed, wrote and finished a withdrawal (its item TODO and unmarked
# again) still sees the entry in its snapshot, and only the lock on the entry, which the other
# deleted, tells it the withdrawal is gone. So two exporters never claim one withdrawal.
# A lock no attempt produced is never picked, and an owed item locked so keeps its entry
# (reins.store.provenance; the SQLite engine says why).
_CLAIM = f"""
WITH picked AS (
    SELECT i.id FROM items i WHERE {EXPORTABLE}
    ORDER BY i.id LIMIT %(limit)s FOR UPDATE SKIP LOCKED
), owed AS (
    SELECT m.key, i.id, i.state = 'TODO' AS todo
    FROM meta m JOIN items i ON i.key = substr(m.key, %(skip)s)
    WHERE starts_with(m.key, %(prefix)s) AND m.value = %(path)s
      AND (i.state <> 'TODO' OR i.export_batch IS NULL) AND (i.state = 'TODO' OR {SOUND})
    ORDER BY i.id LIMIT (SELECT %(limit)s - count(*) FROM picked) FOR UPDATE OF i, m SKIP LOCKED
), dropped AS (
    DELETE FROM meta WHERE key IN (SELECT key FROM owed)
), chosen AS (
    SELECT id FROM picked UNION ALL SELECT id FROM owed WHERE todo
), batch AS (
    INSERT INTO export_batches (path, "offset", created_at)
    SELECT %(path)s, %(offset)s, %(now)s WHERE EXISTS (SELECT 1 FROM chosen) RETURNING id
), marked AS (
    UPDATE items i SET export_batch = batch.id FROM batch, chosen WHERE i.id = chosen.id
    RETURNING i.id
)
SELECT batch.id, (SELECT count(*) FROM marked) FROM batch
"""


def _batch(s: Session, batch: int, path: str, offset: int) -> ExportClaim:
    return batch_of(batch, path, offset, s.rows(_ENTRIES, (batch,)))


def claim_export(db: Database, path: str, offset: int, limit: int) -> ExportClaim | None:
    def claim(s: Session) -> ExportClaim | None:
        args = {
            "limit": limit,
            "skip": len(PREFIX) + 1,
            "prefix": PREFIX,
            "path": path,
            "offset": offset,
            "now": now_iso(),
        }
        (found,) = s.batch((_CLAIM, args), begin="BEGIN")
        if not found:
            return None
        return _batch(s, int(found[0][0]), path, offset)

    # Never made twice: a second batch at the same offset would be cut away by the first's
    # recovery. A lost answer leaves the batch open, and the next export finishes it.
    return db.write(
        claim, what=f"claiming an export claim for {path}", idempotent=False,
        outcome="the batch was either claimed, and the next export writes it, or not at all",
    )  # fmt: skip


def open_exports(db: Database, path: str) -> list[ExportClaim]:
    def read(s: Session) -> list[ExportClaim]:
        (rows,) = s.batch(
            ('SELECT id, "offset" FROM export_batches WHERE path = %s AND done = 0 ORDER BY id',
             (path,)),
            begin=SNAPSHOT,
        )  # fmt: skip
        return [_batch(s, b, path, offset) for b, offset in rows]

    return db.read(read)


def open_export_paths(db: Database) -> list[str]:
    rows = db.read(
        lambda s: s.rows(
            'SELECT DISTINCT path COLLATE "C" FROM export_batches WHERE done = 0 '
            'ORDER BY path COLLATE "C"'
        )
    )
    return [r[0] for r in rows]


def finish_export(db: Database, batch: int) -> None:
    db.write(
        lambda s: s.batch(
            ("UPDATE export_batches SET done = 1 WHERE id = %s", (batch,)),
            # A TODO item in a batch is a withdrawal, written now: it owes the file nothing more.
            (
                "UPDATE items SET export_batch = NULL WHERE export_batch = %s AND state = 'TODO'",
                (batch,),
            ),
            begin="BEGIN",
            commit=True,
        ),
        what=f"finishing export claim {batch}",
    )


def refused_locks(db: Database) -> list[LockFault]:
    # Without the JIT: compiling the provenance test costs more than running it on the few
    # items an export leaves (see reins.store.postgres.counters.check).
    def read(s: Session) -> list[LockFault]:
        _, rows = s.batch("SET LOCAL jit = off", REFUSED, begin=SNAPSHOT, commit=True)
        return refused_of(rows)

    return db.read(read)


def exported_count(db: Database) -> int:
    rows = db.read(
        lambda s: s.rows(
            "SELECT count(*) FROM items i JOIN export_batches b ON b.id = i.export_batch "
            "WHERE b.done = 1"
        )
    )
    return int(rows[0][0])
