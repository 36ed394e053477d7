"""The owner: a ledger belongs to the quest that made it (``owner``, ``adopted``); another
quest's ledger is refused untouched, an older one adopts its first quest once."""

from __future__ import annotations

import gc

import pytest

from reins.errors import WrongQuest
from reins.store.owner import Owner
from reins.testing.conformance._kit import OTHER_OWNER, TINY_OWNER, turn
from reins.testing.harness import StoreHarness

__all__ = [
    "test_a_ledger_from_before_quests_were_recorded_adopts_the_first_once",
    "test_a_ledger_of_another_quest_is_refused_and_left_untouched",
    "test_a_new_ledger_belongs_to_the_quest_that_made_it",
]


def test_a_new_ledger_belongs_to_the_quest_that_made_it(store_harness: StoreHarness) -> None:
    location = store_harness.missing()
    store = store_harness.open(location, create=True, owner=TINY_OWNER)
    try:
        assert (store.owner, store.adopted) == (TINY_OWNER, False)
        store.add([("a", {"word": "a"})])
    finally:
        store.close()
    for owner in (None, TINY_OWNER, Owner("tiny", "./tiny")):  # compared by name, not by origin
        store = store_harness.open(location, owner=owner)
        try:
            assert (store.owner, store.adopted) == (TINY_OWNER, False), owner
        finally:
            store.close()


def test_a_ledger_of_another_quest_is_refused_and_left_untouched(
    store_harness: StoreHarness,
) -> None:
    location = store_harness.missing()
    store = store_harness.open(location, create=True, owner=TINY_OWNER)
    try:
        store.add([("a", {"word": "a"})])
        turn(store, "a", "FAIL")
    finally:
        store.close()
    before = store_harness.fingerprint(location)
    gc.disable()
    try:
        for create in (False, True):
            with pytest.raises(WrongQuest) as refused:
                store_harness.open(location, create=create, owner=OTHER_OWNER).close()
            message = str(refused.value)
            assert "'tiny' (/quests/tiny)" in message and "'other' (pkg.other:quest)" in message
            assert "--quest /quests/tiny" in message and "--ledger" in message
            assert store_harness.fingerprint(location) == before, create
    finally:
        gc.enable()


def test_a_ledger_from_before_quests_were_recorded_adopts_the_first_once(
    store_harness: StoreHarness,
) -> None:
    location = store_harness.create()  # opened without a quest: as a ledger made before
    store = store_harness.open(location)
    try:
        assert (store.owner, store.adopted) == (None, False)  # no quest given: nothing recorded
        store.add([("a", {"word": "a"})])
    finally:
        store.close()
    store = store_harness.open(location, owner=TINY_OWNER)
    try:
        assert (store.owner, store.adopted) == (TINY_OWNER, True)
    finally:
        store.close()
    store = store_harness.open(location, owner=TINY_OWNER)
    try:
        assert (store.owner, store.adopted) == (TINY_OWNER, False)  # said once
        assert store.get("a").payload == {"word": "a"} and store.check() == []
    finally:
        store.close()
    with pytest.raises(WrongQuest):
        store_harness.open(location, owner=OTHER_OWNER).close()
