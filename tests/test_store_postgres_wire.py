"""What the PostgreSQL engine sends over the wire: a turn is one round trip, several leases are
one, and a loop makes about one round trip per turn.

A TCP proxy between the store and the server reads the client's half of the protocol and counts
the messages after which a client waits for the server: each simple ``Query`` and each ``Sync``
that ends an extended-protocol exchange (parse, bind, execute) is one round trip.
"""

from __future__ import annotations

import os
import socket
import struct
import threading
from collections.abc import Iterator
from contextlib import closing, suppress

import pytest

from reins.loop import LoopOptions, TextGenerator, run
from reins.store.model import AttemptKind, Claim, Draft, Notes, State, Transition
from reins.store.postgres import PostgresStore
from reins.store.postgres.schema import SCHEMA_VERSION
from reins.store.postgres.target import parse
from reins.testing import FakeBackend, FakeCall
from reins.testing.postgres import PostgresHarness
from tests.kit import TINY

pytestmark = pytest.mark.postgres

# Requests that come before the protocol's typed messages (SSL, GSS encryption, cancel).
_STARTUP = 196608
_REQUESTS = {80877103, 80877104, 80877102}


class CountingProxy:
    """A TCP proxy to the server counting the round trips of every connection through it."""

    def __init__(self, port: int) -> None:
        self.server_port = port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.trips = 0
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, **params: str) -> str:
        query = "&".join(
            f"{k}={v}"
            for k, v in {
                "sslmode": "disable",
                "gssencmode": "disable",
                "schema": f"w_{os.urandom(5).hex()}",
                **params,
            }.items()
        )
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres?{query}"

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.server_port))
            threading.Thread(target=self._up, args=(client, upstream), daemon=True).start()
            threading.Thread(target=_pipe, args=(upstream, client), daemon=True).start()

    def _up(self, client: socket.socket, upstream: socket.socket) -> None:
        buffer, started = b"", False
        with closing(client), closing(upstream):
            while data := _recv(client):
                buffer += data
                while True:
                    if not started and len(buffer) >= 8:
                        size, code = struct.unpack("!ii", buffer[:8])
                        if len(buffer) < size:
                            break
                        buffer, started = buffer[size:], code == _STARTUP
                        assert started or code in _REQUESTS, code
                    elif started and len(buffer) >= 5:
                        kind, size = buffer[:1], struct.unpack("!i", buffer[1:5])[0]
                        if len(buffer) < 1 + size:
                            break
                        buffer = buffer[1 + size :]
                        if kind in (b"Q", b"S"):
                            with self._lock:
                                self.trips += 1
                    else:
                        break
                try:
                    upstream.sendall(data)
                except OSError:
                    return

    def close(self) -> None:
        self.listener.close()


def _pipe(source: socket.socket, target: socket.socket) -> None:
    while data := _recv(source):
        try:
            target.sendall(data)
        except OSError:
            return


def _recv(s: socket.socket) -> bytes:
    try:
        return s.recv(65536)
    except OSError:
        return b""


@pytest.fixture
def proxy(postgres_url: str) -> Iterator[CountingProxy]:
    p = CountingProxy(int(parse(postgres_url).server.split(":")[1].split("/")[0]))
    yield p
    with suppress(OSError):
        p.close()


def draft(key: str, state: State, tries: int, kind: AttemptKind = AttemptKind.JUDGED) -> Draft:
    return Draft(
        key=key,
        kind=kind,
        transition=Transition(state, tries),
        outcome=None if kind is not AttemptKind.JUDGED else "PASS" if tries == 0 else "FAIL",
        notes=Notes(via="loop", nonce=os.urandom(4).hex()),
    )


def trips_of_turns(proxy: CountingProxy, store: PostgresStore, keys: list[str]) -> list[int]:
    """The round trips of each turn: a FAIL, a generation error and a PASS on each key."""
    counts = []
    for key in keys:
        lease = store.lease("ann", ttl=60)
        assert lease is not None and lease.item.key == key
        steps = [
            draft(key, State.TODO, 1),
            draft(key, State.TODO, 0, AttemptKind.GENERATION_ERROR),
            draft(key, State.PASS, 0),
        ]
        for n, step in enumerate(steps):
            before = proxy.trips
            turns = lease.item.turns + n
            store.record(step, Claim("loop", turns, owner="ann", token=lease.token))
            counts.append(proxy.trips - before)
    return counts


def test_a_turn_is_one_round_trip(proxy: CountingProxy) -> None:
    keys = [f"k{i:02d}" for i in range(4)]
    with PostgresStore.open(proxy.url(), create=True) as store:
        store.add((k, {"word": k}) for k in keys)
        counts = trips_of_turns(proxy, store, keys)  # before and after the server prepares it
        assert counts == [1] * len(counts)
        assert store.stats().counts[State.PASS] == 4 and store.check() == []


def test_a_turn_on_a_ledger_migrated_from_v4_is_one_round_trip(proxy: CountingProxy) -> None:
    location = PostgresHarness(proxy.url().split("?")[0] + "?sslmode=disable").make_at_version(4)
    with PostgresStore.open(location) as store:
        assert store.schema_version == SCHEMA_VERSION  # migrated on open
        counts = trips_of_turns(proxy, store, ["b"])
        assert counts == [1, 1, 1] and store.get("b").state is State.PASS
        assert store.check() == []


def test_several_leases_with_their_logs_are_one_round_trip(proxy: CountingProxy) -> None:
    keys = [f"k{i:02d}" for i in range(12)]
    with PostgresStore.open(proxy.url(), create=True) as store:
        store.add((k, {"word": k}) for k in keys)
        for key in keys[:3]:
            store.record(draft(key, State.TODO, 1), Claim("ann", 0))
        owners = [f"slot#{i}" for i in range(8)]
        before = proxy.trips
        got = store.lease_many(owners, ttl=60)
        # The ledger's first lease also reads who holds leases, once: a holder of this host
        # that is gone gives its items up (reins.store.holder). Every later one is one trip.
        assert proxy.trips - before == 2
        assert [lease.item.key for lease, _ in got] == keys[:8]
        assert [len(log) for _, log in got] == [1, 1, 1, 0, 0, 0, 0, 0]
        assert all(store.snapshot(lease.item.key)[1] == log for lease, log in got)
        before = proxy.trips
        assert store.lease("other", ttl=60) is not None
        assert proxy.trips - before == 1
        before = proxy.trips
        assert len(store.lease_many(["more#0", "more#1", "more#2"], ttl=60)) == 3
        assert proxy.trips - before == 1


def test_a_loop_makes_about_one_round_trip_per_turn(proxy: CountingProxy) -> None:
    """Every item FAILs once and then PASSes: two turns each. Beside a round trip per turn, the
    run leases eight items per round trip, and at its end each slot looks once more for an item
    and for a lease that runs out; it reads the counters now and then."""

    def answer(call: FakeCall) -> str:
        return "good" if call.turn > 1 else "bad"

    keys = [f"k{i:03d}" for i in range(120)]
    with PostgresStore.open(proxy.url(), create=True) as store:
        store.add((k, {"word": k}) for k in keys)
        before = proxy.trips
        options = LoopOptions(concurrency=8, error_backoff=0.0, breaker=None)
        summary = run(
            store, TINY, TextGenerator(FakeBackend(answer)), options=options, handle_signals=False
        )
        trips = proxy.trips - before
        assert summary.turns == 240 and store.stats().counts[State.PASS] == 120
        leasing, tail, counters = len(keys) // 8 + 1, 2 * 8, 10
        assert trips <= summary.turns + leasing + tail + counters, trips
        assert store.check() == []
