"""A real PostgreSQL server for the tests: one throwaway cluster per test session.

``postgres_url`` starts it on first use (``initdb`` in a temporary folder, 127.0.0.1 only, a
free port, trust authentication, ``fsync=off``) and removes it when the session ends; the
conftest marks the tests that use it ``postgres``. They are skipped only when PostgreSQL is not
installed (no ``initdb`` on PATH or in /usr/lib/postgresql/*/bin); a server that is installed
but does not start fails them. ``postgres_harness`` hands each test a
:class:`~reins.testing.postgres.PostgresHarness` on that server (a fresh schema per ledger).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from reins.testing.postgres import PostgresHarness, TempCluster


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """The base URL of the session's PostgreSQL server (superuser, database ``postgres``)."""
    try:
        cluster = TempCluster()
    except FileNotFoundError as exc:
        pytest.skip(f"PostgreSQL is not installed ({exc}); .ci/run installs it")
    with cluster:
        yield cluster.url


@pytest.fixture
def postgres_harness(postgres_url: str) -> PostgresHarness:
    """A conformance harness whose ledgers are fresh schemas on the session's server."""
    return PostgresHarness(postgres_url)
