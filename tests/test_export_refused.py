"""A lock written into the ledger by hand is never exported, and every command that exports says
which items it refused and why, and that ``reins ledger check`` lists them: ``reins export``,
a locking ``submit``, the loop's export of its results (``--batch`` too), each with a
``refused`` field or event under ``--json``."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reins import SQLiteStore
from reins.host.session import AgentSession, Options
from reins.loop import NullReporter, RefusedEvent
from reins.store.export import Exported
from reins.store.lockfault import LockFault
from reins.testing import FakeBackend, FakeCall
from tests.kit import TINY, Cli
from tests.kit.batchkit import batch_loop, steered
from tests.kit.batchserver import KEY, Answer, Ask, BatchServer, FakeProvider
from tests.kit.loopkit import loop, make_ledger, registered

REASON = "item b is PASS, but no attempt locked it: it has no attempt in its log"
SAID = (
    "reins: export refused 1 locked item(s) whose lock no attempt produced; `reins ledger "
    f"check` lists them:\n  {REASON}\n"
)
REFUSED = [{"key": "b", "state": "PASS", "reason": REASON}]


def forge(ledger: Path, key: str = "b") -> None:
    """What an unconfined agent did in issue 26: one UPDATE on the ledger file."""
    conn = sqlite3.connect(ledger)
    conn.execute(
        "UPDATE items SET state = 'PASS', locked_at = '2026-01-01T00:00:00.000Z' WHERE key = ?",
        (key,),
    )
    conn.commit()
    conn.close()


def keys_in(results: Path) -> list[tuple[str, str]]:
    return [(r["key"], r["state"]) for r in map(json.loads, results.read_text().splitlines())]


def test_reins_export_refuses_a_forged_lock_and_says_why(cli: Cli, tmp_path: Path) -> None:
    assert cli("scan").exit_code == 0
    assert cli("submit", "--key", "a", "--no-export", input="good").exit_code == 0
    forge(tmp_path / "tiny.reins.db")
    out = cli("export")
    assert out.exit_code == 0
    assert out.stdout == "exported 1 new record(s) to tiny-results.jsonl\n"
    assert out.stderr == SAID
    assert keys_in(tmp_path / "tiny-results.jsonl") == [("a", "PASS")]
    again = cli("export", "--json")  # refused again by every export: nothing marks it done
    assert json.loads(again.stdout) == {
        "exported": 0,
        "out": "tiny-results.jsonl",
        "refused": REFUSED,
    }
    assert again.stderr == SAID
    checked = cli("ledger", "check")
    assert checked.exit_code == 9 and checked.stdout == f"{REASON}\n"


def test_a_locking_submit_says_what_its_export_refused(cli: Cli, tmp_path: Path) -> None:
    assert cli("scan").exit_code == 0
    forge(tmp_path / "tiny.reins.db")
    out = cli("submit", "--key", "a", "--json", input="good")
    assert out.exit_code == 0
    assert json.loads(out.stdout)["exported"] == 1
    assert json.loads(out.stdout)["refused"] == REFUSED
    assert out.stderr.endswith(SAID)
    assert keys_in(tmp_path / "tiny-results.jsonl") == [("a", "PASS")]


def test_a_person_s_action_and_a_replay_say_what_their_export_refused(
    cli: Cli, tmp_path: Path
) -> None:
    assert cli("scan").exit_code == 0
    assert cli("submit", "--key", "a", input="good").exit_code == 0
    forge(tmp_path / "tiny.reins.db")
    reopened = cli("reopen", "a", "--reason", "again")
    assert reopened.exit_code == 0 and reopened.stderr.endswith(SAID)
    (tmp_path / "lines.jsonl").write_text('{"key": "a", "output": "good"}\n')
    replayed = cli("replay", "--from", "lines.jsonl", "--json")
    assert replayed.exit_code == 0 and replayed.stderr.endswith(SAID)
    assert json.loads(replayed.stdout.splitlines()[-1])["refused"] == REFUSED
    assert keys_in(tmp_path / "tiny-results.jsonl") == [
        ("a", "PASS"),
        ("a", "TODO"),
        ("a", "PASS"),
    ]


def test_an_mcp_submit_says_the_refusal_to_the_person_not_to_the_agent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger = make_ledger(tmp_path / "t.reins.db")
    forge(ledger)
    results = tmp_path / "results.jsonl"
    with SQLiteStore.open(ledger) as store:
        session = AgentSession(store, TINY, "agent", Options(60, 10_000, results))
        reply = session.call("submit", {"key": "a", "submission": "good"})
    assert not reply.is_error and all(REASON not in block for block in reply.blocks)
    assert capsys.readouterr().err == f"reins mcp: {SAID.removeprefix('reins: ')}"
    assert keys_in(results) == [("a", "PASS")]


def forging(ledger: Path) -> FakeBackend:
    """A backend that, asked for a, forges b's lock (as an agent beside the loop could), then
    answers every item well."""

    def answer(call: FakeCall) -> str:
        if call.key == "a":
            forge(ledger)
        return "good"

    return FakeBackend(answer)


def test_the_loop_does_not_export_a_lock_forged_while_it_ran(tmp_path: Path) -> None:
    ledger = make_ledger(tmp_path / "t.reins.db")
    results = tmp_path / "results.jsonl"
    seen: list[RefusedEvent] = []

    class Refusals(NullReporter):
        def refused(self, event: RefusedEvent) -> None:
            seen.append(event)

    summary = loop(ledger, forging(ledger), results=results, reporter=Refusals())
    assert summary.remaining == 0 and summary.locked == {"PASS": 2}
    assert keys_in(results) == [("a", "PASS"), ("c", "PASS")]
    assert summary.exported == 2 and summary.refused == ("b",)
    assert seen == [RefusedEvent("b", "PASS", REASON)]  # said once, however often it exports


def test_reins_loop_says_the_refusal_on_stderr_and_as_an_event(cli: Cli, tmp_path: Path) -> None:
    assert cli("scan").exit_code == 0
    with registered(w=forging(tmp_path / "tiny.reins.db")):
        out = cli("loop", "-m", "fake:w", "--json")
        # Nothing is left to do, but the run's last export refuses b again, and says so.
        plain = cli("loop", "-m", "fake:w")
    assert out.exit_code == 0, out.output
    events = [json.loads(line) for line in out.stdout.splitlines()]
    assert {"event": "refused", "key": "b", "state": "PASS", "reason": REASON} in events
    assert events[-1]["event"] == "summary" and events[-1]["refused"] == ["b"]
    assert f"note: not exported: {REASON} (`reins ledger check` lists it)" in out.stderr
    assert ("b", "PASS") not in keys_in(tmp_path / "tiny-results.jsonl")
    assert plain.exit_code == 0 and f"note: not exported: {REASON}" in plain.stderr
    assert "refused to export 1 item(s) whose lock no attempt produced: b" in plain.stderr


@pytest.fixture
def forging_provider(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[BatchServer]:
    """A batch provider that, answering the first round (a and b), forges c's lock."""
    monkeypatch.setenv("BATCH_KEY", KEY)
    monkeypatch.chdir(tmp_path)

    def answer(ask: Ask) -> Answer:
        if "for a." in ask.user:
            forge(tmp_path / "tiny.reins.db", "c")
        return steered(ask)

    server = BatchServer(FakeProvider(answer))
    try:
        yield server
    finally:
        server.close()


