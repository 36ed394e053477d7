"""Every command's ``--json``: its keys, in the order written, are what programs read.

The shapes are typed values now (``reins.cli.shapes``); these tests pin the documents they
write, key by key and in order, as they were when they were inline dicts, so a renamed, moved
or dropped key fails here.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from reins.testing import FakeBackend
from tests.kit import TINY_REF, Cli
from tests.kit.loopkit import registered

ITEM = [
    "key",
    "state",
    "tries",
    "turns",
    "round",
    "root_cause",
    "leased_to",
    "locked_at",
    "failures_used",
    "answers_allowed",
]
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
    "answer",
    "branch",
    "commit",
    "sandbox",
    "refused",
    "refused_to",
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
    "answer",
    "answers_allowed",
    "failures_used",
    "refused",
]
CHANGE = ["key", "state", "was", "was_root_cause", "now", "root_cause", "error", "applied"]


@pytest.fixture
def cli(cli: Cli) -> Cli:
    """The kit's CLI on a ledger of a, b, c where a FAILed once then locked REVIEW, b passed
    and c's submission made the gate fail (a judge error)."""
    cli.driver = "ann"
    assert cli("scan").exit_code == 0
    for key, answer in (("a", "bad"), ("a", "meh"), ("b", "good"), ("c", "explode")):
        cli("submit", "-k", key, input=answer)
    return cli


def doc(out: Result) -> Any:
    assert out.stdout.count("\n") == 1, out.output  # one JSON document, on one line
    return json.loads(out.stdout)


def test_scan(cli: Cli) -> None:
    assert list(doc(cli("scan", "d", "--json"))) == [
        "added",
        "present",
        "total",
        "ledger",
        "source",
    ]


def test_next_leased_and_peeked(cli: Cli) -> None:
    peeked = doc(cli("next", "--peek", "--json"))
    assert list(peeked) == [
        "key",
        "turn",
        "leased",
        "system",
        "user",
        "prompt_digest",
        "answer",
        "answers_allowed",
        "failures_used",
    ]
    leased = doc(cli("next", "--json"))
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
        "answer",
        "answers_allowed",
        "failures_used",
    ]
    assert (leased["answer"], leased["answers_allowed"], leased["failures_used"]) == (1, 3, 0)
    same = ("key", "turn", "system", "user", "answer", "answers_allowed", "failures_used")
    assert {k: peeked[k] for k in same} == {k: leased[k] for k in same}  # what next will give


def test_next_with_nothing_left(cli: Cli) -> None:
    cli("next", "--json", "--driver", "bo")  # c, the only TODO item, leased to another
    out = cli("next", "--json")
    assert out.exit_code == 3
    assert doc(out) == {"key": None, "remaining": 1, "leased": 1}
    peek = cli("next", "--peek", "--json")
    assert peek.exit_code == 3 and doc(peek) == {"key": None}


def test_release(cli: Cli) -> None:
    cli("next")
    assert doc(cli("release", "--mine", "--json")) == {"released": ["c"]}


def test_submit(cli: Cli) -> None:
    out = cli("submit", "-k", "c", "--json", input="bad")
    assert out.exit_code == 4
    submitted = doc(out)
    assert list(submitted) == SUBMITTED
    assert list(submitted["facts"][0]) == FACT
    # the new names beside the old keys: the first answer judged, a failure used of three
    assert (submitted["tries"], submitted["max_tries"]) == (1, 3)
    assert (submitted["answer"], submitted["failures_used"], submitted["answers_allowed"]) == (
        1,
        1,
        3,
    )


def test_an_error(cli: Cli) -> None:
    out = cli("submit", "-k", "b", "--json", input="good")
    assert out.exit_code == 5
    assert list(doc(out)) == ["error", "exit_code"]


def test_an_error_that_names_the_quests(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "other_quest.py").write_text(
        "import dataclasses\nfrom tests.kit import TINY\n"
        "OTHER = dataclasses.replace(TINY, name='other')\n"
    )
    out = cli("--ledger", "tiny.reins.db", "status", "--json", quest="other_quest:OTHER")
    assert out.exit_code == 2
    error = doc(out)
    assert list(error) == ["error", "exit_code", "ledger", "ledger_quest", "quest"]
    assert list(error["quest"]) == list(error["ledger_quest"]) == ["name", "origin"]


def test_status(cli: Cli) -> None:
    status = doc(cli("status", "--json"))
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
        "failures_used",
        "answers_allowed",
        "sandbox",
        "dropped",
        "land_items",
    ]
    assert status["failures_used"] == status["tries"] and status["answers_allowed"] == 3
    assert (status["dropped"], status["land_items"]) == (0, {})  # no drop, no `reins land`
    assert status["sandbox"] is None  # no coding agent ran
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


