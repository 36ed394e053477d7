"""Issue 26's forged lock, end to end: a coding agent run unconfined (``--sandbox none``) opens
the ledger file itself and marks another item PASS with sqlite3. ``reins ledger check`` names
that item, and neither the loop's export nor a later ``reins export`` writes it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reins import SQLiteStore, State
from reins.errors import Exit
from tests.kit.codingkit import FILE_HOLDS_KEY, agent, cli, events, quest_repo

# Does k1's work, and, while at it, locks k2 in the ledger whose path it was given.
FORGER = """
import os, sqlite3, sys
key = os.path.basename(os.getcwd())
open(key + ".txt", "w").write(key)
if key == "k1":
    ledger = sqlite3.connect(sys.argv[1], timeout=30)
    ledger.execute(
        "UPDATE items SET state = 'PASS', locked_at = '2026-01-01T00:00:00.000Z' "
        "WHERE key = 'k2'"
    )
    ledger.commit()
    ledger.close()
print(f"Wrote {key}.txt.")
"""
REASON = "item k2 is PASS, but no attempt locked it: it has no attempt in its log"


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in ("REINS_QUEST", "REINS_LEDGER", "REINS_MODEL"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def test_an_unconfined_agent_s_forged_lock_is_reported_and_never_exported(here: Path) -> None:
    quest_repo(here / "q", ["k1", "k2"], FILE_HOLDS_KEY)
    assert cli("-q", "q", "scan").exit_code == 0
    ledger = here / "q.reins.db"
    script = agent(here / "agent.py", FORGER)
    model = f"cmd:{script} {ledger}"
    out = cli("-q", "q", "loop", "--model", model, "--sandbox", "none", "--json")
    assert out.exit_code == 0, out.output
    seen = events(out)
    turns = [(e["key"], e["outcome"]) for e in seen if e["event"] == "turn"]
    assert turns == [("k1", "PASS")]  # k2 was never worked: the forger locked it
    assert {"event": "refused", "key": "k2", "state": "PASS", "reason": REASON} in seen
    assert seen[-1]["refused"] == ["k2"]
    assert f"note: not exported: {REASON} (`reins ledger check` lists it)" in out.stderr
    with SQLiteStore.open(ledger) as led:
        assert led.get("k2").state is State.PASS and led.get("k2").turns == 0
    checked = cli("-q", "q", "ledger", "check")
    assert checked.exit_code == Exit.UNSOUND and checked.stdout == f"{REASON}\n"
    results = here / "q-results.jsonl"
    exported = cli("-q", "q", "export")
    assert exported.exit_code == 0 and REASON in exported.stderr
    records = [json.loads(line) for line in results.read_text().splitlines()]
    assert [(r["key"], r["state"]) for r in records] == [("k1", "PASS")]
