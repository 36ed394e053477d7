"""``reins drop KEY…`` (issue 39): a person retires items for good, to do or locked, on both
store engines. Each drop is a recorded action of kind ``human`` that locks the item DONE with
the person's note and no try counted; no driver leases it again; status, log and the export
say it was dropped; a person may still reopen it; the ledger's own check finds the lock sound."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reins.errors import Exit
from reins.testing.harness import StoreHarness
from tests.kit import Cli


@pytest.fixture
def cli(cli: Cli, store_harness: StoreHarness) -> Cli:
    """The kit's CLI on a fresh ledger of the tiny quest holding a, b and c, on each engine."""
    cli.ledger, cli.driver = store_harness.create(), "ann"
    assert cli("scan").exit_code == 0
    return cli


def test_a_dropped_item_is_done_for_good_by_a_person_and_said_so_everywhere(cli: Cli) -> None:
    assert cli("submit", "--key", "b", input="meh").exit_code == 11  # REVIEW
    out = cli("drop", "a", "b", "--note", "a bad scan's items", "--by", "bo")
    assert out.exit_code == 0, out.output
    assert out.stdout == (
        "a -> drop by bo (state DONE (dropped), round 1): a bad scan's items\n"
        "b -> drop by bo (state DONE (dropped), round 1): a bad scan's items\n"
    )
    log = json.loads(cli("log", "a", "--json").stdout)
    assert (log["state"], log["tries"], log["round"]) == ("DONE", 0, 1)  # no try counted
    last = log["attempts"][-1]
    assert (last["kind"], last["action"], last["driver"], last["note"]) == (
        "human", "drop", "bo", "a bad scan's items")  # fmt: skip
    assert cli("log", "a").stdout.startswith("a: DONE — dropped by a person, ")
    assert "drop by a person → DONE (dropped)" in cli("log", "b").stdout
    status = json.loads(cli("status", "--json").stdout)
    assert status["counts"]["DONE"] == 2 and status["dropped"] == 2
    assert "(out of tries, not passed; 2 dropped by a person)" in cli("status").stdout
    # Never worked again: the one item left is the only one a driver leases.
    assert json.loads(cli("next", "--json").stdout)["key"] == "c"
    assert cli("submit", "--key", "c", input="good").exit_code == 0
    assert cli("next").exit_code == Exit.NOTHING_LEFT
    # The export says so; the ledger's own check finds every lock sound.
    records = [json.loads(x) for x in Path("tiny-results.jsonl").read_text().splitlines()]
    dropped = [r for r in records if r["key"] == "a"]
    assert [(r["state"], r["action"], r["note"]) for r in dropped] == [
        ("DONE", "drop", "a bad scan's items")
    ]
    assert cli("ledger", "check").exit_code == 0
    # Nor judged again: a gate that would pass what it judged leaves a dropped item alone.
    lenient = json.loads(cli("rejudge", "--apply", "--json", quest="tests.kit:LENIENT").stdout)
    assert [c["key"] for c in lenient["changes"]] == []
    # A person may still take one back.
    back = json.loads(cli("reopen", "a", "--reason", "it was fine", "--json").stdout)
    assert [(r["state"], r["round"]) for r in back] == [("TODO", 2)]
    assert json.loads(cli("status", "--json").stdout)["dropped"] == 1


def test_drop_checks_every_key_first_leaves_a_dropped_item_and_refuses_a_leased_one(
    cli: Cli,
) -> None:
    out = cli("drop", "a", "nope", "--note", "typo")
    assert out.exit_code == Exit.USAGE and "nope" in out.stderr
    assert json.loads(cli("log", "a", "--json").stdout)["state"] == "TODO"  # nothing dropped
    assert json.loads(cli("drop", "a", "--note", "x", "--json").stdout)[0]["state"] == "DONE"
    again = cli("drop", "a", "--note", "twice")
    assert again.exit_code == 0 and "dropped already, left as they are: a" in again.stderr
    assert len(json.loads(cli("log", "a", "--json").stdout)["attempts"]) == 1
    # An item a driver is working on now is refused: its turn is under way.
    assert json.loads(cli("next", "--json").stdout)["key"] == "b"
    out = cli("drop", "b", "--note", "mid-turn", "--by", "bo")
    assert out.exit_code == Exit.LEASED and "its turn is under way" in out.stderr
    assert cli("drop", "--note", "nothing named").exit_code == 2
    assert "Retire items for good" in cli("--help").stdout
