"""A results file that is not one clean line per request: each kind of trouble counted, worded
and reported (a ``batch_results`` event under ``--json``), and nothing recorded from it that
is not a result of the job's own requests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reins import SQLiteStore
from reins.backends.batch import Results, read_results
from reins.store.model import AttemptKind
from tests.kit.batchkit import batch_loop
from tests.kit.batchserver import BatchServer
from tests.kit.loopkit import make_ledger


@pytest.fixture
def path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for var in ("REINS_QUEST", "REINS_LEDGER", "REINS_MODEL"):
        monkeypatch.delenv(var, raising=False)
    return make_ledger(tmp_path / "tiny.reins.db")


def hostile(cut: dict[str, str]) -> Any:
    """A rewrite of a results file: its first line twice, two malformed lines, and its last
    line cut off halfway (``cut["id"]`` is whose result that was)."""

    def mangle(data: bytes) -> bytes:
        lines = data.splitlines()
        cut["id"] = json.loads(lines[-1])["custom_id"]
        half = lines[-1][: len(lines[-1]) // 2]
        assert cut["id"].encode() in half  # the id still shows in what is left
        out = [lines[0], lines[0], b"not json at all", b'{"no": "custom id"}', *lines[1:-1], half]
        return b"\n".join(out)  # no newline at the end: the download stopped there

    return mangle


def test_repeats_malformed_and_cut_lines_are_counted_and_said_and_the_cut_one_is_an_error(
    server: BatchServer, provider: str, path: Path
) -> None:
    cut: dict[str, str] = {}
    server.fake.mangle = hostile(cut)
    out = batch_loop(server, provider, "--json", "--no-export")
    assert out.exit_code == 0, out.output
    seen = [json.loads(line) for line in out.stdout.splitlines()]
    found = {e["problem"]: e for e in seen if e["event"] == "batch_results"}
    assert sorted(found) == ["cut", "malformed", "repeated"]
    assert list(found["cut"]) == ["event", "job", "backend", "batch_id", "problem", "count",
                                  "lines", "custom_ids", "message"]  # fmt: skip
    assert {e["job"] for e in found.values()} == {1}
    assert (
        found["repeated"]["count"] == 1
        and "the first result of each was used" in (found["repeated"]["message"])
    )
    assert found["malformed"]["count"] == 2 and len(found["malformed"]["lines"]) == 2
    assert found["cut"]["count"] == 1 and found["cut"]["custom_ids"] == [cut["id"]]
    assert "cut off" in found["cut"]["message"]
    with SQLiteStore.open(path) as led:
        [request] = [r for r in led.job_requests(1) if r.custom_id == cut["id"]]
        first = led.snapshot(request.key)[1][0]
        assert first.kind is AttemptKind.GENERATION_ERROR
        assert "cannot be read" in (first.error or "") and "cut off" in (first.error or "")
        assert "no result for this request" not in (first.error or "")
        job = led.jobs(open_only=False)[0]
        assert job.note is not None
        for said in ("1 repeated custom ids", "2 malformed lines", "1 lines cut off"):
            assert said in job.note, job.note
        stats = led.stats()
        assert stats.remaining == 0 and led.check() == []
        # Each request the provider holds was recorded as one turn, the cut one's too (as
        # an error): nothing was recorded twice, or from a line that is no result.
        assert len(server.fake.requested()) == stats.attempts


def test_a_line_is_cut_when_its_json_stops_before_its_end_and_malformed_otherwise() -> None:
    lines = [
        b'{"custom_id": "t-0-a-t1", "result": {"type": "succeeded", "message": {"content',
        b'{"custom_id": "t-1-b-t1", "result": [1, 2',
        b'{"custom_id": "t-2-c-t1", "x": "an \\" escaped quote, then the end',
        b'{"custom_id": "t-3-d-t1"} trailing words',
        b"{}}",
        b'"a string"',
        b'{"custom_id": 7}',
        b'{"custom_i',
    ]
    got = read_results(b"\n".join(lines) + b"\n\n", "f", lambda line: pytest.fail(str(line)))
    assert isinstance(got, Results) and got.results == []
    assert [(b.line, b.cut, b.custom_id) for b in got.bad] == [
        (1, True, "t-0-a-t1"), (2, True, "t-1-b-t1"), (3, True, "t-2-c-t1"),
        (4, False, "t-3-d-t1"), (5, False, None), (6, False, None), (7, False, None),
        (8, True, None),
    ]  # fmt: skip
    assert {b.file for b in got.bad} == {"f"} and got.bad[0].excerpt.startswith('{"custom_id"')
