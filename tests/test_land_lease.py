"""The land lease is kept alive by the land that holds it, from a thread of its own, so a short
lease (what another host waits when the holder's host dies) never runs out under a land that
is only busy: a judgment or the whole suite may take longer than the lease."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from reins import SQLiteStore
from reins.errors import ConfigError
from reins.land.journal import LandLease


def test_a_running_land_keeps_its_lease_past_its_length_and_frees_it_when_done(
    tmp_path: Path,
) -> None:
    with SQLiteStore.open(tmp_path / "q.reins.db", create=True) as led:
        held = LandLease.take(led, ttl=0.6)  # renewed every 0.2 s by its own thread
        time.sleep(1.5)  # more than twice the lease, and nothing renewed it by hand
        with pytest.raises(ConfigError, match="another `reins land` is running"):
            LandLease.take(led, ttl=0.6)
        held.release()
        LandLease.take(led, ttl=0.6).release()  # free at once
