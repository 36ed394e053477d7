"""The example quest: seeds its samples, and its gate catches what it promises to catch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reins import ConfigError, Item, Outcome, Quest, State, Verdict
from reins.quests.emails import SAMPLES, quest
from reins.turn import judge as judge_turn
from reins.verify.mailaddr import addresses


def item(key: str) -> Item:
    seeds = {s[0]: s[1] for s in quest.seed([])}
    return Item(key=key, state=State.TODO, tries=0, payload=seeds[key])


def text(it: Item) -> str:
    assert isinstance(it.payload, dict) and isinstance(it.payload["text"], str)
    return it.payload["text"]


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
        verdict, _ = judge(quest, it, answer(*addresses(text(it))))
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


# Real mail: raw headers, a forwarded block, a news article. The true mailboxes are written
# here by hand, never computed by the code under test.
REAL_MAIL = {
    "09-raw-reply": [
        "bounce+x7Qa=hugo.brandt=ice-research.example@lists.ice-research.example",
        "hugo.brandt@ice-research.example",
        "ana.lindqvist@ice-research.example",
        "D.Volkov@ICE-Research.example",
        "runs@lists.ice-research.example",
        "storage-admins@ice-research.example",
        "ops-desk@ice-research.example",
    ],
    "10-forwarded": [
        '"Lena M."@corvid-supply.example',
        "AR@Corvid-Supply.example",
        "tomas.ferreira@northwind-labs.example",
        "sales@corvid-supply.example",
    ],
    "11-usenet": [
        "gwen.ashdown@allotment-gazette.example",
        "committee@allotment-gazette.example",
        "r.okafor@plotholders.example",
    ],
}


@pytest.mark.parametrize(("key", "mailboxes"), list(REAL_MAIL.items()))
def test_real_mail_yields_its_mailboxes_and_no_ids_routes_or_urls(
    key: str, mailboxes: list[str]
) -> None:
    assert addresses(text(item(key))) == mailboxes
    assert judge(quest, item(key), answer(*mailboxes))[0].outcome is Outcome.PASS


@pytest.mark.parametrize(
    ("key", "not_a_mailbox"),
    [
        ("09-raw-reply", "CAH7x=q9+KLm0b2@mail.ice-research.example"),  # Message-ID
        ("09-raw-reply", "87fs2k1q9z.fsf@volkov-laptop.ice-research.example"),  # In-Reply-To
        ("09-raw-reply", "20260105.1130.run41@ci.ice-research.example"),  # References, cited
        ("09-raw-reply", "20260106081203.GA4711@mail.ice-research.example"),  # Received id
        ("10-forwarded", "git@git.corvid-supply.example"),  # an scp target
        ("10-forwarded", "guest@portal.corvid-supply.example"),  # a URL's user
        ("11-usenet", "tomatoes.2026.0309@news.example.net"),  # In article <…>
        ("11-usenet", "seedswap-faq@allotment-gazette.example"),  # news: URL
    ],
)
def test_a_message_id_or_url_user_is_not_accepted_as_an_address(
    key: str, not_a_mailbox: str
) -> None:
    verdict, _ = judge(quest, item(key), answer(*REAL_MAIL[key], not_a_mailbox))
    assert verdict.outcome is Outcome.FAIL and verdict.root_cause == "address-in-source"
    assert verdict.facts[0].actual.startswith(not_a_mailbox + ": ")


@pytest.mark.parametrize(
    "near",
    [
        "storage-admins@ice-research.exampl",  # cut short
        "admins@ice-research.example",  # the end of a longer local part
        "ops-desk@ice-research",  # a domain prefix (malformed: no top-level label)
    ],
)
def test_a_prefix_or_near_miss_of_a_real_address_is_not_in_the_text(near: str) -> None:
    verdict, _ = judge(quest, item("09-raw-reply"), answer(*REAL_MAIL["09-raw-reply"], near))
    assert verdict.outcome is Outcome.FAIL
    assert verdict.root_cause in ("address-in-source", "address-syntax")
    assert near in verdict.facts[0].actual


def test_a_prefix_that_is_itself_well_formed_fails_the_source_check() -> None:
    text = "Write to bob@example.com.\n"
    verdict, _ = judge(quest, _item(text), answer("bob@example.co"))
    assert (verdict.outcome, verdict.root_cause) == (Outcome.FAIL, "address-in-source")
    assert "bob@example.com" in verdict.facts[0].actual


def test_the_domain_may_change_case_but_the_local_part_may_not() -> None:
    invoice = item("03-invoice")
    lower_domain = answer("billing@LARKSPUR.example", "AP.Team@kestrel-freight.example")
    assert judge(quest, invoice, lower_domain)[0].outcome is Outcome.PASS
    lower_local = answer("billing@larkspur.example", "ap.team@Kestrel-Freight.example")
    verdict, _ = judge(quest, invoice, lower_local)
    assert (verdict.outcome, verdict.root_cause) == (Outcome.FAIL, "address-in-source")
    assert "case" in verdict.facts[0].actual


def test_a_quoted_local_part_is_an_address() -> None:
    forwarded = item("10-forwarded")
    verdict, _ = judge(quest, forwarded, answer(*REAL_MAIL["10-forwarded"]))
    assert verdict.outcome is Outcome.PASS
    unquoted = [a.replace('"Lena M."', "Lena.M.") for a in REAL_MAIL["10-forwarded"]]
    assert judge(quest, forwarded, answer(*unquoted))[0].root_cause == "address-syntax"


def test_sentence_and_markup_punctuation_is_not_part_of_an_address() -> None:
    text = "Mail 'ops@corvid.example' or **desk@corvid.example**. Not help@corvid.example.\n"
    wanted = ["ops@corvid.example", "desk@corvid.example", "help@corvid.example"]
    assert addresses(text) == wanted
    assert judge(quest, _item(text), answer(*wanted))[0].outcome is Outcome.PASS
    trailing = answer("ops@corvid.example", "desk@corvid.example", "help@corvid.example.")
    assert judge(quest, _item(text), trailing)[0].root_cause == "address-syntax"


def test_the_same_mailbox_twice_is_a_duplicate_whatever_the_domain_case() -> None:
    twice = answer("billing@larkspur.example", "billing@LARKSPUR.example")
    verdict, _ = judge(quest, item("03-invoice"), twice)
    assert verdict.root_cause in ("address-duplicate", "address-missing")
    assert "address-duplicate" in {f.rule for f in verdict.facts}


def _item(text: str) -> Item:
    return Item(key="t", state=State.TODO, tries=0, payload={"file": "t.txt", "text": text})
