"""Leases: one item in progress per owner, never one item to two owners, expiry frees it.

Two stores opened on one location stand for two processes. Every call passes ``now=``: the
tests move a fake clock instead of sleeping.
"""

from __future__ import annotations

import threading

import pytest

from reins.errors import LeaseConflict, TurnMoved
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
    "test_a_heartbeat_extends_a_lease",
    "test_a_lease_passes_over_the_keys_it_is_told_to_exclude",
    "test_a_live_lease_refuses_another_owners_record",
    "test_an_expired_lease_returns_the_item_to_the_pool",
    "test_an_owner_gets_its_item_again",
    "test_concurrent_leases_from_two_stores_never_collide",
    "test_every_lease_hands_out_a_new_token_and_a_stale_one_is_refused",
    "test_lease_holders_name_each_owner_once",
    "test_nexts_since_submit_counts_until_a_judged_record",
    "test_release_gives_an_item_back",
    "test_soonest_expiry",
    "test_two_stores_never_lease_one_item_to_two_owners",
]


def test_two_stores_never_lease_one_item_to_two_owners(store_harness: StoreHarness) -> None:
    location = store_harness.create()
    with opened(store_harness, location) as one, opened(store_harness, location, keys=()) as two:
        ann, bob = leased(one, "ann"), leased(two, "bob")
        cid = leased(one, "cid")
        assert [ann.item.key, bob.item.key, cid.item.key] == ["a", "b", "c"]
        assert not (ann.renewed or bob.renewed or cid.renewed)
        assert two.lease("dan", ttl=TTL, now=T0) is None
        for lease, owner in ((ann, "ann"), (bob, "bob"), (cid, "cid")):
            item = two.get(lease.item.key)
            assert (item.lease_owner, item.lease_expires) == (owner, T0 + TTL)
            assert (lease.item.lease_owner, lease.item.lease_expires) == (owner, T0 + TTL)
        assert one.stats(now=T0).leased == 3
        assert one.stats(now=T0 + TTL).leased == 0
        assert_sound(one)


