"""The SQLite engine: one file, WAL, one short write transaction per recorded turn.

Several processes on one machine may share a ledger. Writes take SQLite's write lock up front
(``BEGIN IMMEDIATE``) so that a read-decide-write sequence is never interleaved with another
writer; readers never block writers (WAL). Each concern lives in its own module; this class
only joins them into the :class:`~reins.store.protocol.Store` protocol.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import Any

from reins.store.model import (
    Activity,
    Attempt,
    Claim,
    Draft,
    ExportBatch,
    Item,
    Lease,
    Page,
    State,
    Stats,
)
from reins.store.owner import Owner
from reins.store.sqlite import counters, exports, items, leases, record
from reins.store.sqlite.connection import Opened, open_database


class SQLiteStore:
    """A reins ledger in one SQLite file. Open it with :meth:`open`; close it when done."""

    def __init__(self, opened: Opened) -> None:
        self._db = opened.db
        self._version = opened.version
        self._owner = opened.owner
        self._adopted = opened.adopted

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

    @property
    def location(self) -> str:
        return str(self._db.path)

    @property
    def schema_version(self) -> int:
        return self._version

    @property
    def owner(self) -> Owner | None:
        return self._owner

    @property
    def adopted(self) -> bool:
        return self._adopted

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add(self, seeds: Iterable[tuple[str, Any]]) -> tuple[int, int]:
        return items.add(self._db, seeds)

    def get(self, key: str) -> Item:
        return items.get(self._db, key)

    def snapshot(self, key: str) -> tuple[Item, list[Attempt]]:
        return items.snapshot(self._db, key)

    def page(
        self,
        *,
        state: State | None = None,
        rule: str | None = None,
        leased_to: str | None = None,
        after: int | None = None,
        limit: int = 100,
        round: int | None = None,
        contains: str | None = None,
        descending: bool = False,
    ) -> Page:
        return items.page(
            self._db,
            state=state,
            rule=rule,
            leased_to=leased_to,
            after=after,
            limit=limit,
            round_=round,
            contains=contains,
            descending=descending,
        )

    def activity(self, *, samples: int = 48, window: int = 64) -> Activity:
        return items.activity(self._db, samples=samples, window=window)

    def lease(
        self,
        owner: str,
        *,
        ttl: float,
        now: float | None = None,
        excluding: Collection[str] = (),
    ) -> Lease | None:
        return leases.lease(self._db, owner, ttl=ttl, now=now, excluding=excluding)

    def heartbeat(self, key: str, owner: str, *, ttl: float, now: float | None = None) -> bool:
        return leases.heartbeat(self._db, key, owner, ttl=ttl, now=now)

    def release(self, key: str, owner: str) -> bool:
        return leases.release(self._db, key, owner)

    def release_all(self, owner: str) -> int:
        return leases.release_all(self._db, owner)

    def soonest_expiry(self, *, excluding: Collection[str] = ()) -> float | None:
        return leases.soonest_expiry(self._db, excluding=excluding)

    def record(
        self, draft: Draft, claim: Claim, *, now: float | None = None
    ) -> tuple[Item, Attempt]:
        return record.record(self._db, draft, claim, now=now)

    def stats(self, *, now: float | None = None) -> Stats:
        return counters.stats(self._db, now=now)

    def meta(self, key: str) -> str | None:
        return counters.meta(self._db, key)

    def set_meta(self, key: str, value: str) -> None:
        counters.set_meta(self._db, key, value)

    def check(self) -> list[str]:
        return counters.check(self._db)

    def claim_batch(self, path: str, offset: int, limit: int) -> ExportBatch | None:
        return exports.claim_batch(self._db, path, offset, limit)

    def open_batches(self, path: str) -> list[ExportBatch]:
        return exports.open_batches(self._db, path)

    def open_batch_paths(self) -> list[str]:
        return exports.open_batch_paths(self._db)

    def finish_batch(self, batch: int) -> None:
        exports.finish_batch(self._db, batch)

    def exported_count(self) -> int:
        return exports.exported_count(self._db)

    def load(self, entries: Iterable[tuple[Item, Sequence[Attempt]]]) -> int:
        return record.load(self._db, entries)
