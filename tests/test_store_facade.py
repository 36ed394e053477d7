"""One Store implementation over any engine's SQL: the built-in engines only open themselves and
say where they live, and a third-party engine plugs its own modules into the same ledger."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

import pytest

from reins.store.engine import EngineSQL
from reins.store.ledger import Ledger
from reins.store.model import Attempt, Lease, State
from reins.store.postgres import PostgresStore
from reins.store.protocol import Store
from reins.store.query import PageQuery
from reins.store.sqlite import SQLiteStore, counters, exports, items, leases, record
from reins.store.sqlite.connection import Database, open_database
from reins.turn import submit
from tests.kit import TINY

# What each engine's class may add to the ledger: how to open it and where it lives.
OWN = {SQLiteStore: {"open", "path"}, PostgresStore: {"open", "target", "schema"}}


@pytest.mark.parametrize("engine", OWN, ids=lambda c: c.__name__)
def test_each_engine_keeps_only_its_opening_and_its_location(engine: type[object]) -> None:
    assert issubclass(engine, Ledger)
    own = {name for name in vars(engine) if not name.startswith("__")}
    assert own == OWN[engine], "a Store method written in the engine instead of the ledger"


class Watched:
    """A third party's lease module: SQLite's SQL, noting the clock the ledger hands it."""

    def __init__(self) -> None:
        self.clocks: list[float] = []

    def lease(
        self, db: Database, owner: str, *, ttl: float, now: float, excluding: Collection[str]
    ) -> Lease | None:
        self.clocks.append(now)
        return leases.lease(db, owner, ttl=ttl, now=now, excluding=excluding)

    def lease_many(
        self,
        db: Database,
        owners: Sequence[str],
        *,
        ttl: float,
        now: float,
        excluding: Collection[str],
    ) -> list[tuple[Lease, list[Attempt]]]:
        return leases.lease_many(db, owners, ttl=ttl, now=now, excluding=excluding)

    def heartbeat(self, db: Database, key: str, owner: str, *, ttl: float, now: float) -> bool:
        return leases.heartbeat(db, key, owner, ttl=ttl, now=now)

    def release(self, db: Database, key: str, owner: str) -> bool:
        return leases.release(db, key, owner)

    def release_all(self, db: Database, owner: str) -> int:
        return leases.release_all(db, owner)

    def soonest_expiry(self, db: Database, *, excluding: Collection[str]) -> float | None:
        return leases.soonest_expiry(db, excluding=excluding)

    def holders(self, db: Database) -> list[str]:
        return leases.holders(db)

    def expire(self, db: Database, owners: Sequence[str], *, now: float) -> int:
        return leases.expire(db, owners, now=now)


class WatchedStore(Ledger[Database]):
    """A third-party engine: it opens its database and names its SQL; the ledger does the rest."""

    def __init__(self, path: Path, watched: Watched) -> None:
        opened = open_database(path, create=True)
        sql = EngineSQL(items, watched, record, counters, exports)
        super().__init__(opened.db, sql, version=opened.version, owner=None, adopted=False)


def test_a_third_party_engine_plugs_its_sql_into_the_one_ledger(tmp_path: Path) -> None:
    watched = Watched()
    with WatchedStore(tmp_path / "l.reins.db", watched) as opened:
        store: Store = opened  # mypy: the ledger over any engine's SQL is a Store
        assert store.add([("a", {"word": "a"}), ("b", {"word": "b"})]) == (2, 0)
        held = store.lease("ann", ttl=60)
        assert held is not None and held.item.key == "a"
        assert len(watched.clocks) == 1 and watched.clocks[0] > 0  # the ledger read the clock
        assert submit(store, TINY, "a", "good", driver="ann")[0].item.state is State.PASS
        assert [i.key for i in store.page(PageQuery(state=State.TODO)).items] == ["b"]
        assert store.location == str(tmp_path / "l.reins.db")
        assert store.check() == [] and store.stats().counts[State.PASS] == 1
