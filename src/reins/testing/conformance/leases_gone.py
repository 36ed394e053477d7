"""Leases whose holder is gone: a process of this host that no longer runs holds nothing.

A driver of :mod:`reins.store.holder` writes its process into its owner name (host, pid, start
time, boot). Once that process is gone — killed, its pid free or reused — a lease, a
``lease_many`` or a batch job opened on this host takes its items at once, and a job it held is
taken over at once; a live holder, a holder on another host or in another boot, and an owner
named before holders were recorded keep their leases until they run out, as before. Every
call passes ``now=`` (the fake clock): an item taken before T0 + TTL was taken over, not freed by
time. Two stores on one location stand for the killed run's and the rerun's.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from reins.store import holder
from reins.store.jobs import JobDraft
from reins.store.protocol import Store
from reins.testing.conformance._kit import T0, TTL, assert_sound, leased, opened
from reins.testing.harness import StoreHarness

__all__ = [
    "test_a_holder_gone_while_the_driver_runs_gives_its_items_up_once_none_is_free",
    "test_a_job_held_by_a_holder_that_is_gone_is_taken_over_at_once",
    "test_a_lease_whose_holder_is_gone_is_taken_at_once",
    "test_a_lease_whose_holder_runs_or_is_unknown_here_runs_its_course",
    "test_lease_many_and_a_new_job_take_a_gone_holder_s_items_at_once",
]


def gone_holder(driver: str) -> str:
    """The owner name ``driver`` wrote in a process that has exited since (skips the test where
    ``/proc`` tells nothing: there no holder is recorded)."""
    if holder.boot() is None:
        pytest.skip("/proc gives no boot id here: owners carry no holder")
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                             stdin=subprocess.PIPE)  # fmt: skip
    try:
        name = holder.holder_name(driver, pid=child.pid)
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait()
    assert holder.gone(name), name
    return name


def _left_with(store: Store, owner: str, keys: int) -> list[str]:
    """``owner`` leases ``keys`` items, oldest first (as a run does before it is killed)."""
    return [leased(store, f"{owner}#{n}").item.key for n in range(keys)]


def test_a_lease_whose_holder_is_gone_is_taken_at_once(store_harness: StoreHarness) -> None:
    location = store_harness.create()
    dead = gone_holder("loop")
    with opened(store_harness, location) as killed:
        assert _left_with(killed, dead, 2) == ["a", "b"]
    with opened(store_harness, location, keys=()) as rerun:
        ann = leased(rerun, "ann", now=T0 + 1)
        assert ann.item.key == "a" and not ann.renewed  # the oldest, not the one left free
        bob = leased(rerun, "bob", now=T0 + 1)
        assert bob.item.key == "b"  # the sweep ended every lease of the gone holder at once
        left = rerun.get("c")
        assert left.lease_owner is None
        assert rerun.stats(now=T0 + 1).leased == 2
        assert_sound(rerun)


def test_a_holder_gone_while_the_driver_runs_gives_its_items_up_once_none_is_free(
    store_harness: StoreHarness,
) -> None:
    """A ledger looks for gone holders on its first lease, then only when a lease finds too
    few items free (at most once a second): a lease costs no more while items are free."""
    location = store_harness.create()
    dead = gone_holder("loop")
    with opened(store_harness, location) as driver:
        assert leased(driver, "ann").item.key == "a"  # its first lease: nobody is gone yet
        with opened(store_harness, location, keys=()) as killed:
            assert _left_with(killed, dead, 2) == ["b", "c"]
        # Nothing free, but it looked half a second ago: it does not look again yet.
        assert driver.lease_many(["bob", "cid"], ttl=TTL, now=T0 + 0.5) == []
        many = driver.lease_many(["bob", "cid"], ttl=TTL, now=T0 + 1)  # too few free: it looks
        assert [lease.item.key for lease, _ in many] == ["b", "c"]
        assert_sound(driver)


def test_lease_many_and_a_new_job_take_a_gone_holder_s_items_at_once(
    store_harness: StoreHarness,
) -> None:
    keys = [f"k{i}" for i in range(6)]
    dead = gone_holder("loop")
    many, job = store_harness.create(), store_harness.create()
    for location in (many, job):
        with opened(store_harness, location, keys=keys) as killed:
            assert _left_with(killed, dead, 3) == ["k0", "k1", "k2"]
    with opened(store_harness, many, keys=()) as rerun:
        got = rerun.lease_many(["x#0", "x#1"], ttl=TTL, now=T0 + 1)
        assert [lease.item.key for lease, _ in got] == ["k0", "k1"]
        assert_sound(rerun)
    with opened(store_harness, job, keys=()) as batch:
        draft = JobDraft("openai", "gpt-test", "loop", "loop@elsewhere:1")
        opened_job = batch.open_job(draft, limit=4, hold=TTL, now=T0 + 1)
        assert opened_job is not None and opened_job[1] == ["k0", "k1", "k2", "k3"]
        assert_sound(batch)


def test_a_lease_whose_holder_runs_or_is_unknown_here_runs_its_course(
    store_harness: StoreHarness,
) -> None:
    dead, host, boot = gone_holder("loop"), holder.host(), holder.boot()
    pid = dead.split(":")[1]
    unknown = {
        "live": holder.holder_name("loop"),  # this very process
        "another host": dead.replace(f"@{host}:", f"@{host}-elsewhere:"),
        "another boot": dead.replace(f":{boot}.", ":000000000000."),
        "written before holders": f"loop@{host}:{pid}.ab12",
        "a person": "ann",
    }
    keys = [f"k{i}" for i in range(len(unknown) + 1)]
    location = store_harness.create()
    with opened(store_harness, location, keys=keys) as first:
        for owner in unknown.values():
            leased(first, owner)
    with opened(store_harness, location, keys=()) as rerun:
        assert leased(rerun, "bob", now=T0 + 1).item.key == keys[-1]  # the one left free
        assert rerun.lease("cid", ttl=TTL, now=T0 + 2) is None
        held = {rerun.get(k).lease_owner for k in keys[:-1]}
        assert held == set(unknown.values())
        after = rerun.lease_many(["dan#0", "dan#1"], ttl=TTL, now=T0 + TTL)  # they ran out
        assert [lease.item.key for lease, _ in after] == keys[:2]
        assert_sound(rerun)


def test_a_job_held_by_a_holder_that_is_gone_is_taken_over_at_once(
    store_harness: StoreHarness,
) -> None:
    location = store_harness.create()
    dead, live = gone_holder("loop"), holder.holder_name("loop")
    with opened(store_harness, location) as killed:
        jobs = []
        for name in (dead, live):
            draft = JobDraft("openai", "gpt-test", "loop", name)
            opened_job = killed.open_job(draft, limit=1, hold=TTL, now=T0)
            assert opened_job is not None
            jobs.append(opened_job[0].id)
    with opened(store_harness, location, keys=()) as rerun:
        mine = holder.holder_name("rerun")
        assert rerun.hold_job(jobs[0], mine, ttl=TTL, now=T0 + 1) is True  # at once
        assert rerun.hold_job(jobs[1], mine, ttl=TTL, now=T0 + 1) is False  # its holder runs
        held = {j.id: j for j in rerun.jobs()}
        assert (held[jobs[0]].holder, held[jobs[0]].held_until) == (mine, T0 + 1 + TTL)
        assert (held[jobs[1]].holder, held[jobs[1]].held_until) == (live, T0 + TTL)
        assert rerun.hold_job(jobs[1], mine, ttl=TTL, now=T0 + TTL) is True  # it ran out
        assert_sound(rerun)
