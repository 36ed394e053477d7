"""Every command's ``--json``: its keys, in the order written, are what programs read.

The shapes are typed values now (``reins.cli.shapes``); these tests pin the documents they
write, key by key and in order, as they were when they were inline dicts, so a renamed, moved
or dropped key fails here.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from reins.cli import make_group
from reins.testing import FakeBackend
from tests.loopkit import registered

ROOT = Path(__file__).parent.parent
QUEST = "tests.conftest:TINY"

Run = Callable[..., Result]

ITEM = ["key", "state", "tries", "turns", "round", "root_cause", "leased_to", "locked_at"]
FACT = ["rule", "where", "expected", "actual", "level"]
ATTEMPT = [
    "turn",
    "kind",
    "driver",
    "outcome",
    "root_cause",
    "facts",
    "error",
    "state_after",
    "tries_after",
    "submission",
    "feedback",
    "policy",
    "backend",
    "prompt_digest",
    "input_tokens",
    "output_tokens",
    "cost",
    "latency",
    "started_at",
    "recorded_at",
    "round",
    "action",
    "note",
    "gate_digest",
    "cache_read_tokens",
    "cache_write_tokens",
    "batch",
    "list_cost",
]
SUBMITTED = [
    "key",
    "kind",
    "outcome",
    "state",
    "tries",
    "max_tries",
    "turn",
    "root_cause",
    "facts",
    "error",
    "feedback",
    "exported",
]
CHANGE = ["key", "state", "was", "was_root_cause", "now", "root_cause", "error", "applied"]


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Run:
    """The CLI in a fresh folder, on a ledger of a, b, c where a FAILed once then locked
    REVIEW, b passed and c's submission made the gate fail (a judge error)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(ROOT))
    monkeypatch.setenv("REINS_DRIVER", "ann")
    for var in ("REINS_QUEST", "REINS_LEDGER", "REINS_MODEL", "REINS_LEASE_TOKEN"):
        monkeypatch.delenv(var, raising=False)

    def invoke(*args: str, input: str | None = None, quest: str | None = QUEST) -> Result:
        argv = (["--quest", quest] if quest else []) + list(args)
        return CliRunner().invoke(make_group(), argv, input=input, catch_exceptions=False)

    assert invoke("scan").exit_code == 0
    for key, answer in (("a", "bad"), ("a", "meh"), ("b", "good"), ("c", "explode")):
        invoke("submit", "-k", key, input=answer)
    return invoke


def doc(out: Result) -> Any:
    assert out.stdout.count("\n") == 1, out.output  # one JSON document, on one line
    return json.loads(out.stdout)


def test_scan(run: Run) -> None:
    assert list(doc(run("scan", "d", "--json"))) == ["added", "present", "total", "ledger"]


def test_next_leased_and_peeked(run: Run) -> None:
    peeked = doc(run("next", "--peek", "--json"))
    assert list(peeked) == ["key", "turn", "leased", "system", "user", "prompt_digest"]
    leased = doc(run("next", "--json"))
    assert list(leased) == [
        "key",
        "turn",
        "tries",
        "max_tries",
        "driver",
        "lease_expires",
        "token",
        "reminder",
        "system",
        "user",
        "prompt_digest",
    ]


def test_next_with_nothing_left(run: Run) -> None:
    run("next", "--json", "--driver", "bo")  # c, the only TODO item, leased to another
    out = run("next", "--json")
    assert out.exit_code == 3
    assert doc(out) == {"key": None, "remaining": 1, "leased": 1}
    peek = run("next", "--peek", "--json")
    assert peek.exit_code == 3 and doc(peek) == {"key": None}


def test_release(run: Run) -> None:
    run("next")
    assert doc(run("release", "--mine", "--json")) == {"released": ["c"]}


def test_submit(run: Run) -> None:
    out = run("submit", "-k", "c", "--json", input="bad")
    assert out.exit_code == 4
    submitted = doc(out)
    assert list(submitted) == SUBMITTED
    assert list(submitted["facts"][0]) == FACT


def test_an_error(run: Run) -> None:
    out = run("submit", "-k", "b", "--json", input="good")
    assert out.exit_code == 5
    assert list(doc(out)) == ["error", "exit_code"]


def test_an_error_that_names_the_quests(run: Run, tmp_path: Path) -> None:
    (tmp_path / "other_quest.py").write_text(
        "import dataclasses\nfrom tests.conftest import TINY\n"
        "OTHER = dataclasses.replace(TINY, name='other')\n"
    )
    out = run("--ledger", "tiny.reins.db", "status", "--json", quest="other_quest:OTHER")
    assert out.exit_code == 2
    error = doc(out)
    assert list(error) == ["error", "exit_code", "ledger", "ledger_quest", "quest"]
    assert list(error["quest"]) == list(error["ledger_quest"]) == ["name", "origin"]


def test_status(run: Run) -> None:
    status = doc(run("status", "--json"))
    assert list(status) == [
        "ledger",
        "counts",
        "total",
        "remaining",
        "leased",
        "tries",
        "rules",
        "attempts",
        "kinds",
        "reopened",
        "gates",
        "older_gate",
        "exported",
        "usage",
    ]
    assert list(status["rules"]["not-bad"]) == ["fired", "root_cause"]
    assert list(status["usage"]) == [
        "input_tokens",
        "output_tokens",
        "cost",
        "cache_read_tokens",
        "cache_write_tokens",
        "batch_cost",
        "list_cost",
    ]
    board = doc(run("status", "--todo", "--json"))
    assert [list(row) for row in board] == [["key", "state", "tries", "leased_to"]] * 3


