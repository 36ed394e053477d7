"""One vocabulary for tries and outcomes on every surface (the README's glossary).

"answer k of N" is what was judged (k counts from 1 within the round), "f of N failures used"
is what the ledger's ``tries`` counts, and DONE says what it means (out of tries, not passed)
and is "unsolved" in summaries. Each surface is driven as a user meets it: the CLI.
"""

from __future__ import annotations

import json

import pytest

from reins.testing import FakeBackend
from tests.kit import Cli
from tests.kit.loopkit import registered


@pytest.fixture
def worked(cli: Cli) -> Cli:
    """a: FAIL then PASS (on answer 2); b: three FAILs, DONE; c: untouched."""
    assert cli("scan").exit_code == 0
    for key, answer in (("a", "bad"), ("a", "good"), ("b", "bad"), ("b", "bad"), ("b", "bad")):
        cli("submit", "-k", key, input=answer)
    return cli


def test_submit_names_the_answer_judged_and_what_is_left(cli: Cli) -> None:
    cli("scan")
    first = cli("submit", "-k", "a", input="bad")
    assert first.stdout.splitlines()[0] == "a -> FAIL on answer 1 of 3 (state TODO, 2 answers left)"
    second = cli("submit", "-k", "a", input="good")
    assert second.stdout == "a -> PASS on answer 2 of 3 (state PASS)\n"
    for _ in range(2):
        cli("submit", "-k", "b", input="bad")
    last = cli("submit", "-k", "b", input="bad")
    assert last.stdout.splitlines()[0] == (
        "b -> FAIL on answer 3 of 3 (state DONE — out of tries, not passed)"
    )


def test_next_says_which_answer_it_asks_for(cli: Cli) -> None:
    cli("scan")
    cli("submit", "-k", "a", input="bad")
    cli("submit", "-k", "a", input="bad")
    assert cli("next").stdout.startswith("# item a · answer 3 of 3 · turn 3 · leased to tester\n")
    peek = cli("next", "--peek", "--driver", "bo")
    assert peek.stdout.startswith("# item b · answer 1 of 3 · turn 1 · peek: not leased\n")


def test_status_counts_failures_used_and_says_what_done_means(worked: Cli) -> None:
    text = worked("status").stdout.splitlines()
    assert "  DONE            1   (out of tries, not passed)" in text
    assert "failures used  0: 1  1: 1  3: 1   (items by failures used of 3 allowed)" in text
    board = worked("status", "--todo").stdout.splitlines()
    assert board == [
        "[x] a  (PASS)",
        "[-] b  (DONE — out of tries, not passed)",
        "[ ] c  (answer 1 of 3 next)",
    ]


def test_log_names_each_answer_and_the_failures_used(worked: Cli) -> None:
    text = worked("log", "b").stdout
    assert text.startswith("b: DONE — out of tries, not passed, 3 of 3 failures used, 3 turn(s)")
    turns = [line for line in text.splitlines() if line.startswith("turn ")]
    assert [t.split(" · ", 3)[3] for t in turns] == [
        "FAIL on answer 1 of 3 → TODO",
        "FAIL on answer 2 of 3 → TODO",
        "FAIL on answer 3 of 3 → DONE (unsolved)",
    ]
    data = json.loads(worked("log", "b", "--json").stdout)
    assert [a["answer"] for a in data["attempts"]] == [1, 2, 3]
    assert (data["failures_used"], data["answers_allowed"], data["tries"]) == (3, 3, 3)


def test_an_error_is_no_answer(cli: Cli) -> None:
    cli("scan")
    out = cli(
        "submit",
        "-k",
        "a",
        input="explode",
    )
    assert out.exit_code == 10 and "it counts as no answer" in out.stdout
    doc = json.loads(cli("log", "a", "--json").stdout)
    assert doc["attempts"][0]["answer"] is None
    again = json.loads(cli("submit", "-k", "a", "--json", input="good").stdout)
    assert (again["answer"], again["failures_used"]) == (1, 0)  # the error was no answer


def test_report_counts_passes_and_locks_by_answer_and_done_as_unsolved(worked: Cli) -> None:
    lines = worked("report").stdout.splitlines()
    assert lines[0].startswith("TODO 1  PASS 1  REVIEW 0  DONE (unsolved) 1")
    assert "passes on answer  1: 0  2: 1  3: 0   (0 → 1 → 1 of 3)" in lines
    assert "locked on answer  2: 1  3: 1" in lines


def test_the_loop_words_its_turns_and_its_summary_alike(cli: Cli) -> None:
    cli("scan")
    replies = {"a": ["bad", "good"], "b": ["bad"] * 3, "c": ["meh"]}
    with registered(w=FakeBackend(replies)):
        out = cli("loop", "--model", "fake:w", "--no-export")
    lines = out.stderr.splitlines()
    assert "turn 2 · a · PASS on answer 2 of 3 → PASS · fake" in lines
    assert "turn 3 · b · FAIL (not-bad) → DONE (unsolved), 3 of 3 failures used · fake" in lines
    assert "turn 1 · c · REVIEW (not-meh) on answer 1 of 3 → REVIEW · fake" in lines
    assert "  locked this run: PASS 1, REVIEW 1, unsolved (DONE) 1; 0 of 3 item(s) left" in lines
    with registered(w=FakeBackend(replies)):
        cli("reopen", "b", "--reason", "again")
        events = cli("loop", "--model", "fake:w", "--no-export", "--json").stdout
    turns = [json.loads(line) for line in events.splitlines()][:-1]
    assert [(t["answer"], t["failures_used"], t["answers_allowed"]) for t in turns] == [
        (1, 1, 3),
        (2, 2, 3),
        (3, 3, 3),
    ]
