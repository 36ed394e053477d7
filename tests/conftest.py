"""The fixtures every test may take by name, and the clean environment each one runs in.

What they are, and what a test imports beside them, is in ``tests/kit/__init__.py``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from reins import Quest, SQLiteStore
from reins.testing.harness import SQLiteHarness, StoreHarness
from tests.kit import CHILD_PATH, TINY, Cli, FakeServer
from tests.kit.environment import foreign
from tests.kit.pgserver import postgres_harness, postgres_url

__all__ = ["postgres_harness", "postgres_url"]  # fixtures, found here by pytest


@pytest.fixture(autouse=True)
def clean_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test starts in its own empty folder, in an environment the shell cannot change."""
    for name in list(os.environ):
        if foreign(name):
            monkeypatch.delenv(name)
    # A child process imports tests.kit too, and this tree's reins (not another checkout's that
    # an editable install may point at).
    monkeypatch.setenv("PYTHONPATH", CHILD_PATH)
    monkeypatch.setenv("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")  # the system's Chromium only
    monkeypatch.chdir(tmp_path)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test on the session's PostgreSQL server ``postgres``."""
    for item in items:
        if "postgres_url" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.postgres)


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    """``reins`` in-process, in the test's folder, on the tiny quest (see :class:`Cli`)."""
    return Cli(tmp_path)


@pytest.fixture
def http_server() -> Iterator[FakeServer]:
    """A fake HTTP server on 127.0.0.1 for the test (see :class:`FakeServer`)."""
    with FakeServer() as server:
        yield server


@pytest.fixture
def quest() -> Quest:
    return TINY


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[SQLiteStore]:
    """A SQLite ledger of the tiny quest holding a, b and c."""
    with SQLiteStore.open(tmp_path / "t.reins.db", create=True) as led:
        led.add((s[0], s[1]) for s in TINY.seed([]))
        yield led


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_harness(request: pytest.FixtureRequest, tmp_path: Path) -> StoreHarness:
    """A harness on each engine: the test runs once on SQLite (ledgers in ``tmp_path/ledgers``)
    and once on the session's PostgreSQL server (a fresh schema per ledger)."""
    if request.param == "sqlite":
        folder = tmp_path / "ledgers"
        folder.mkdir()
        return SQLiteHarness(folder)
    harness: StoreHarness = request.getfixturevalue("postgres_harness")
    return harness
