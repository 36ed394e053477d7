"""The example quest: seeds its samples, and its gate catches what it promises to catch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reins import ConfigError, Item, Outcome, Quest, State, Verdict
from reins.quests.emails import SAMPLES, find_addresses, quest
from reins.turn import judge as judge_turn


def item(key: str) -> Item:
    seeds = {s[0]: s[1] for s in quest.seed([])}
    return Item(key=key, state=State.TODO, tries=0, payload=seeds[key])


def judge(quest: Quest, item: Item, raw: str) -> tuple[Verdict, str]:
    """The quest's verdict; a judge error here would be a bug in the quest."""
    verdict, text = judge_turn(quest, item, raw)
    assert isinstance(verdict, Verdict), verdict
    return verdict, text


def answer(*addresses: str) -> str:
    return json.dumps({"addresses": list(addresses)})


def test_seed_yields_one_item_per_sample() -> None:
    keys = [s[0] for s in quest.seed([])]
    assert keys == sorted(p.stem for p in SAMPLES.glob("*.txt")) and len(keys) >= 5


def test_seed_refuses_a_missing_path(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="neither a file nor a folder"):
        list(quest.seed([str(tmp_path / "nope")]))


def test_every_sample_passes_or_reviews_with_its_true_addresses() -> None:
    for key, _ in quest.seed([]):
        it = item(key)
        verdict, _ = judge(quest, it, answer(*find_addresses(it.payload["text"])))
        assert verdict.outcome in (Outcome.PASS, Outcome.REVIEW), (key, verdict)


def test_a_missing_address_fails_with_the_missing_one_named() -> None:
    verdict, _ = judge(quest, item("01-meeting"), answer("priya.raman@northwind-labs.example"))
    assert verdict.outcome is Outcome.FAIL and verdict.root_cause == "address-missing"
    assert "facilities@northwind-labs.example" in verdict.facts[0].expected


def test_an_invented_address_fails_on_the_source_check() -> None:
    verdict, _ = judge(quest, item("04-no-addresses"), answer("engineer@boiler.example"))
    assert verdict.root_cause == "address-in-source"


def test_obfuscated_addresses_are_not_expected() -> None:
    verdict, _ = judge(quest, item("05-obfuscated"), answer("hotel-desk@vergen-workshop.example"))
    assert verdict.outcome is Outcome.PASS


def test_free_mail_goes_to_review() -> None:
    verdict, _ = judge(
        quest,
        item("07-support"),
        answer("marisol_ortega77@yahoo.com", "tier2-support@helpdesk.example"),
    )
    assert verdict.outcome is Outcome.REVIEW and verdict.root_cause == "free-mail"


def test_bad_syntax_and_duplicates_fail() -> None:
    assert (
        judge(quest, item("04-no-addresses"), answer("not an address"))[0].root_cause
        == "address-syntax"
    )
    twice = answer(
        "billing@larkspur.example", "billing@larkspur.example", "AP.Team@Kestrel-Freight.example"
    )
    assert judge(quest, item("03-invoice"), twice)[0].root_cause == "address-duplicate"


@pytest.mark.parametrize(
    "raw", ["", "addresses: a@b.example", '{"emails": []}', "[1, 2]", "```json\n{oops\n```"]
)
def test_an_undecodable_answer_is_a_fail_with_the_wanted_shape(raw: str) -> None:
    verdict, _ = judge(quest, item("04-no-addresses"), raw)
    assert verdict.outcome is Outcome.FAIL and verdict.root_cause == "json-shape"
    assert verdict.facts[0].where == "submission" and "addresses" in verdict.facts[0].expected


def test_a_fenced_or_bare_list_answer_is_accepted() -> None:
    fenced = (
        "```json\n"
        + answer("billing@larkspur.example", "AP.Team@Kestrel-Freight.example")
        + "\n```"
    )
    assert judge(quest, item("03-invoice"), fenced)[0].outcome is Outcome.PASS
    assert judge(quest, item("04-no-addresses"), "[]")[0].outcome is Outcome.PASS
