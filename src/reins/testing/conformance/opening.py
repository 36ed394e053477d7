"""Opening: refuse what is not a ledger of ours without changing a byte; create only when
asked; migrate older ones, with their data, once."""

from __future__ import annotations

import gc
import threading
from pathlib import Path

import pytest

from reins.errors import CorruptLedger, LedgerError, NotFound, WrongQuest
from reins.store.export import export
from reins.store.model import AttemptKind, Claim, Draft, State, Transition
from reins.store.owner import Owner
from reins.store.protocol import Store
from reins.store.query import PageQuery
from reins.testing.conformance._kit import (
    OTHER_OWNER,
    T0,
    TINY_OWNER,
    TTL,
    assert_sound,
    everything,
    keys_in,
    turn,
)
from reins.testing.harness import StoreHarness

__all__ = [
    "test_a_failed_migration_leaves_the_ledger_as_it_was",
    "test_a_ledger_not_ours_is_refused_and_left_untouched",
    "test_a_ledger_whose_tables_are_not_its_version_s_says_what_to_do",
    "test_a_missing_ledger_is_not_created_unless_asked",
    "test_an_older_ledger_is_migrated_and_adopted_at_once",
    "test_an_older_ledger_is_refused_for_another_quest_before_it_is_migrated",
    "test_every_earlier_schema_is_migrated_with_its_data",
    "test_two_stores_opening_an_old_ledger_at_once_migrate_it_once",
]


def _current(harness: StoreHarness) -> int:
    store = harness.open(harness.create())
    try:
        return store.schema_version
    finally:
        store.close()


@pytest.mark.parametrize("kind", ["foreign", "newer", "damaged", "mislabelled"])
def test_a_ledger_not_ours_is_refused_and_left_untouched(
    store_harness: StoreHarness, kind: str
) -> None:
    make = {
        "foreign": store_harness.make_foreign,
        "newer": store_harness.make_newer,
        "damaged": store_harness.make_damaged,
        "mislabelled": store_harness.make_mislabelled,
    }[kind]
    location = make()
    if location is None:
        pytest.skip(f"the {store_harness.name} harness cannot make a {kind} ledger")
    before = store_harness.fingerprint(location)
    for create in (False, True):
        # Untouched at once, not once the garbage collector happens to close what was opened.
        gc.disable()
        try:
            with pytest.raises(CorruptLedger):
                store_harness.open(location, create=create).close()
            assert store_harness.fingerprint(location) == before, (kind, create)
        finally:
            gc.enable()


def test_a_ledger_whose_tables_are_not_its_version_s_says_what_to_do(
    store_harness: StoreHarness,
) -> None:
    location = store_harness.make_mislabelled()
    if location is None:
        pytest.skip(f"the {store_harness.name} harness cannot make a mislabelled ledger")
    with pytest.raises(CorruptLedger, match="says schema version 2") as refused:
        store_harness.open(location, owner=Owner("tiny", "here")).close()
    assert "left untouched" in str(refused.value)
    assert "are those of version" in str(refused.value)  # what it holds, and how to set it


def test_a_failed_migration_leaves_the_ledger_as_it_was(store_harness: StoreHarness) -> None:
    location = store_harness.make_unmigratable()
    if location is None:
        pytest.skip(f"the {store_harness.name} harness cannot make an unmigratable ledger")
    before = store_harness.fingerprint(location)
    gc.disable()
    try:
        for owner in (None, Owner("tiny", "here")):
            with pytest.raises(LedgerError, match="migrating it from schema version 2") as failed:
                store_harness.open(location, owner=owner).close()
            assert "rolled back" in str(failed.value) and "is mine" in str(failed.value)
            assert store_harness.fingerprint(location) == before, owner
    finally:
        gc.enable()


def test_a_missing_ledger_is_not_created_unless_asked(store_harness: StoreHarness) -> None:
    location = store_harness.missing()
    for _ in range(2):  # the refused open made nothing there
        with pytest.raises(NotFound):
            store_harness.open(location).close()
    store = store_harness.open(location, create=True)
    try:
        assert store.schema_version == _current(store_harness)
        assert store.stats(now=T0).total == 0 and store.exported_count() == 0
        assert store.check() == []
        assert store.add([("a", {"word": "a"})]) == (1, 0)
    finally:
        store.close()
    store = store_harness.open(location)
    try:
        assert store.get("a").payload == {"word": "a"}
    finally:
        store.close()


def _assert_v1_data(store: Store) -> None:
    """Items a, b and c as :meth:`StoreHarness.make_at_version` left them."""
    entries = everything(store)
    assert [(i.key, i.state, i.tries, i.turns, i.payload) for i, _ in entries] == [
        ("a", State.PASS, 0, 1, {"word": "a"}),
        ("b", State.TODO, 1, 1, {"word": "b"}),
        ("c", State.TODO, 0, 0, {"word": "c"}),
    ]
    (_, log_a), (_, log_b), (_, log_c) = entries
    assert [(x.kind, x.outcome, x.state_after) for x in log_a] == [
        (AttemptKind.JUDGED, "PASS", State.PASS)
    ]
    assert [(x.kind, x.outcome, x.root_cause, x.tries_after) for x in log_b] == [
        (AttemptKind.JUDGED, "FAIL", "not-bad", 1)
    ]
    assert [f.rule for f in log_b[0].facts] == ["not-bad"] and log_c == []
    assert [i.key for i in store.page(PageQuery(rule="not-bad")).items] == ["b"]
    assert [i.key for i in store.page(PageQuery(state=State.TODO)).items] == ["b", "c"]


