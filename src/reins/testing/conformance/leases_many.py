"""Leases, several at once: ``lease_many`` serves owners as ``lease`` would one after another,
in one transaction, each item with its log; and a record under a lease the ledger no longer
holds (a lease a server crash lost) is checked against what the ledger does hold."""

from __future__ import annotations

import threading

import pytest

from reins.errors import LeaseConflict, LedgerError
from reins.store.model import Claim
from reins.testing.conformance._kit import (
    T0,
    TTL,
    assert_sound,
    leased,
    make_draft,
    opened,
    turn,
    world,
)
from reins.testing.harness import StoreHarness

__all__ = [
    "test_a_record_under_a_lease_the_ledger_no_longer_holds",
    "test_leases_taken_together_and_alone_never_collide",
    "test_several_owners_lease_in_one_call_as_one_after_another",
]


def test_several_owners_lease_in_one_call_as_one_after_another(
    store_harness: StoreHarness,
) -> None:
    with opened(store_harness, keys="abcde") as store:
        turn(store, "b", "FAIL")
        ann = leased(store, "ann")
        got = store.lease_many(["bob", "ann", "cid", "dan"], ttl=TTL, now=T0 + 1, excluding=["c"])
        assert [(lease.item.key, lease.item.lease_owner) for lease, _ in got] == [
            ("b", "bob"),
            ("a", "ann"),  # its own live lease again, as lease() gives it
            ("d", "cid"),  # c is excluded
            ("e", "dan"),
        ]
        assert [(lease.renewed, lease.nexts_since_submit) for lease, _ in got] == [
            (False, 1),
            (True, 2),
            (False, 1),
            (False, 1),
        ]
        tokens = {lease.token for lease, _ in got} | {ann.token}
        assert len(tokens) == 5  # a new token for every lease, the renewal too
        for lease, log in got:
            item, stored = store.snapshot(lease.item.key)
            assert lease.item == item and log == stored
            assert (item.lease_token, item.lease_expires) == (lease.token, T0 + 1 + TTL)
        assert [len(log) for _, log in got] == [1, 0, 0, 0]
        rest = store.lease_many(["eve", "fay"], ttl=TTL, now=T0 + 1)
        assert [(lease.item.key, lease.item.lease_owner) for lease, _ in rest] == [("c", "eve")]
        assert store.lease_many(["gus"], ttl=TTL, now=T0 + 1) == []
        assert store.lease_many([], ttl=TTL, now=T0 + 1) == []
        before = world(store, T0 + 1)
        with pytest.raises(LedgerError, match="twice"):
            store.lease_many(["hal", "hal"], ttl=TTL, now=T0 + 1)
        assert world(store, T0 + 1) == before and store.stats(now=T0 + 1).leased == 5
        late = store.lease_many(["hal", "bob"], ttl=TTL, now=T0 + 1 + TTL)  # all expired
        assert [(lease.item.key, lease.renewed) for lease, _ in late] == [
            ("a", False),
            ("b", False),
        ]
        assert_sound(store)


def test_leases_taken_together_and_alone_never_collide(store_harness: StoreHarness) -> None:
    location = store_harness.create()
    keys = [f"k{i:02d}" for i in range(40)]
    got: dict[str, list[str]] = {"many": [], "one": []}
    errors: list[BaseException] = []
    start = threading.Barrier(2)

    def work(name: str) -> None:
        try:
            store = store_harness.open(location)
            try:
                start.wait()
                for n in range(10):
                    if name == "many":
                        owners = [f"m{n}-{i}" for i in range(4)]
                        taken = store.lease_many(owners, ttl=TTL, now=T0)
                        got[name] += [lease.item.key for lease, _ in taken]
                    else:
                        for i in range(2):
                            one = store.lease(f"o{n}-{i}", ttl=TTL, now=T0)
                            got[name] += [] if one is None else [one.item.key]
            finally:
                store.close()
        except BaseException as exc:  # re-raised in the test's thread
            errors.append(exc)
            start.abort()

    with opened(store_harness, location, keys=keys) as store:
        threads = [threading.Thread(target=work, args=(n,)) for n in got]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        assert sorted(got["many"] + got["one"]) == keys  # every item once: none twice
        assert store.stats(now=T0).leased == 40
        assert_sound(store)


def test_a_record_under_a_lease_the_ledger_no_longer_holds(store_harness: StoreHarness) -> None:
    """What a record finds after a crash lost the lease it was made under (a lease need not be
    durable): on an item nobody holds it is recorded and the item is free again; once another
    owner leased the item, or under an earlier lease of the same owner, it is refused."""
    with opened(store_harness) as store:
        lost = leased(store, "ann")
        assert store.release("a", "ann")  # the ledger as a lost lease leaves it: nobody's
        item, attempt = store.record(
            make_draft(store.get("a"), "FAIL"), Claim("ann", 0, token=lost.token), now=T0 + 1
        )
        assert (attempt.turn, attempt.driver) == (1, "ann")
        assert (item.lease_owner, item.lease_token) == (None, None) and store.get("a") == item
        bob = leased(store, "bob", T0 + 2)
        assert bob.item.key == "a"
        before = world(store, T0 + 3)
        with pytest.raises(LeaseConflict, match="bob"):
            store.record(make_draft(item, "PASS"), Claim("ann", 1, token=lost.token), now=T0 + 3)
        assert world(store, T0 + 3) == before
        # A renewal lost: ann's earlier lease of b stands, and its token is not the lost one.
        assert leased(store, "ann", T0 + 3).item.key == "b"
        before = world(store, T0 + 4)
        with pytest.raises(LeaseConflict, match="stale"):
            store.record(
                make_draft(store.get("b"), "PASS"), Claim("ann", 0, token="lost"), now=T0 + 4
            )
        assert world(store, T0 + 4) == before
        assert_sound(store)
