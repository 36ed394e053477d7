"""A PostgreSQL server that crashes: a lease granted just before may be lost, a turn never is.

The server of these tests is its own (its WAL writer is stopped, which the session's server
must not be). With the WAL writer stopped (SIGSTOP), nothing writes the WAL buffers out but a
commit that waits for the disk; killing the WAL writer then crashes the server for real: the
postmaster ends every backend, drops shared memory (the WAL buffers with it) and recovers from
the WAL on disk, as after a power cut. A lease, whose commit does not wait, is lost; a turn,
whose commit does, is kept, and so is every lease before it.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator

import psycopg
import pytest

from reins.errors import LeaseConflict
from reins.store.model import AttemptKind, Claim, Draft, Notes, State, Transition
from reins.store.postgres import PostgresStore
from reins.testing.postgres import TempCluster

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


@pytest.fixture
def cluster(postgres_url: str) -> Iterator[TempCluster]:
    """A server of this test's own (``postgres_url``: PostgreSQL is installed)."""
    with TempCluster() as server:
        yield server


def fail(key: str) -> Draft:
    return Draft(
        key=key,
        kind=AttemptKind.JUDGED,
        transition=Transition(State.TODO, 1),
        outcome="FAIL",
        notes=Notes(via="loop", nonce=os.urandom(4).hex()),
    )


def _walwriter(url: str) -> int | None:
    with psycopg.connect(url, autocommit=True, connect_timeout=2) as conn:
        row = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE backend_type = 'walwriter'"
        ).fetchone()
    return None if row is None else int(row[0])


def crash(url: str, walwriter: int) -> None:
    """Kill the (stopped) WAL writer and wait until the server has recovered."""
    os.kill(walwriter, signal.SIGKILL)
    ends = time.monotonic() + 60
    while True:
        assert time.monotonic() < ends, "the server did not come back after the crash"
        try:
            again = _walwriter(url)
        except psycopg.Error:
            again = None
        if again is not None and again != walwriter:
            return
        time.sleep(0.05)


def test_a_crash_loses_a_lease_granted_just_before_it_and_never_a_turn(
    cluster: TempCluster,
) -> None:
    url = f"{cluster.url}?schema=crash"
    with PostgresStore.open(url, create=True) as store:
        store.add((k, {"word": k}) for k in "abcd")
        store.record(fail("d"), Claim("ann", 0))
        walwriter = _walwriter(cluster.url)
        assert walwriter is not None
        os.kill(walwriter, signal.SIGSTOP)  # only a commit that waits writes the WAL now
        kept = store.lease("ann", ttl=600)  # made durable by the turn after it
        assert kept is not None and kept.item.key == "a"
        turned, _ = store.record(fail("a"), Claim("ann", 0, token=kept.token))
        lost = store.lease("bob", ttl=600)
        assert lost is not None and lost.item.key == "b"
        crash(cluster.url, walwriter)
        # The connections died with the server: the store's pool replaces them.
        assert store.get("a") == turned and store.snapshot("a")[1][-1].outcome == "FAIL"
        assert store.get("a").lease_owner == "ann"  # the lease before a durable turn stands
        assert store.get("d").turns == 1
        b = store.get("b")
        assert (b.lease_owner, b.lease_token, b.turns) == (None, None, 0)  # lost: free again
        # bob's turn under the lease the server forgot is still checked: on the free item it
        # is recorded, and the lease is gone with it.
        after, attempt = store.record(fail("b"), Claim("bob", 0, token=lost.token))
        assert (attempt.turn, after.lease_owner) == (1, None)
        assert store.check() == []


def test_a_record_under_a_lost_lease_is_refused_once_another_driver_leased_the_item(
    cluster: TempCluster,
) -> None:
    url = f"{cluster.url}?schema=crash2"
    with PostgresStore.open(url, create=True) as store:
        store.add((k, {"word": k}) for k in "ab")
        store.record(fail("b"), Claim("ann", 0))
        walwriter = _walwriter(cluster.url)
        assert walwriter is not None
        os.kill(walwriter, signal.SIGSTOP)
        lost = store.lease("ann", ttl=600)
        assert lost is not None and lost.item.key == "a"
        crash(cluster.url, walwriter)
        cid = store.lease("cid", ttl=600)  # after the restart, another driver takes a
        assert cid is not None and cid.item.key == "a"
        before = store.snapshot("a")
        with pytest.raises(LeaseConflict, match="cid"):
            store.record(fail("a"), Claim("ann", 0, token=lost.token))
        assert store.snapshot("a") == before and store.check() == []
