"""The Store conformance suite: what every engine of :class:`~reins.store.protocol.Store` must do.

Plain pytest tests that take one fixture, ``store_harness`` (a
:class:`~reins.testing.harness.StoreHarness` for the engine under test). An engine's test
module imports them all and defines that fixture::

    import pytest
    from reins.testing.conformance import *  # noqa: F403
    from reins.testing.harness import SQLiteHarness, StoreHarness

    @pytest.fixture
    def store_harness(tmp_path) -> StoreHarness:
        return SQLiteHarness(tmp_path)

Everything goes through the protocol; the harness is the only door to an engine's insides
(hand-written SQL, fingerprints, ledgers in odd states). Every test leaves ``check()`` empty.
Importing this module imports pytest and hypothesis (both dev dependencies).

The tests are grouped by the protocol's method groups, one module each (a group with two
modules names the second after what it adds), and each module lists its tests in its own
``__all__``; this package's ``__all__`` is theirs, joined. ``_kit`` holds what they share.
"""

import pytest

# The protocol's method groups (docs/architecture.md, "The Store protocol"), then the opening
# of a ledger and the state machine.
_MODULES = (
    "items",  # add, get, snapshot, last_attempts: what goes in comes out
    "items_pages",  # page(PageQuery): keyset pages and their filters
    "charts",  # activity, recent: the log over time
    "leases",  # lease, heartbeat, release, release_all, soonest_expiry
    "leases_many",  # lease_many: several owners in one transaction; leases a crash lost
    "leases_gone",  # leases and job holds of a holder process that is gone: taken at once
    "recording",  # record: the ratchet, claims, retries, judge errors
    "recording_human",  # record: a person's actions on locked items
    "counters",  # stats, meta, set_meta
    "owner",  # owner, adopted: a ledger belongs to one quest
    "export",  # claim_export … finish_export: each lock in the file exactly once
    "export_withdrawals",  # the same batches: a reopened lock withdrawn exactly once
    "export_files",  # each file gets each lock once: a new file, one deleted or cut, in turn
    "tamper",  # check, refused_locks and export against a ledger written by hand
    "batchjobs",  # open_job … job_requests: a batch round's items, leased to its provider batch
    "people",  # reserve, decisions, reviewers: the reviewer's desk
    "copying",  # load, and store/walk.py's copy
    "opening",  # open: refusal of what is not ours, migrations
    "machine",  # a hypothesis state machine over all of them
)
# Under pytest, a failed assert in the suite shows its values, as in a test module of one's own.
pytest.register_assert_rewrite(*(f"{__name__}.{name}" for name in ("_kit", "_machine", *_MODULES)))

from reins.testing.conformance import (  # noqa: E402
    batchjobs,
    charts,
    copying,
    counters,
    export,
    export_files,
    export_withdrawals,
    items,
    items_pages,
    leases,
    leases_gone,
    leases_many,
    machine,
    opening,
    owner,
    people,
    recording,
    recording_human,
    tamper,
)
from reins.testing.conformance.batchjobs import *  # noqa: E402, F403
from reins.testing.conformance.charts import *  # noqa: E402, F403
from reins.testing.conformance.copying import *  # noqa: E402, F403
from reins.testing.conformance.counters import *  # noqa: E402, F403
from reins.testing.conformance.export import *  # noqa: E402, F403
from reins.testing.conformance.export_files import *  # noqa: E402, F403
from reins.testing.conformance.export_withdrawals import *  # noqa: E402, F403
from reins.testing.conformance.items import *  # noqa: E402, F403
from reins.testing.conformance.items_pages import *  # noqa: E402, F403
from reins.testing.conformance.leases import *  # noqa: E402, F403
from reins.testing.conformance.leases_gone import *  # noqa: E402, F403
from reins.testing.conformance.leases_many import *  # noqa: E402, F403
from reins.testing.conformance.machine import *  # noqa: E402, F403
from reins.testing.conformance.opening import *  # noqa: E402, F403
from reins.testing.conformance.owner import *  # noqa: E402, F403
from reins.testing.conformance.people import *  # noqa: E402, F403
from reins.testing.conformance.recording import *  # noqa: E402, F403
from reins.testing.conformance.recording_human import *  # noqa: E402, F403
from reins.testing.conformance.tamper import *  # noqa: E402, F403

__all__: list[str] = []
__all__ += items.__all__
__all__ += items_pages.__all__
__all__ += charts.__all__
__all__ += leases.__all__
__all__ += leases_many.__all__
__all__ += leases_gone.__all__
__all__ += recording.__all__
__all__ += recording_human.__all__
__all__ += counters.__all__
__all__ += owner.__all__
__all__ += export.__all__
__all__ += export_withdrawals.__all__
__all__ += export_files.__all__
__all__ += tamper.__all__
__all__ += batchjobs.__all__
__all__ += people.__all__
__all__ += copying.__all__
__all__ += opening.__all__
__all__ += machine.__all__
