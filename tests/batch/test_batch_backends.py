"""The openai and anthropic backends' batch APIs on the wire, against the fake provider."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from reins.backends import registry
from reins.backends.batch import BATCH_PRICE, BatchAPI, BatchLine, BatchOutcome, batch_api
from reins.errors import BackendError
from reins.loop.rounds import custom_id
from reins.values import Prompt
from tests.kit.batchserver import KEY, Answer, Ask, BatchServer, Expire, Fail, FakeProvider

LINES = [
    BatchLine(f"tag01-{n}-{k}-t1", Prompt("Answer in one word.", f"Say 'good' for {k}."), 7 + n)
    for n, k in enumerate("abcd")
]


def answer(ask: Ask) -> Answer:
    if "for b." in ask.user:
        return Fail(400, "prompt too long")
    return Expire() if "for c." in ask.user else "good"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[BatchServer]:
    monkeypatch.setenv("BATCH_KEY", KEY)
    srv = BatchServer(FakeProvider(answer))
    try:
        yield srv
    finally:
        srv.close()


def api(spec: str) -> BatchAPI:
    found = batch_api(registry.resolve(spec))
    assert found is not None
    return found


def finish(a: BatchAPI, batch_id: str) -> Any:
    async def go() -> Any:
        remote = await a.retrieve(batch_id)
        while not remote.ended:
            remote = await a.retrieve(batch_id)
        got = await a.results(remote)
        assert got.bad == []
        return remote, got.results

    return asyncio.run(go())


def test_openai_uploads_a_named_jsonl_file_and_makes_a_batch_of_it(server: BatchServer) -> None:
    a = api(server.openai(price_in="2", price_out="10"))
    file_id = asyncio.run(a.upload("tag01", LINES))
    assert (
        asyncio.run(a.find_upload("tag01")) == file_id and asyncio.run(a.find_upload("x")) is None
    )
    upload = next(e for e in server.fake.log if e["path"] == "/v1/files" and e["method"] == "POST")
    assert upload["headers"]["authorization"] == f"Bearer {KEY}"
    name, data, _ = server.fake.files[file_id]
    assert name == "reins-tag01.jsonl"
    lines = [json.loads(x) for x in data.splitlines()]
    assert [x["custom_id"] for x in lines] == [x.custom_id for x in LINES]
    assert {(x["method"], x["url"]) for x in lines} == {("POST", "/v1/chat/completions")}
    assert lines[0]["body"]["model"] == "gpt-test" and lines[0]["body"]["seed"] == 7
    assert lines[0]["body"]["messages"][0] == {"role": "system", "content": "Answer in one word."}
    remote = asyncio.run(a.create("tag01", file_id, []))
    create = json.loads(server.fake.log[-1]["body"])
    assert create == {"input_file_id": file_id, "endpoint": "/v1/chat/completions",
                      "completion_window": "24h", "metadata": {"reins_job": "tag01"}}  # fmt: skip
    assert [b.id for b in asyncio.run(a.find("tag01", None, since=0, total=4))] == [remote.id]
    assert [b.id for b in asyncio.run(a.find("other", file_id, since=0, total=4))] == [remote.id]
    assert asyncio.run(a.find("other", "file-x", since=0, total=4)) == []
    ended, results = finish(a, remote.id)
    assert ended.status == "completed" and ended.counts == {"total": 4, "completed": 2, "failed": 2}
    by_id = {r.custom_id: r for r in results}
    assert [r.custom_id for r in results] != [x.custom_id for x in LINES]  # out of order
    good = by_id[LINES[0].custom_id].completion
    assert good is not None and good.text == "good" and good.batch
    assert good.list_cost == pytest.approx((good.input_tokens * 2 + 2 * 10) / 1e6)
    assert good.cost == pytest.approx(good.list_cost * BATCH_PRICE)
    failed, expired = by_id[LINES[1].custom_id], by_id[LINES[2].custom_id]
    assert failed.outcome is BatchOutcome.ERRORED and "HTTP 400: prompt too long" in (
        failed.error or ""
    )
    assert expired.outcome is BatchOutcome.EXPIRED and "expired" in (expired.error or "")
    assert KEY not in repr(results)


def test_anthropic_sends_every_request_in_one_call_and_reads_the_documented_results(
    server: BatchServer,
) -> None:
    a = api(server.anthropic())
    assert not a.uploads and asyncio.run(a.find_upload("tag01")) is None
    remote = asyncio.run(a.create("tag01", None, LINES))
    sent = server.fake.log[-1]
    assert sent["headers"]["x-api-key"] == KEY and sent["headers"]["anthropic-version"]
    body = json.loads(sent["body"])
    assert [r["custom_id"] for r in body["requests"]] == [x.custom_id for x in LINES]
    params = body["requests"][0]["params"]
    assert params["system"] == "Answer in one word." and params["model"] == "claude-test"
    assert params["messages"] == [{"role": "user", "content": "Say 'good' for a."}]
    # No metadata at Anthropic: a batch is found by its size and time.
    assert [b.id for b in asyncio.run(a.find("x", None, since=0, total=4))] == [remote.id]
    assert asyncio.run(a.find("x", None, since=0, total=3)) == []
    ended, results = finish(a, remote.id)
    assert ended.counts["succeeded"] == 2 and ended.counts["errored"] == 1
    assert server.fake.log[-1]["path"] == f"/v1/messages/batches/{remote.id}/results"
    outcomes = {r.custom_id: r.outcome for r in results}
    assert [outcomes[x.custom_id] for x in LINES] == [
        BatchOutcome.SUCCEEDED, BatchOutcome.ERRORED, BatchOutcome.EXPIRED, BatchOutcome.SUCCEEDED,
    ]  # fmt: skip


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_failed_create_is_not_retried_and_polls_are(server: BatchServer, provider: str) -> None:
    a = api(server.openai() if provider == "openai" else server.anthropic())
    base = "/v1/batches" if provider == "openai" else "/v1/messages/batches"
    file_id = asyncio.run(a.upload("t", LINES)) if a.uploads else None
    server.fake.fault("POST", f"^{base}$", 500, times=1)
    with pytest.raises(BackendError) as failed:
        asyncio.run(a.create("t", file_id, LINES))
    assert failed.value.retryable and server.fake.calls("POST", f"^{base}$") == 1
    remote = asyncio.run(a.create("t", file_id, LINES))
    server.fake.fault("GET", f"^{base}/", 429, times=2)
    assert asyncio.run(a.retrieve(remote.id)).id == remote.id
    assert server.fake.calls("GET", f"^{base}/") == 3


def test_custom_ids_are_safe_short_and_unique() -> None:
    keys = ["a", "a b/c?é", "x" * 200, "emails/2026-01-01.eml", ""]
    ids = [custom_id("0123456789", n, k, 12345) for n, k in enumerate(keys)]
    assert all(re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", i) for i in ids), ids
    assert len(set(ids)) == len(ids) and ids[1] == "0123456789-1-a_b_c_-t12345"
    assert all(i.startswith("0123456789-") for i in ids)
