"""Export: each terminal item reaches the results file exactly once, crashes included."""

from __future__ import annotations

import json
import os
from pathlib import Path

from reins.ledger.export import export

from reins import Ledger, Quest
from reins.turn import submit


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def test_export_writes_terminal_items_once(ledger: Ledger, quest: Quest, tmp_path: Path) -> None:
    out = tmp_path / "out" / "r.jsonl"
    submit(ledger, quest, "a", "good", driver="t")
    submit(ledger, quest, "b", "bad", driver="t")  # FAIL with tries left: not terminal
    assert export(ledger, out) == 1
    assert export(ledger, out) == 0
    [record] = lines(out)
    assert record["key"] == "a" and record["state"] == "PASS" and record["submission"] == "good"
    assert record["payload"] == {"word": "a"}
    assert oct(out.stat().st_mode & 0o777) == "0o600"


def test_a_locking_submit_exports_automatically(
    ledger: Ledger, quest: Quest, tmp_path: Path
) -> None:
    out = tmp_path / "r.jsonl"
    _, n = submit(ledger, quest, "a", "meh", driver="t", results=out)
    assert n == 1 and lines(out)[0]["state"] == "REVIEW"
    _, n = submit(ledger, quest, "b", "bad", driver="t", results=out)
    assert n == 0 and len(lines(out)) == 1


def test_a_batch_left_open_by_a_crash_is_rewritten_once(
    ledger: Ledger, quest: Quest, tmp_path: Path
) -> None:
    out = tmp_path / "r.jsonl"
    submit(ledger, quest, "a", "good", driver="t")
    export(ledger, out)
    submit(ledger, quest, "b", "good", driver="t")
    # A process claims a batch, writes half a line, and dies before finishing it.
    _, items = ledger.claim_batch(str(out.resolve()), out.stat().st_size, 10) or (0, [])
    assert [i.key for i in items] == ["b"]
    with out.open("a") as f:
        f.write('{"key":"b","sta')
    assert export(ledger, out) == 0  # nothing new; the open batch is finished on the way
    assert [r["key"] for r in lines(out)] == ["a", "b"]
    assert ledger.exported_count() == 2


def test_a_crashed_batch_for_another_file_is_finished_by_any_export(
    ledger: Ledger, quest: Quest, tmp_path: Path
) -> None:
    other = tmp_path / "other.jsonl"
    submit(ledger, quest, "a", "good", driver="t")
    ledger.claim_batch(str(other.resolve()), 0, 10)
    assert export(ledger, tmp_path / "main.jsonl") == 0
    assert [r["key"] for r in lines(other)] == ["a"]
    assert not lines(tmp_path / "main.jsonl")


def test_a_shortened_file_is_not_padded(ledger: Ledger, quest: Quest, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    submit(ledger, quest, "a", "good", driver="t")
    ledger.claim_batch(str(out.resolve()), 500, 10)  # offset beyond the (missing) file
    export(ledger, out)
    assert b"\x00" not in out.read_bytes()
    assert [r["key"] for r in lines(out)] == ["a"]
    assert os.path.getsize(out) > 0