def test_log(run: Run) -> None:
    log = doc(run("log", "a", "--json"))
    assert list(log) == ["key", "state", "tries", "round", "payload", "proposed_by", "attempts"]
    assert [list(a) for a in log["attempts"]] == [ATTEMPT, ATTEMPT]
    assert list(log["attempts"][0]["facts"][0]) == FACT


def test_rules(run: Run) -> None:
    rules = doc(run("rules", "--json"))
    keys = ["id", "level", "description", "supersedes", "needs", "check", "parameters"]
    assert [list(r) for r in rules] == [keys, keys]


def test_export(run: Run) -> None:
    assert list(doc(run("export", "--json"))) == ["exported", "out"]


def test_items_and_review(run: Run) -> None:
    page = doc(run("items", "--json", "--limit", "2"))
    assert list(page) == ["items", "next"] and page["next"] == 2
    assert [list(i) for i in page["items"]] == [ITEM, ITEM]
    review = doc(run("review", "--json"))
    assert list(review) == ["items", "next"]
    assert [list(i) for i in review["items"]] == [[*ITEM, "facts", "submission"]]


def test_resolve_and_reopen(run: Run) -> None:
    acted = [*ITEM, "action", "by", "note", "turn"]
    resolved = doc(run("resolve", "a", "--accept", "--note", "fine", "--json"))
    assert [list(r) for r in resolved] == [acted]
    reopened = doc(run("reopen", "a", "b", "--reason", "again", "--json"))
    assert [list(r) for r in reopened] == [acted, acted]


def test_rejudge(run: Run) -> None:
    dry = doc(run("rejudge", "--json", quest="tests.test_lane:LENIENT"))
    assert list(dry) == ["changes", "applied", "exported"]
    assert [list(c) for c in dry["changes"]] == [CHANGE]
    applied = doc(run("rejudge", "--apply", "--json", quest="tests.test_lane:LENIENT"))
    assert [list(c) for c in applied["changes"]] == [[*CHANGE, "new_state"]]


def test_replay(run: Run, tmp_path: Path) -> None:
    lines = '{"key": "c", "output": "bad"}\n{"key": "zz", "output": "x"}\n'
    (tmp_path / "lines.jsonl").write_text(lines)
    out = run("replay", "--from", "lines.jsonl", "--json")
    assert out.exit_code == 8
    judged, skipped, summary = map(json.loads, out.stdout.splitlines())
    assert list(judged) == [
        "line",
        "key",
        "status",
        "outcome",
        "state",
        "tries",
        "turn",
        "root_cause",
        "feedback",
    ]
    assert list(skipped) == ["line", "key", "status", "message"]
    assert list(summary) == [
        "event",
        "lines",
        "outcomes",
        "judge_errors",
        "generation_errors",
        "exported",
    ]


def test_report(run: Run) -> None:
    report = doc(run("report", "--json"))
    assert list(report) == [
        "counts",
        "total",
        "remaining",
        "passes_by_try",
        "tries_to_lock",
        "tries_to_lock_sampled",
        "rules",
        "usage",
        "cache_hit_rate",
        "saved",
    ]
    assert list(report["rules"]["not-bad"]) == ["fired", "root_cause"]
    assert list(report["usage"]) == list(doc(run("status", "--json"))["usage"])
    assert list(report["saved"]) == ["total", "cache", "batch"]
    assert list(doc(run("report", "--html", "r.html", "--json"))) == ["html"]


def test_report_retry_compare(run: Run) -> None:
    with registered(fake=FakeBackend(replies=["good"] * 10)):
        out = run("report", "--retry-compare", "facts", "-m", "fake:fake", "--json")
    compared = doc(out)
    assert list(compared) == ["model", "runs"]
    assert list(compared["runs"][0]) == [
        "policy",
        "items",
        "passes_by_try",
        "cumulative",
        "review",
        "done",
        "turns",
        "input_tokens",
        "output_tokens",
        "stopped",
        "message",
    ]


def test_gate_check(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the workers are fresh processes
    assert list(doc(run("gate", "check", "--json"))) == ["judged", "differences"]


def test_ledger_check_and_copy(run: Run) -> None:
    check = doc(run("ledger", "check", "--json"))
    assert list(check) == ["ledger", "quest", "sound", "problems", "items", "attempts"]
    assert list(check["quest"]) == ["name", "origin"]
    copy = doc(run("ledger", "copy", "tiny.reins.db", "copy.reins.db", "--json"))
    assert list(copy) == ["target", "items", "attempts", "digest"]


def test_packs_and_new(run: Run, tmp_path: Path) -> None:
    packs = doc(run("packs", "--json", quest=None))
    assert {tuple(p) for p in packs} == {("name", "description", "items", "extra", "folder")}
    made = doc(run("new", "--pack", "emails", "mine", "--json", quest=None))
    assert list(made) == ["pack", "folder", "quest"]


def test_backends(run: Run) -> None:
    rows = doc(run("backends", "--json", quest=None))
    assert {tuple(r) for r in rows} == {("name", "target", "summary", "options", "error", "prices")}


def test_hook_install_and_uninstall(run: Run) -> None:
    assert list(doc(run("hook", "install", "claude", "--json"))) == [
        "installed",
        "project",
        "files",
    ]
    assert list(doc(run("hook", "uninstall", "claude", "--json"))) == [
        "uninstalled",
        "project",
        "files",
    ]


@pytest.fixture
def served(run: Run, tmp_path: Path) -> Iterator[str]:
    """The first line ``reins serve --json`` prints, from its own process."""
    pytest.importorskip("uvicorn", reason="serve needs the [web] extra")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "reins.cli", "--quest", QUEST, "serve", "--port", "0"]
    proc = subprocess.Popen(
        [*argv, "--json"], cwd=tmp_path, env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)


def test_serve(served: str) -> None:
    assert list(json.loads(served)) == ["url", "port", "read_only", "token"]
