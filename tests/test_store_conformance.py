"""The Store conformance suite (reins.testing.conformance) on every engine reins ships: the
``store_harness`` fixture (tests/conftest.py) runs each test on SQLite and on PostgreSQL."""

from __future__ import annotations

from reins.testing.conformance import *  # noqa: F403
