"""What ``reins land`` keeps in the ledger, so that any host can land and a land killed on one
host is finished on another: the land lease (one land at a time per ledger) and the journal
(what landed on each branch).

The lease is a meta entry (``land.lease``: its holder, named as :mod:`reins.store.holder`
names a process, and until when), taken and renewed only by a compare-and-set
(:meth:`~reins.store.protocol.Store.swap_meta`): a land finds another's lease and stops, unless
that lease ran out, or its holder is a process of this host that is gone (then at once). A
land renews it before each change it merges and, while it runs, every :data:`BEAT` seconds
from a thread of its own (a judgment or the whole suite may take minutes); a land whose host
died holds it only until it runs out (:data:`TTL`), as an item's lease.

The journal of BRANCH (``land.journal.<BRANCH>``) lists each landing (the item, the merge
commit, the change's commit, the land item it came through) and the integration's commit
after it. The integration's ref (in reins' land store, or on the remote) moves first, by a
compare-and-swap, then the journal, by a compare-and-set: a land killed between the two leaves
the ref one landing ahead, and the next land, on any host, reads that landing back from the
ref's history (each merge commit names what it landed) and writes it down
(:meth:`Journal.settle`). A ledger whose lands ran before the journal existed is read the
same way: its whole journal is the history.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field

from reins.errors import ConfigError, LedgerError, WorkspaceError
from reins.land.integration import Integration, Landed
from reins.store.holder import gone, holder_name
from reins.store.protocol import Store

LEASE_META = "land.lease"
JOURNAL_META = "land.journal.{}"
TTL = 60.0
"""How long a land's lease lasts without a renewal (seconds): how long a land whose host died
holds the ledger's lands, unless it was a process of the host that looks (then none)."""
BEAT = 15.0
"""How often a running land renews its lease from a thread of its own (seconds)."""


@dataclass
class LandLease:
    """The ledger's land lease, held by this process as ``holder`` (its entry ``value``),
    renewed every :data:`BEAT` seconds by a thread of its own until :meth:`release`."""

    store: Store
    holder: str
    value: str
    ttl: float = TTL
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _stop: threading.Event = field(default_factory=threading.Event, repr=False)
    _lost: bool = False

    def _beat(self) -> None:
        while not self._stop.wait(min(BEAT, self.ttl / 3)):
            try:
                self.renew()
            except (LedgerError, OSError):  # taken over, or the ledger is gone: said at renew
                return

    @classmethod
    def take(cls, store: Store, *, ttl: float = TTL) -> LandLease:
        """The land lease, or a refusal.

        Raises:
            ConfigError: another land holds it.
        """
        held = store.meta(LEASE_META)
        if held is not None and (other := _holding(held)) is not None:
            who, until = other
            raise ConfigError(
                f"another `reins land` is running on this ledger ({who}, its lease runs until "
                f"{time.strftime('%H:%M:%S', time.localtime(until))}): wait for it to end; a "
                "land whose host died is taken over once its lease runs out"
            )
        holder = holder_name("land")
        value = _entry(holder, ttl)
        if not store.swap_meta(LEASE_META, held, value):
            raise ConfigError("another `reins land` took this ledger's land lease just now")
        lease = cls(store, holder, value, ttl)
        threading.Thread(target=lease._beat, daemon=True, name="reins-land-lease").start()
        return lease

    def renew(self) -> None:
        """Hold the lease ``ttl`` more.

        Raises:
            LedgerError: another land took it over (this one ran past its lease).
        """
        with self._lock:
            value = _entry(self.holder, self.ttl)
            if self._lost or not self.store.swap_meta(LEASE_META, self.value, value):
                self._lost = True
                raise LedgerError(
                    "this land's lease ran out and another `reins land` took it over: this "
                    "one stops here (what it landed is kept, and the other goes on from there)"
                )
            self.value = value

    def release(self) -> None:
        self._stop.set()
        with self._lock:
            if not self._lost:
                self.store.swap_meta(LEASE_META, self.value, None)


def _entry(holder: str, ttl: float) -> str:
    return json.dumps({"holder": holder, "until": time.time() + ttl})


def _holding(value: str) -> tuple[str, float] | None:
    """The live holder of a lease entry and until when (None: it ran out, or its holder is
    gone, or the entry is unreadable: free)."""
    try:
        said = json.loads(value)
        holder, until = str(said["holder"]), float(said["until"])
    except (ValueError, KeyError, TypeError):
        return None
    if until <= time.time() or gone(holder):
        return None
    return holder, until


class Journal:
    """The journal of the integration of ``branch`` in ``store``."""

    def __init__(self, store: Store, branch: str, base: str) -> None:
        self.store, self.key, self.base = store, JOURNAL_META.format(branch), base
        self.value = store.meta(self.key)
        self.landed: list[Landed] = []
        self.tip = base
        if self.value is not None:
            said = json.loads(self.value)
            self.tip = str(said["tip"])
            self.landed = [Landed(*entry) for entry in said["landed"]]

    def settle(self, integration: Integration) -> str:
        """The integration's commit, the journal and the integration's ref made to agree: a
        landing on the ref that the journal lacks (a land killed between the two) is written
        down.

        Raises:
            WorkspaceError: the ref is behind the journal, or holds another history (moved
                by someone else than reins).
        """
        history = integration.landed()
        merges = [entry.merge for entry in history]
        mine = [entry.merge for entry in self.landed]
        if merges[: len(mine)] == mine:
            if len(merges) > len(mine):
                self._write(history, integration.tip())
            return self.tip
        where = integration.where
        if mine[: len(merges)] == merges:
            raise WorkspaceError(
                f"the integration of {integration.branch} in {where} is at "
                f"{integration.tip()[:12]}, behind what this ledger says landed (up to "
                f"{self.tip[:12]}): was it moved back, or is this another store than the one "
                "reins landed in? Land from the host that holds it, or set [workspace] remote"
            )
        raise WorkspaceError(
            f"the integration of {integration.branch} in {where} holds landings this ledger "
            f"did not record (at {integration.tip()[:12]}; the ledger's is {self.tip[:12]}): "
            "someone else moved it; land onto another branch"
        )

    def append(self, entry: Landed) -> None:
        """One more landing, the integration now at its merge commit.

        Raises:
            LedgerError: another land wrote the journal meanwhile.
        """
        self._write([*self.landed, entry], entry.merge)

    def _write(self, landed: list[Landed], tip: str) -> None:
        value = json.dumps({"tip": tip, "landed": [
            [e.key, e.merge, e.commit, e.item] for e in landed
        ]})  # fmt: skip
        if not self.store.swap_meta(self.key, self.value, value):
            raise LedgerError(f"another `reins land` wrote {self.key} meanwhile: run land again")
        self.value, self.landed, self.tip = value, landed, tip
