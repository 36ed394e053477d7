"""The human lane and leases through the CLI, on both store engines.

A person reviews, resolves, reopens and re-judges; each action is a recorded turn of kind
``human`` that moves a locked item as turn.md's human table says, and is exported again.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from reins.gate import Context, Fact, Level, rule
from reins.testing import FakeBackend
from reins.testing.harness import StoreHarness
from tests.kit import TINY, Cli, not_bad
from tests.kit.loopkit import registered


@rule("not-meh", Level.FAIL, "the answer is not 'meh'")
def no_meh(ctx: Context) -> Fact | None:
    return (
        Fact(where="answer", expected="good", actual="meh")
        if "meh" in str(ctx.submission)
        else None
    )


# ... and after it changed the other way: "meh" is wrong.
STRICT = dataclasses.replace(TINY, rules=[not_bad, no_meh])


@pytest.fixture
def cli(cli: Cli, store_harness: StoreHarness) -> Cli:
    """The kit's CLI on a fresh ledger of the tiny quest holding a, b and c, on each engine."""
    cli.ledger, cli.driver = store_harness.create(), "ann"
    assert cli("scan").exit_code == 0
    return cli


def records(key: str) -> list[dict[str, object]]:
    lines = Path("tiny-results.jsonl").read_text().splitlines()
    return [r for r in map(json.loads, lines) if r["key"] == key]


def test_review_lists_doubt_and_resolve_settles_it_by_a_person(cli: Cli) -> None:
    assert cli("submit", "--key", "a", input="meh").exit_code == 11  # locked REVIEW
    listed = json.loads(cli("review", "--json").stdout)
    assert [i["key"] for i in listed["items"]] == ["a"]
    assert listed["items"][0]["facts"][0]["rule"] == "not-meh"
    out = cli("resolve", "a", "--accept", "--note", "fine in context", "--by", "bo")
    assert out.exit_code == 0, out.output
    assert out.stdout == "a -> accept by bo (state PASS, round 1): fine in context\n"
    log = json.loads(cli("log", "a", "--json").stdout)
    last = log["attempts"][-1]
    assert (last["kind"], last["driver"], last["action"], last["note"]) == (
        "human",
        "bo",
        "accept",
        "fine in context",
    )
    assert (log["state"], log["tries"]) == ("PASS", 0)
    # The REVIEW record was published when it locked; the decision supersedes it.
    assert [(r["state"], r["action"], r["turns"]) for r in records("a")] == [
        ("REVIEW", None, 1),
        ("PASS", "accept", 2),
    ]
    empty = cli("review")
    assert empty.stdout == "" and empty.stderr == "nothing to review\n"


def test_review_shows_the_item_s_text_and_the_submission_beside_the_facts(cli: Cli) -> None:
    """A person decides from what the item asked and what was answered, not the facts alone."""
    assert cli("submit", "--key", "a", input="meh, as I see it").exit_code == 11
    assert cli("submit", "--key", "b", input="meh " + "x" * 700).exit_code == 11
    out = cli("review")
    assert out.exit_code == 0, out.output
    first = out.stdout.split("\n\n")[0].splitlines()
    assert first[0].startswith("[?] a  REVIEW on answer 1 of 3 · root cause not-meh · by ann at ")
    assert first[1:] == [
        "    the item:",
        "      Say 'good' for a.",
        "    submission:",
        "      meh, as I see it",
        "    facts:",
        "      - not-meh: answer  expected 'good', actual 'meh, as I see it'",
    ]
    assert "(104 more characters)" in out.stdout  # b's long submission is cut, unless --full
    assert "x" * 700 in cli("review", "--full").stdout
    listed = json.loads(cli("review", "--json").stdout)["items"][0]
    assert (listed["text"], listed["text_rendered"], listed["submission"]) == (
        "Say 'good' for a.",
        True,
        "meh, as I see it",
    )
    found = cli("review", "--search", "SEE")
    assert found.stdout.startswith("[?] a ") and "[?] b" not in found.stdout


