"""The SQLite engine: one file, WAL, one short write transaction per recorded turn.

Several processes on one machine may share a ledger. Writes take SQLite's write lock up front
(``BEGIN IMMEDIATE``) so that a read-decide-write sequence is never interleaved with another
writer; readers never block writers (WAL). Each group of the protocol's SQL lives in its own
module; :class:`~reins.store.ledger.Ledger` implements the protocol over them, and this class
only opens the file.
"""

from __future__ import annotations

import os
from pathlib import Path

from reins.store.engine import EngineSQL, JobsSQL, PeopleSQL
from reins.store.ledger import Ledger
from reins.store.owner import Owner
from reins.store.sqlite import counters, exports, items, leases, record
from reins.store.sqlite.connection import Database, Opened, open_database


def _jobs() -> JobsSQL[Database]:
    from reins.store.sqlite import jobs

    return jobs


def _people() -> PeopleSQL[Database]:
    from reins.store.sqlite import people

    return people


SQL: EngineSQL[Database] = EngineSQL(items, leases, record, counters, exports, _jobs, _people)


class SQLiteStore(Ledger[Database]):
    """A reins ledger in one SQLite file. Open it with :meth:`open`; close it when done."""

    def __init__(self, opened: Opened) -> None:
        super().__init__(
            opened.db, SQL, version=opened.version, owner=opened.owner, adopted=opened.adopted
        )

    @classmethod
    def open(
        cls, path: str | os.PathLike[str], *, create: bool = False, owner: Owner | None = None
    ) -> SQLiteStore:
        """Open the ledger at ``path`` for ``owner``; with ``create``, make one if none is there.

        A new ledger records ``owner``; one that recorded none yet takes it (see
        :attr:`adopted`); one that recorded another is refused, untouched.

        Raises:
            NotFound: no file and ``create`` is false.
            CorruptLedger: the file is not a reins ledger, is damaged, is newer than reins, or
                its tables are not those of the version it claims.
            WrongQuest: the ledger belongs to another owner.
            LedgerError: a migration failed; it was rolled back.
        """
        return cls(open_database(Path(path), create=create, owner=owner))

    @property
    def path(self) -> Path:
        return self._db.path