def test_every_earlier_schema_is_migrated_with_its_data(
    store_harness: StoreHarness, tmp_path: Path
) -> None:
    current = _current(store_harness)
    assert store_harness.earlier_versions, "a harness names the schemas it can build"
    for version in store_harness.earlier_versions:
        assert version < current
        location = store_harness.make_at_version(version)
        store = store_harness.open(location)
        try:
            assert store.schema_version == current, version
            assert_sound(store)
            stats = store.stats(now=T0)  # v3's counters, filled from the log kept so far
            assert stats.kinds == ({"judged": 2} if version >= 1 else {}), version
            assert (stats.reopened, stats.gates) == (0, {}), version
            if version >= 1:
                _assert_v1_data(store)
                before = everything(store)
            else:
                assert everything(store) == []
                store.add((k, {"word": k}) for k in "abc")
                before = everything(store)
        finally:
            store.close()
        store = store_harness.open(location)  # opened again: migrated once, data as it was
        try:
            assert store.schema_version == current and everything(store) == before
            # What the schema gained works on the migrated data.
            lease = store.lease("ann", ttl=TTL, now=T0)
            assert lease is not None and lease.item.key == ("b" if version >= 1 else "a")
            item, _ = turn(store, lease.item.key, "FAIL", driver="ann", rule_id="not-ugly")
            assert item.lease_owner == "ann" and item.root_cause == "not-ugly"
            assert [i.key for i in store.page(PageQuery(rule="not-ugly")).items] == [lease.item.key]
            turn(store, "c", "PASS")
            out = tmp_path / f"v{version}.jsonl"
            assert export(store, out).count == (2 if version >= 1 else 1)
            assert sorted(keys_in(out)) == (["a", "c"] if version >= 1 else ["c"])
            assert_sound(store)
            # A person reopens the item locked before the migration, and it is worked again.
            key = "a" if version >= 1 else "c"
            reopen = Draft(
                key=key,
                kind=AttemptKind.HUMAN,
                transition=Transition(State.TODO, 0, new_round=True),
                action="reopen",
            )
            item, attempt = store.record(reopen, Claim("pat", store.get(key).turns), now=T0)
            assert (item.state, item.tries, item.round, attempt.round) == (State.TODO, 0, 2, 2)
            item, _ = turn(store, key, "PASS")
            assert (item.state, item.round) == (State.PASS, 2)
            assert export(store, out).count == 1 and keys_in(out).count(key) == 2
            assert store.stats(now=T0).reopened == 1
            assert_sound(store)
        finally:
            store.close()


def test_an_older_ledger_is_refused_for_another_quest_before_it_is_migrated(
    store_harness: StoreHarness,
) -> None:
    for version in store_harness.earlier_versions:
        if version < 1:
            continue
        location = store_harness.make_at_version(version)
        store_harness.execute(
            location, "INSERT INTO meta (key, value) VALUES ('owner.name', 'tiny')"
        )
        before = store_harness.fingerprint(location)
        with pytest.raises(WrongQuest):
            store_harness.open(location, owner=OTHER_OWNER).close()
        assert store_harness.fingerprint(location) == before, version
        store = store_harness.open(location, owner=TINY_OWNER)  # its own quest migrates it
        try:
            assert store.schema_version == _current(store_harness)
            assert (store.owner, store.adopted) == (Owner("tiny"), False)
            _assert_v1_data(store)
        finally:
            store.close()


def test_an_older_ledger_is_migrated_and_adopted_at_once(store_harness: StoreHarness) -> None:
    for version in store_harness.earlier_versions:
        location = store_harness.make_at_version(version)
        store = store_harness.open(location, owner=TINY_OWNER)
        try:
            assert (store.schema_version, store.owner) == (_current(store_harness), TINY_OWNER)
            assert store.adopted, version
        finally:
            store.close()


def _open_at_once(harness: StoreHarness, location: str, n: int = 2) -> list[Store]:
    """Open ``location`` from ``n`` threads at the same moment, as ``n`` processes would."""
    stores: list[Store] = []
    errors: list[BaseException] = []
    start = threading.Barrier(n)

    def open_it() -> None:
        try:
            start.wait()
            stores.append(harness.open(location))
        except BaseException as exc:  # re-raised in the test's thread
            errors.append(exc)
            start.abort()

    threads = [threading.Thread(target=open_it) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        for store in stores:
            store.close()
        raise errors[0]
    return stores


def test_two_stores_opening_an_old_ledger_at_once_migrate_it_once(
    store_harness: StoreHarness,
) -> None:
    current = _current(store_harness)
    for version in store_harness.earlier_versions:
        if version < 1:
            continue
        stores = _open_at_once(store_harness, store_harness.make_at_version(version))
        try:
            for store in stores:
                assert store.schema_version == current
                _assert_v1_data(store)
                assert_sound(store)
        finally:
            for store in stores:
                store.close()