def test_review_names_who_claimed_an_item(cli: Cli, store_harness: StoreHarness) -> None:
    assert cli("submit", "--key", "a", input="meh").exit_code == 11
    assert cli.ledger is not None
    store = store_harness.open(cli.ledger)
    try:
        store.reserve("a", "rita", ttl=600)
    finally:
        store.close()
    assert " · claimed by rita\n" in cli("review").stdout.split("\n    the item")[0] + "\n"
    refused = cli("resolve", "a", "--accept", "--note", "mine now", "--by", "sam")
    assert refused.exit_code != 0 and "claimed by 'rita'" in refused.stderr


def test_only_a_review_item_is_resolved_and_a_decision_is_required(cli: Cli) -> None:
    assert cli("submit", "--key", "a", input="good").exit_code == 0
    out = cli("resolve", "a", "--reject", "--note", "no")
    assert out.exit_code == 5 and "REVIEW, not PASS" in out.stderr
    assert cli("resolve", "a", "--note", "which?").exit_code == 2
    assert cli("resolve", "b", "--accept", "--note", "x").exit_code == 5  # TODO: nothing to do


def test_reopen_starts_a_new_round_with_a_fresh_budget_and_exports_again(cli: Cli) -> None:
    for _ in range(3):
        cli("submit", "--key", "b", input="bad")
    assert json.loads(cli("log", "b", "--json").stdout)["state"] == "DONE"
    out = cli("reopen", "b", "--reason", "the gate was wrong", "--json")
    assert out.exit_code == 0, out.output
    (moved,) = json.loads(out.stdout)
    assert (moved["state"], moved["tries"], moved["round"], moved["action"]) == (
        "TODO",
        0,
        2,
        "reopen",
    )
    status = json.loads(cli("status", "--json").stdout)
    assert status["reopened"] == 1 and status["kinds"]["human"] == 1
    nxt = json.loads(cli("next", "--json").stdout)
    assert nxt["key"] == "a"  # b went back to the pool behind a
    assert cli("submit", "--key", "a", input="good").exit_code == 0
    assert json.loads(cli("next", "--json").stdout)["key"] == "b"
    assert cli("submit", "--key", "b", input="good").exit_code == 0
    log = json.loads(cli("log", "b", "--json").stdout)
    assert len(log["attempts"]) == 5 and log["round"] == 2  # the old round is kept
    assert [(r["state"], r["round"]) for r in records("b")] == [
        ("DONE", 1),
        ("TODO", 2),  # the reopen withdrew the DONE record
        ("PASS", 2),
    ]


def test_a_reopen_withdraws_the_lock_from_the_results_file_at_once(cli: Cli) -> None:
    """A reader of the results file believes each key's last record: never a withdrawn lock."""
    assert cli("submit", "--key", "a", input="good").exit_code == 0
    assert [r["state"] for r in records("a")] == ["PASS"]
    out = cli("reopen", "a", "--reason", "the gate was wrong", "--by", "bo")
    assert out.exit_code == 0, out.output
    assert "exported 1 record(s) to tiny-results.jsonl" in out.stderr
    withdrawn = records("a")[-1]
    assert {k: withdrawn[k] for k in ("state", "round", "action", "note", "driver")} == {
        "state": "TODO",
        "round": 2,
        "action": "reopen",
        "note": "the gate was wrong",
        "driver": "bo",
    }
    assert withdrawn["locked_at"] is None and withdrawn["outcome"] is None
    assert cli("submit", "--key", "a", input="bad").exit_code == 4  # nothing new to write
    assert json.loads(cli("export", "--json").stdout)["exported"] == 0
    assert cli("submit", "--key", "a", input="good").exit_code == 0
    assert [(r["state"], r["round"]) for r in records("a")] == [
        ("PASS", 1),
        ("TODO", 2),
        ("PASS", 2),
    ]


def test_a_rejudge_that_fails_withdraws_the_lock_with_the_new_verdict(cli: Cli) -> None:
    assert cli("submit", "--key", "a", input="meh").exit_code == 11  # REVIEW, exported
    out = cli("rejudge", "--apply", "--json", quest="tests.test_lane:STRICT")
    assert json.loads(out.stdout)["exported"] == 1
    withdrawn = records("a")[-1]
    assert (withdrawn["state"], withdrawn["round"], withdrawn["action"]) == ("TODO", 2, "rejudge")
    assert (withdrawn["outcome"], withdrawn["root_cause"]) == ("FAIL", "not-meh")
    assert [r["state"] for r in records("a")] == ["REVIEW", "TODO"]