def test_status_todo(cli: Cli) -> None:
    board = doc(cli("status", "--todo", "--json"))
    row = ["key", "state", "tries", "leased_to", "failures_used", "answers_allowed"]
    assert [list(r) for r in board] == [[*row, "next_answer"]] * 3
    # As the text says it: "answer 2 of 3 next" for a TODO item, nothing for a locked one.
    text = cli("status", "--todo").stdout.splitlines()
    for r, line in zip(board, text, strict=True):
        upcoming = r["next_answer"]
        assert (upcoming is None) == (r["state"] != "TODO"), r
        if upcoming is not None:
            assert f"answer {upcoming} of {r['answers_allowed']} next" in line, (r, line)


def test_log(cli: Cli) -> None:
    log = doc(cli("log", "a", "--json"))
    assert list(log) == [
        "key",
        "state",
        "tries",
        "round",
        "payload",
        "proposed_by",
        "attempts",
        "failures_used",
        "answers_allowed",
    ]
    assert [list(a) for a in log["attempts"]] == [ATTEMPT, ATTEMPT]
    # a FAIL on answer 1, then a REVIEW on answer 2
    assert [a["answer"] for a in log["attempts"]] == [1, 2]
    assert list(log["attempts"][0]["facts"][0]) == FACT


def test_rules(cli: Cli) -> None:
    rules = doc(cli("rules", "--json"))
    keys = ["id", "level", "description", "supersedes", "needs", "check", "parameters"]
    keys += ["raised_by", "coaching"]
    assert [list(r) for r in rules] == [keys, keys, keys]
    assert [(r["id"], r["raised_by"]) for r in rules][-1] == ("reins:submission", "reins")


def test_export(cli: Cli) -> None:
    assert list(doc(cli("export", "--json"))) == ["exported", "out", "refused"]


def test_items_and_review(cli: Cli) -> None:
    page = doc(cli("items", "--json", "--limit", "2"))
    assert list(page) == ["items", "next"] and page["next"] == 2
    assert [list(i) for i in page["items"]] == [ITEM, ITEM]
    review = doc(cli("review", "--json"))
    assert list(review) == ["items", "next"]
    assert [list(i) for i in review["items"]] == [
        [*ITEM, "facts", "submission", "text", "text_rendered"]
    ]


def test_resolve_and_reopen(cli: Cli) -> None:
    acted = [*ITEM, "action", "by", "note", "turn"]
    resolved = doc(cli("resolve", "a", "--accept", "--note", "fine", "--json"))
    assert [list(r) for r in resolved] == [acted]
    reopened = doc(cli("reopen", "a", "b", "--reason", "again", "--json"))
    assert [list(r) for r in reopened] == [acted, acted]


def test_rejudge(cli: Cli) -> None:
    dry = doc(cli("rejudge", "--json", quest="tests.kit:LENIENT"))
    assert list(dry) == ["changes", "applied", "exported", "refused"]
    assert [list(c) for c in dry["changes"]] == [CHANGE]
    applied = doc(cli("rejudge", "--apply", "--json", quest="tests.kit:LENIENT"))
    assert [list(c) for c in applied["changes"]] == [[*CHANGE, "new_state"]]


def test_replay(cli: Cli, tmp_path: Path) -> None:
    lines = '{"key": "c", "output": "bad"}\n{"key": "zz", "output": "x"}\n'
    (tmp_path / "lines.jsonl").write_text(lines)
    out = cli("replay", "--from", "lines.jsonl", "--json")
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
        "answer",
        "failures_used",
        "answers_allowed",
    ]
    assert list(skipped) == ["line", "key", "status", "message"]
    assert list(summary) == [
        "event",
        "lines",
        "outcomes",
        "judge_errors",
        "generation_errors",
        "exported",
        "refused",
    ]


def test_report(cli: Cli) -> None:
    report = doc(cli("report", "--json"))
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
        "land_items",
        "quest_figures",
    ]
    assert report["quest_figures"] == {}  # the tiny quest declares no figures of its own
    assert list(report["rules"]["not-bad"]) == ["fired", "root_cause"]
    assert list(report["usage"]) == list(doc(cli("status", "--json"))["usage"])
    assert list(report["saved"]) == ["total", "cache", "batch"]
    assert list(doc(cli("report", "--html", "r.html", "--json"))) == ["html"]


def test_report_retry_compare(cli: Cli) -> None:
    with registered(fake=FakeBackend(replies=["good"] * 10)):
        out = cli("report", "--retry-compare", "facts", "-m", "fake:fake", "--json")
    compared = doc(out)
    assert list(compared) == ["model", "runs", "recommendation"]
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
        "solved",
    ]


@pytest.mark.slow  # judged again in fresh processes
def test_gate_check(cli: Cli) -> None:
    assert list(doc(cli("gate", "check", "--json"))) == ["judged", "differences"]