def test_concurrent_leases_from_two_stores_never_collide(store_harness: StoreHarness) -> None:
    location = store_harness.create()
    keys = [f"k{i:02d}" for i in range(40)]
    got: dict[str, list[str]] = {}
    errors: list[BaseException] = []
    start = threading.Barrier(2)

    def work(name: str) -> None:
        try:
            store = store_harness.open(location)
            try:
                start.wait()
                got[name] = []
                for n in range(20):
                    lease = store.lease(f"{name}-{n}", ttl=TTL, now=T0)
                    got[name].append("" if lease is None else lease.item.key)
            finally:
                store.close()
        except BaseException as exc:  # re-raised in the test's thread
            errors.append(exc)
            start.abort()

    with opened(store_harness, location, keys=keys) as store:
        threads = [threading.Thread(target=work, args=(n,)) for n in ("p", "q")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        leased = got["p"] + got["q"]
        assert sorted(leased) == keys  # every item once: none twice, none missed
        holders = [store.get(k).lease_owner or "" for k in keys]
        assert all(h.startswith(("p-", "q-")) for h in holders)
        assert store.stats(now=T0).leased == 40
        assert_sound(store)


def test_an_owner_gets_its_item_again(store_harness: StoreHarness) -> None:
    location = store_harness.create()
    with opened(store_harness, location) as one, opened(store_harness, location, keys=()) as two:
        first = leased(one, "ann", T0)
        again = leased(two, "ann", T0 + 1)  # the owner, not the connection, holds the lease
        assert first.item.key == again.item.key == "a"
        assert (first.renewed, first.nexts_since_submit) == (False, 1)
        assert (again.renewed, again.nexts_since_submit) == (True, 2)
        assert again.item.lease_expires == one.get("a").lease_expires == T0 + 1 + TTL
        assert leased(one, "bob", T0 + 1).item.key == "b"


def test_a_lease_passes_over_the_keys_it_is_told_to_exclude(store_harness: StoreHarness) -> None:
    """What a loop run has set aside is not leased again, even once its lease has expired;
    an owner's own live lease still comes first, and other owners see the item as usual."""
    with opened(store_harness) as store:
        assert leased(store, "ann").item.key == "a"
        free = store.lease("bob", ttl=TTL, now=T0, excluding=["b", "zz"])
        assert free is not None and free.item.key == "c"
        assert store.release("c", "bob")
        assert store.lease("cid", ttl=TTL, now=T0, excluding=["b", "c"]) is None
        late = store.lease("cid", ttl=TTL, now=T0 + TTL, excluding=("b", "c"))
        assert late is not None and late.item.key == "a"  # ann's lease ran out
        own = store.lease("cid", ttl=TTL, now=T0 + TTL, excluding=["a"])
        assert own is not None and (own.item.key, own.renewed) == ("a", True)
        odd = ["it's", 'a "quoted" key', "ünï\u00e7ode", "b"]
        dan = store.lease("dan", ttl=TTL, now=T0 + TTL, excluding=odd)
        assert dan is not None and dan.item.key == "c"
        assert store.get("b").lease_owner is None
        assert leased(store, "eve", T0 + TTL).item.key == "b"
        assert_sound(store)


def test_an_expired_lease_returns_the_item_to_the_pool(store_harness: StoreHarness) -> None:
    with opened(store_harness) as store:
        for who in ("ann", "bob", "cid"):
            leased(store, who, T0)
        assert store.lease("dan", ttl=TTL, now=T0 + TTL - 1) is None
        late = leased(store, "dan", T0 + TTL)  # a lease is over at its expiry time
        assert (late.item.key, late.renewed) == ("a", False)
        ann = leased(store, "ann", T0 + TTL)  # ann's own lease ran out and dan took a
        assert (ann.item.key, ann.renewed) == ("b", False)
        assert store.get("a").lease_owner == "dan"
        assert_sound(store)


def test_a_heartbeat_extends_a_lease(store_harness: StoreHarness) -> None:
    with opened(store_harness, keys=["a"]) as store:
        leased(store, "ann", T0)
        assert store.heartbeat("a", "ann", ttl=TTL, now=T0 + 50)
        assert store.get("a").lease_expires == T0 + 50 + TTL
        assert store.lease("bob", ttl=TTL, now=T0 + TTL + 5) is None  # still ann's
        assert not store.heartbeat("a", "bob", ttl=TTL, now=T0 + TTL + 5)
        assert store.get("a").lease_expires == T0 + 50 + TTL
        bob = leased(store, "bob", T0 + 50 + TTL)
        assert bob.item.key == "a"
        assert not store.heartbeat("a", "ann", ttl=TTL, now=T0 + 50 + TTL + 1)  # lost to bob
        assert store.get("a").lease_owner == "bob"
        turn(store, "a", "PASS", driver="bob", now=T0 + 50 + TTL + 1)
        assert not store.heartbeat("a", "bob", ttl=TTL, now=T0 + 50 + TTL + 2)  # locked
        assert store.get("a").lease_owner is None
        assert_sound(store)


def test_release_gives_an_item_back(store_harness: StoreHarness) -> None:
    with opened(store_harness) as store:
        assert leased(store, "ann").item.key == "a"
        assert not store.release("a", "bob")
        assert store.get("a").lease_owner == "ann"
        assert store.release("a", "ann")
        assert not store.release("a", "ann")
        assert store.get("a").lease_owner is None
        assert store.stats(now=T0).leased == 0
        assert leased(store, "bob").item.key == "a"
        assert leased(store, "cid").item.key == "b"
        assert store.stats(now=T0).leased == 2
        assert store.release_all("bob") == 1
        assert store.release_all("bob") == 0
        assert store.release_all("nobody") == 0
        assert store.get("a").lease_owner is None and store.get("b").lease_owner == "cid"
        assert leased(store, "dan").item.key == "a"
        assert store.stats(now=T0).leased == 2
        assert_sound(store)


def test_soonest_expiry(store_harness: StoreHarness) -> None:
    with opened(store_harness) as store:
        assert store.soonest_expiry() is None
        leased(store, "ann", T0)
        leased(store, "bob", T0 + 10)
        assert store.soonest_expiry() == T0 + TTL
        assert store.soonest_expiry(excluding=["ann"]) == T0 + 10 + TTL
        assert store.soonest_expiry(excluding=["ann", "bob"]) is None
        assert store.soonest_expiry(excluding=["cid"]) == T0 + TTL
        assert store.release("a", "ann")
        assert store.soonest_expiry() == T0 + 10 + TTL  # an expired lease still counts
        turn(store, "b", "PASS", driver="bob", now=T0 + 11)  # a locked item holds no lease
        assert store.soonest_expiry() is None


def test_a_live_lease_refuses_another_owners_record(store_harness: StoreHarness) -> None:
    with opened(store_harness) as store:
        assert leased(store, "ann").item.key == "a"
        before = world(store)
        with pytest.raises(LeaseConflict, match="ann") as caught:
            turn(store, "a", "FAIL", driver="bob", now=T0 + 1)
        assert not isinstance(caught.value, TurnMoved)
        assert world(store) == before
        # The holder records under another driver name; a turn that stays TODO keeps the lease.
        item, attempt = turn(store, "a", "FAIL", driver="loop", owner="ann", now=T0 + 1)
        assert attempt.driver == "loop"
        assert (item.lease_owner, item.lease_expires) == ("ann", T0 + TTL)
        item, _ = turn(store, "a", "ERROR", driver="loop", owner="ann", now=T0 + 2)
        assert item.lease_owner == "ann" and store.get("a").lease_owner == "ann"
        # Once the lease runs out anyone may record; the lease is then gone.
        item, _ = turn(store, "a", "FAIL", driver="bob", now=T0 + TTL)
        assert store.get("a").tries == 2
        assert store.get("a").lease_owner is None
        assert store.stats(now=T0 + TTL).leased == 0
        # A turn that locks the item ends its holder's lease.
        assert leased(store, "cid", T0 + TTL).item.key == "a"
        item, _ = turn(store, "a", "REVIEW", driver="cid", now=T0 + TTL + 1)
        assert item.lease_owner is None and store.get("a").lease_owner is None
        assert store.stats(now=T0 + TTL + 1).leased == 0
        assert_sound(store)


def test_nexts_since_submit_counts_until_a_judged_record(store_harness: StoreHarness) -> None:
    with opened(store_harness) as store:
        assert [leased(store, "ann", T0 + n).nexts_since_submit for n in range(3)] == [1, 2, 3]
        turn(store, "a", "ERROR", driver="ann", now=T0 + 3)  # a generation error is no submit
        assert leased(store, "ann", T0 + 4).nexts_since_submit == 4
        assert leased(store, "bob", T0 + 4).nexts_since_submit == 1
        turn(store, "b", "FAIL", driver="bob", now=T0 + 4)  # bob's submit is not ann's
        again = leased(store, "ann", T0 + 5)
        assert (again.item.key, again.renewed, again.nexts_since_submit) == ("a", True, 5)
        turn(store, "a", "FAIL", driver="loop", owner="ann", now=T0 + 5)  # counts for the holder
        again = leased(store, "ann", T0 + 6)
        assert (again.item.key, again.renewed, again.nexts_since_submit) == ("a", True, 1)
        turn(store, "a", "PASS", driver="ann", now=T0 + 6)
        after = leased(store, "ann", T0 + 7)
        assert (after.item.key, after.renewed, after.nexts_since_submit) == ("c", False, 1)
        assert_sound(store)


def test_every_lease_hands_out_a_new_token_and_a_stale_one_is_refused(
    store_harness: StoreHarness,
) -> None:
    location = store_harness.create()
    with opened(store_harness, location) as one, opened(store_harness, location, keys=()) as two:
        first = leased(one, "ann")
        assert first.token and first.item.lease_token == first.token
        assert two.get("a").lease_token == first.token
        # A second agent under the same driver name, in another process, renews the lease.
        second = leased(two, "ann", T0 + 1)
        assert second.renewed and second.item.key == "a" and second.token != first.token
        assert one.get("a").lease_token == second.token == second.item.lease_token
        before = world(one, T0 + 2)
        for claim in (
            Claim("ann", 0, token=first.token),
            Claim("loop", 0, owner="ann", token=first.token),
            Claim("ann", 0, token="not-a-token"),
        ):
            with pytest.raises(LeaseConflict, match="stale") as caught:
                one.record(make_draft(one.get("a"), "FAIL"), claim, now=T0 + 2)
            assert type(caught.value) is LeaseConflict
            assert world(one, T0 + 2) == before
        assert one.heartbeat("a", "ann", ttl=TTL, now=T0 + 3)
        assert two.get("a").lease_token == second.token  # a heartbeat keeps the token
        item, _ = one.record(
            make_draft(one.get("a"), "FAIL"), Claim("ann", 0, token=second.token), now=T0 + 4
        )
        assert (item.lease_owner, item.lease_token) == ("ann", second.token)  # still ann's
        assert two.get("a").lease_token == second.token
        item, _ = one.record(
            make_draft(item, "PASS"), Claim("ann", 1, token=second.token), now=T0 + 5
        )
        assert (item.lease_owner, item.lease_token) == (None, None)  # a lock ends both
        assert two.get("a") == item
        bob, cid = leased(one, "bob", T0 + 5), leased(two, "cid", T0 + 5)
        assert len({first.token, second.token, bob.token, cid.token}) == 4
        assert one.release(bob.item.key, "bob")
        assert one.get(bob.item.key).lease_token is None
        assert two.release_all("cid") == 1
        assert one.get(cid.item.key).lease_token is None
        assert_sound(one)


def test_lease_holders_name_each_owner_once(store_harness: StoreHarness) -> None:
    with opened(store_harness) as store:
        assert store.lease_holders() == []
        leased(store, "ann", T0)
        leased(store, "bob", T0)
        assert sorted(store.lease_holders()) == ["ann", "bob"]
        assert store.release("a", "ann")
        assert store.lease_holders() == ["bob"]