def test_export_and_the_loop_write_a_withdrawal_auto_export_left_unwritten(
    cli: Cli,
) -> None:
    assert cli("submit", "--key", "b", input="good").exit_code == 0
    assert cli("submit", "--key", "c", input="good").exit_code == 0
    Path("reins.toml").write_text("[reins]\nauto_export = false\n")
    assert cli("reopen", "b", "c", "--reason", "second look").exit_code == 0
    Path("reins.toml").unlink()
    assert [r["state"] for r in records("b")] == ["PASS"]  # not written yet
    exported = json.loads(cli("export", "--json").stdout)
    assert exported == {"exported": 2, "out": "tiny-results.jsonl", "refused": []}
    assert [r["state"] for r in records("b")] == ["PASS", "TODO"]
    assert [r["state"] for r in records("c")] == ["PASS", "TODO"]
    # Reopened again while auto-export is off; the loop, which locks nothing, writes it.
    assert cli("submit", "--key", "c", input="good").exit_code == 0
    Path("reins.toml").write_text("[reins]\nauto_export = false\n")
    assert cli("reopen", "c", "--reason", "third look").exit_code == 0
    Path("reins.toml").unlink()
    with registered(w=FakeBackend({"a": ["bad"]})):
        out = cli("loop", "--model", "fake:w", "--max-turns", "1", "--json")
    assert json.loads(out.stdout.splitlines()[-1])["exported"] == 1, out.output
    assert [(r["state"], r["round"]) for r in records("c")] == [
        ("PASS", 1),
        ("TODO", 2),
        ("PASS", 2),
        ("TODO", 3),
    ]


def test_reopen_selects_locked_items_by_state(cli: Cli) -> None:
    cli("submit", "--key", "a", input="meh")
    cli("submit", "--key", "b", input="skip")
    cli("submit", "--key", "c", input="good")
    out = cli("reopen", "--state", "REVIEW", "--reason", "second look", "--json")
    assert [r["key"] for r in json.loads(out.stdout)] == ["a"]
    assert cli("reopen", "--reason", "nothing named").exit_code == 2


def test_rejudge_shows_what_the_current_gate_changes_and_applies_it(cli: Cli) -> None:
    cli("submit", "--key", "a", input="meh")  # REVIEW under the old gate
    cli("submit", "--key", "c", input="good")  # PASS either way
    lenient = "tests.kit:LENIENT"
    status = json.loads(cli("status", "--json", quest=lenient).stdout)
    assert status["older_gate"] == 2  # both were judged under the old gate
    dry = json.loads(cli("rejudge", "--json", quest=lenient).stdout)
    assert [(c["key"], c["was"], c["now"], c["applied"]) for c in dry["changes"]] == [
        ("a", "REVIEW", "PASS", False)
    ]
    assert json.loads(cli("log", "a", "--json").stdout)["state"] == "REVIEW"  # a dry run
    applied = json.loads(cli("rejudge", "--apply", "--json", quest=lenient).stdout)
    assert applied["applied"] == 1 and applied["changes"][0]["new_state"] == "PASS"
    last = json.loads(cli("log", "a", "--json").stdout)["attempts"][-1]
    assert (last["kind"], last["action"], last["outcome"]) == ("human", "rejudge", "PASS")
    assert json.loads(cli("rejudge", "--json", quest=lenient).stdout)["changes"] == []
    status = json.loads(cli("status", "--json", quest=lenient).stdout)
    assert status["older_gate"] == 0  # c keeps the old gate's digest, which the gate agrees with


