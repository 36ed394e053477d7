"""The Store conformance suite (reins.testing.conformance) on every engine reins ships."""

from __future__ import annotations

from pathlib import Path

import pytest

from reins.testing.conformance import *  # noqa: F403
from reins.testing.harness import SQLiteHarness, StoreHarness


@pytest.fixture(params=["sqlite", "postgres"])
def store_harness(request: pytest.FixtureRequest, tmp_path: Path) -> StoreHarness:
    if request.param == "sqlite":
        return SQLiteHarness(tmp_path)
    try:
        harness: StoreHarness = request.getfixturevalue("postgres_harness")
    except pytest.FixtureLookupError:
        pytest.skip("PostgreSQL: no postgres_harness fixture yet")
    return harness
