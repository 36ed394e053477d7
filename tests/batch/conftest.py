"""What the batch tests share: the fake OpenAI and Anthropic batch provider on 127.0.0.1
(``server``, answering as :func:`tests.kit.batchkit.steered` does, with ``BATCH_KEY`` set for
the backends' key), and ``provider``, which runs a test once per protocol."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.kit.batchkit import steered
from tests.kit.batchserver import KEY, BatchServer, FakeProvider


@pytest.fixture(params=["openai", "anthropic"])
def provider(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[BatchServer]:
    monkeypatch.setenv("BATCH_KEY", KEY)
    srv = BatchServer(FakeProvider(steered))
    try:
        yield srv
    finally:
        srv.close()