def test_a_rejudge_that_changes_nothing_settles_the_older_gate_in_status(cli: Cli) -> None:
    """Once a whole re-judge finds the current gate agrees, `status` stops sending a person to
    `reins rejudge`; a partial one, or one that leaves a change unapplied, settles nothing, and
    a TODO item judged under the old gate is still counted (its next answer meets the new one)."""
    cli("submit", "--key", "a", input="good")  # PASS under both gates
    cli("submit", "--key", "b", input="meh")  # REVIEW under the old gate, PASS under LENIENT
    lenient = "tests.kit:LENIENT"

    def older() -> int:
        return int(json.loads(cli("status", "--json", quest=lenient).stdout)["older_gate"])

    assert older() == 2
    assert "older gate" in cli("status", quest=lenient).stdout
    cli("rejudge", "--state", "PASS", quest=lenient)  # a part of the locked items only
    cli("rejudge", quest=lenient)  # b would change: nothing settled
    assert older() == 2
    assert cli("rejudge", "--apply", quest=lenient).exit_code == 0
    assert older() == 0
    assert "older gate" not in cli("status", quest=lenient).stdout
    cli("submit", "--key", "c", input="bad")  # a FAIL, TODO, under the old gate
    out = cli("rejudge", quest=lenient)
    assert out.stdout == "no verdict would change under the current gate\n"
    assert older() == 1  # c: the rejudge did not judge it


def test_items_are_listed_by_state_and_rule_a_page_at_a_time(cli: Cli) -> None:
    cli("submit", "--key", "a", input="bad")
    cli("submit", "--key", "b", input="meh")
    first = json.loads(cli("items", "--limit", "2", "--json").stdout)
    assert [i["key"] for i in first["items"]] == ["a", "b"] and first["next"] is not None
    rest = json.loads(cli("items", "--after", str(first["next"]), "--json").stdout)
    assert [i["key"] for i in rest["items"]] == ["c"] and rest["next"] is None
    by_rule = json.loads(cli("items", "--rule", "not-bad", "--json").stdout)
    assert [i["key"] for i in by_rule["items"]] == ["a"]
    by_state = json.loads(cli("items", "--state", "REVIEW", "--json").stdout)
    assert [i["key"] for i in by_state["items"]] == ["b"]


def test_a_stale_lease_token_is_refused_loudly(cli: Cli) -> None:
    first = json.loads(cli("next", "--json").stdout)
    second = json.loads(cli("next", "--json").stdout)  # another agent, same driver name
    assert first["key"] == second["key"] and first["token"] != second["token"]
    out = cli("submit", "--key", "a", "--token", first["token"], input="good")
    assert out.exit_code == 6 and "stale" in out.stderr and "REINS_DRIVER" in out.stderr
    assert json.loads(cli("log", "a", "--json").stdout)["attempts"] == []
    ok = cli("submit", "--key", "a", "--token", second["token"], input="good")
    assert ok.exit_code == 0


def test_peek_shows_the_prompt_without_leasing_and_release_gives_leases_back(
    cli: Cli,
) -> None:
    peek = json.loads(cli("next", "--peek", "--json").stdout)
    assert json.loads(cli("status", "--json").stdout)["leased"] == 0
    taken = json.loads(cli("next", "--json").stdout)
    assert (peek["key"], peek["user"]) == (taken["key"], taken["user"])
    other = cli("release", "a", "--driver", "bo")
    assert other.exit_code == 6 and "leased to 'ann'" in other.stderr
    assert json.loads(cli("release", "a", "--json").stdout) == {"released": ["a"]}
    cli("next")
    assert json.loads(cli("release", "--mine", "--json").stdout) == {"released": ["a"]}
    assert cli("release").exit_code == 2


def test_accept_and_reject_together_is_a_usage_error_and_records_nothing(cli: Cli) -> None:
    """Two decisions at once is no decision: click's shared flag kept the last one (issue 40)."""
    assert cli("submit", "--key", "a", input="meh").exit_code == 11  # locked REVIEW
    for flags in (("--accept", "--reject"), ("--reject", "--accept")):
        out = cli("resolve", "a", *flags, "--note", "both?")
        assert out.exit_code == 2, out.output
        assert "--accept or --reject, not both" in out.stderr
    log = json.loads(cli("log", "a", "--json").stdout)
    assert log["state"] == "REVIEW"
    assert [a["kind"] for a in log["attempts"]] == ["judged"]  # no human turn was recorded