def test_a_batch_run_s_summary_names_the_lock_its_export_refused(
    forging_provider: BatchServer, tmp_path: Path
) -> None:
    make_ledger(tmp_path / "tiny.reins.db")
    out = batch_loop(forging_provider, "openai", "--round-size", "2", "--json")
    assert out.exit_code == 0, out.output
    summary: dict[str, Any] = json.loads(out.stdout.splitlines()[-1])
    assert summary["event"] == "summary" and summary["refused"] == ["c"], out.output
    said = [json.loads(x) for x in out.stdout.splitlines() if '"event":"refused"' in x]
    assert [e["key"] for e in said] == ["c"]  # an event for it, as the loop's own export has
    assert keys_in(tmp_path / "tiny-results.jsonl") == [("a", "PASS"), ("b", "PASS")]
    plain = batch_loop(forging_provider, "openai")  # the summary for people, on stderr
    assert (
        "refused to export 1 item(s) whose lock no attempt produced: c (`reins ledger check` "
        "lists them)" in plain.stderr
    ), plain.output


def fault(key: str, state: str) -> LockFault:
    return LockFault(key, state, 0, 1, 0, 0, None, None)


def test_exports_add_up_keeping_each_refused_lock_once() -> None:
    """A run's total: the records of every export, each refused lock once (its latest word)."""
    first = Exported(2, (fault("b", "PASS"),))
    total = first + Exported(1, (fault("b", "DONE"), fault("c", "PASS")))
    assert total.count == 3
    assert [(f.key, f.state) for f in total.refused] == [("b", "DONE"), ("c", "PASS")]