def test_ledger_check_and_copy(cli: Cli) -> None:
    check = doc(cli("ledger", "check", "--json"))
    assert list(check) == ["ledger", "quest", "sound", "problems", "items", "attempts"]
    assert list(check["quest"]) == ["name", "origin"]
    copy = doc(cli("ledger", "copy", "tiny.reins.db", "copy.reins.db", "--json"))
    assert list(copy) == ["target", "items", "attempts", "digest"]


def test_packs_and_new(cli: Cli, tmp_path: Path) -> None:
    packs = doc(cli("packs", "--json", quest=None))
    keys = ("name", "description", "items", "extra", "folder", "missing", "install")
    assert {tuple(p) for p in packs} == {keys}
    made = doc(cli("new", "--pack", "emails", "mine", "--json", quest=None))
    assert list(made) == ["pack", "folder", "quest"]


def test_backends(cli: Cli) -> None:
    rows = doc(cli("backends", "--json", quest=None))
    keys = ("name", "target", "summary", "options", "error", "prices", "extra", "missing")
    assert {tuple(r) for r in rows} == {(*keys, "install")}


def test_hook_install_and_uninstall(cli: Cli) -> None:
    assert list(doc(cli("hook", "install", "claude", "--json"))) == [
        "installed",
        "project",
        "files",
    ]
    assert list(doc(cli("hook", "uninstall", "claude", "--json"))) == [
        "uninstalled",
        "project",
        "files",
    ]


USAGE_ERRORS = {
    "no quest given": ("next", "--json"),
    "an unknown option": ("scan", "--json", "--bogus"),
    "an option the group does not know": ("--bogus", "status", "--json"),
    "a missing option": ("submit", "--json"),
    "an unknown command": ("nxt", "--json"),
    "a bad value": ("next", "--json", "--lease", "0"),
    "a file that is not there": ("submit", "-k", "a", "--in", "missing.txt", "--json"),
    "a bad value of a subcommand": ("gate", "check", "--limit", "0", "--json"),
}


@pytest.mark.parametrize("name", list(USAGE_ERRORS))
def test_under_json_every_error_is_json_with_the_same_exit_code(cli: Cli, name: str) -> None:
    """click's own errors too, even those raised before ``--json`` is parsed."""
    args, quest = USAGE_ERRORS[name], None if name == "no quest given" else TINY_REF
    text = cli(*(a for a in args if a != "--json"), quest=quest)
    out = cli(*args, quest=quest)
    assert out.exit_code == text.exit_code == 2, out.output
    error = doc(out)
    assert list(error) == ["error", "exit_code"] and error["exit_code"] == 2
    assert error["error"] and "Usage:" not in out.output and out.stderr == ""


def test_a_bad_reins_toml_under_json_is_json(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "reins.toml").write_text("[reins]\nbogus = 1\n")
    out = cli("status", "--json")
    assert out.exit_code == 2
    assert "bogus" in doc(out)["error"]


@pytest.fixture
def served(cli: Cli, tmp_path: Path) -> Iterator[str]:
    """The first line ``reins serve --json`` prints, from its own process."""
    pytest.importorskip("uvicorn", reason="serve needs the [web] extra")
    argv = [sys.executable, "-m", "reins.cli", "--quest", TINY_REF, "serve", "--port", "0"]
    proc = subprocess.Popen([*argv, "--json"], cwd=tmp_path, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)


@pytest.mark.slow  # `reins serve` in its own process
def test_serve(served: str) -> None:
    doc = json.loads(served)
    assert list(doc) == ["url", "port", "read_only", "token"]
    # On loopback too: the link a person opens carries the token every action needs.
    assert doc["token"] and doc["url"].endswith(f"/?token={doc['token']}")


@pytest.mark.slow  # `reins serve` in its own process
def test_serve_knows_the_reviewers_reins_toml_names(cli: Cli, tmp_path: Path) -> None:
    """reins.toml's ``reviewers`` gives each person a link, as ``--reviewer`` does."""
    pytest.importorskip("uvicorn", reason="serve needs the [web] extra")
    (tmp_path / "reins.toml").write_text('[reins]\nreviewers = ["ann", "bob"]\n')
    argv = [sys.executable, "-m", "reins.cli", "--quest", TINY_REF, "serve", "--port", "0"]
    proc = subprocess.Popen([*argv, "--json"], cwd=tmp_path, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        served = json.loads(proc.stdout.readline())
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    assert sorted(served["reviewers"]) == ["ann", "bob"] and served["token"] is None, served
    (tmp_path / "reins.toml").write_text('[reins]\nreviewers = "ann"\n')
    out = cli("status", "--json")
    assert out.exit_code == 2 and "reviewers must be a list of names" in doc(out)["error"]
