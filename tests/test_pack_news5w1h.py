"""The news5w1h pack: it loads, its items are dated news texts, and its gate judges 5W1H answers
with anchored spans, dates not after the article, and root causes from its defeat graph."""

from __future__ import annotations

import copy
import json
import shutil
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from reins import Item, Outcome, Quest, State, Verdict
from reins.errors import DocumentError
from reins.gate.graph import Graph
from reins.packs import folder, load_pack
from reins.quests.find import load_quest
from reins.turn import judge as judge_turn
from reins.values import JSON

PACK = folder("news5w1h")
FIELD_RULES = (
    "who-anchored",
    "who-whole",
    "what-anchored",
    "when-anchored",
    "when-consistent",
    "where-anchored",
    "why-anchored",
    "how-anchored",
)

# A correct answer for every item, written by hand from the texts.
GOOD: dict[str, dict[str, Any]] = {
    "council-bike-lanes": {
        "who": ["The Harwick town council", "Maren Ostby"],
        "what": "voted 7 to 2 on Tuesday to build protected bike lanes along Mill Road",
        "when": {"text": "on Tuesday", "date": "2026-03-10"},
        "where": "Mill Road",
        "why": "after three cyclists were injured there last year",
        "how": "separated from traffic by concrete kerbs",
    },
    "probe-ice-moon": {
        "who": ["Scientists on the Tessaly mission", "Dr. Ayodele Bankole"],
        "what": "the probe had detected salt deposits on the surface of Saturn's moon Enceladus",
        "when": {"text": "on 18 February", "date": "2026-02-18"},
        "where": "PASADENA",
        "why": None,
        "how": "by the probe's infrared spectrometer during a close flyby",
    },
    "marathon-record": {
        "who": ["Faith Kiptoo"],
        "what": "broke the women's course record at the Lisbon Marathon",
        "when": {"text": "on Sunday", "date": "2026-04-12"},
        "where": "LISBON",
        "why": "cool weather and a flat course had helped her",
        "how": "pulled away from the leading group at the 30-kilometre mark",
    },
    "bakery-chain-merger": {
        "who": ["Northcrust Bakeries", "Penrose & Daughters", "Imogen Hale"],
        "what": "they will merge to form the largest independent bakery group",
        "when": {"text": "on Wednesday", "date": "2026-01-28"},
        "where": "MANCHESTER",
        "why": "share delivery vans and cut the cost of flour by buying together",
        "how": None,
    },
    "election-recount": {
        "who": ["Lubomir Vanek", "Klara Dvorakova"],
        "what": "Lubomir Vanek won the Ostrava-South seat by 41 votes",
        "when": {"text": "on Thursday", "date": "2026-05-07"},
        "where": "in the city sports hall",
        "why": "after the runner-up, Klara Dvorakova, challenged 300 postal ballots",
        "how": "counted every ballot by hand",
    },
    "library-reopens": {
        "who": ["The Greystone public library", "Tomasz Wrona"],
        "what": "reopened on Monday",
        "when": {"text": "on Monday", "date": "2026-06-01"},
        "where": "GREYSTONE",
        "why": None,
        "how": "covered by the town's insurance",
    },
    "drought-wheat": {
        "who": ["The Plains Grain Association", "Dale Whitcombe"],
        "what": "lowered its wheat harvest forecast by 14 percent",
        "when": {"text": "on Thursday", "date": "2026-07-16"},
        "where": "KANSAS CITY",
        "why": "because of a drought that has lasted since April",
        "how": None,
    },
    "chess-upset": {
        "who": ["Nino Beridze", "Arkady Sorokin"],
        "what": "defeated reigning champion Arkady Sorokin in the third round of the Tbilisi Open",
        "when": {"text": "on Saturday", "date": "2026-08-22"},
        "where": "TBILISI",
        "why": "Sorokin overlooked a knight sacrifice on move 31",
        "how": "with the black pieces",
    },
    "vaccine-trial": {
        "who": ["Researchers at the Lakeshore Institute", "Dr. Grace Namutebi"],
        "what": "a new malaria vaccine protected 78 percent of children in a two-year trial",
        "when": {"text": "on Tuesday", "date": "2026-09-08"},
        "where": "three districts of Uganda",
        "why": None,
        "how": "uses a protein from the parasite's liver stage to train the immune system",
    },
    "bridge-closure": {
        "who": ["Siobhan Daly"],
        "what": "The Old Quay bridge was closed to traffic",
        "when": {"text": "on Friday", "date": "2026-10-02"},
        "where": "CORK",
        "why": "engineers found cracks in two of its steel supports during a routine inspection",
        "how": None,
    },
    "minimum-wage": {
        "who": ["Parliament", "Roberta Camilleri"],
        "what": "voted on Wednesday to raise the national minimum wage by 6 percent from January",
        "when": {"text": "on Wednesday", "date": "2026-11-18"},
        "where": "VALLETTA",
        "why": "to help workers cope with higher rents",
        "how": "phased in through two steps of 3 percent",
    },
    "solar-school": {
        "who": ["Pupils at St. Brigid's primary school", "Aoife Brennan", "Declan Moore"],
        "what": "switched on 120 solar panels on the school roof",
        "when": {"text": "on Tuesday", "date": "2026-12-01"},
        "where": "BALLYMORE",
        "why": "cover about half of the school's electricity",
        "how": "by selling calendars and running a sponsored walk",
    },
    "telescope-comet": {
        "who": ["Priya Natarajan"],
        "what": "discovered a new comet",
        "when": {"text": "on 27 March", "date": "2026-03-27"},
        "where": "in her back garden",
        "why": None,
        "how": "using a 30-centimetre telescope",
    },
}


@pytest.fixture(scope="module")
def quest() -> Quest:
    return load_pack("news5w1h")


@pytest.fixture(scope="module")
def items(quest: Quest) -> dict[str, Item]:
    return {
        key: Item(key=key, state=State.TODO, tries=0, payload=payload)
        for key, payload in quest.seed([])
    }


def judge(quest: Quest, item: Item, answer: object) -> Verdict:
    raw = answer if isinstance(answer, str) else json.dumps(answer)
    verdict, _ = judge_turn(quest, item, raw)
    assert isinstance(verdict, Verdict), verdict  # a judge error would be a bug in the pack
    return verdict


def good(key: str, **change: object) -> dict[str, Any]:
    answer = copy.deepcopy(GOOD[key])
    answer.update(change)
    return answer


def test_the_pack_loads_its_rules_edges_and_examples(quest: Quest) -> None:
    assert quest.name == "news5w1h"
    catalog = {e.id: e for e in quest.judge.catalog()}
    assert list(catalog) == ["shape", *FIELD_RULES[:4], "article-dated", *FIELD_RULES[4:]]
    assert set(catalog["shape"].supersedes) == set(FIELD_RULES)
    assert catalog["who-anchored"].supersedes == ("who-whole",)
    assert catalog["when-anchored"].supersedes == ("when-consistent",)
    assert catalog["article-dated"].supersedes == ("when-consistent",)
    assert catalog["article-dated"].level == "REVIEW"
    assert all(catalog[r].level == "FAIL" for r in ("shape", *FIELD_RULES))
    assert len(quest.examples) >= 2  # each one passed this gate when the pack loaded


def fields(it: Item) -> dict[str, str]:
    """An article's payload: every field of the pack's items is text."""
    assert isinstance(it.payload, dict)
    texts = {k: v for k, v in it.payload.items() if isinstance(v, str)}
    assert len(texts) == len(it.payload), it.payload
    return texts


def test_the_items_are_a_dozen_dated_news_texts_of_several_kinds(items: dict[str, Item]) -> None:
    assert len(items) >= 12
    topics = {fields(it)["topic"] for it in items.values()}
    assert {"politics", "science", "sport", "business", "local"} <= topics
    texts = [fields(it)["text"] for it in items.values()]
    assert len(set(texts)) == len(texts)
    for it in items.values():
        date.fromisoformat(fields(it)["date"])
        assert 40 <= len(fields(it)["text"].split()) <= 200, it.key
        assert fields(it)["headline"]


def test_the_prompt_shows_the_article_and_its_date(quest: Quest, items: dict[str, Item]) -> None:
    it = items["probe-ice-moon"]
    prompt = quest.render(it)
    assert "2026-02-20" in prompt and fields(it)["text"] in prompt


@pytest.mark.parametrize("key", sorted(GOOD))
def test_a_correct_answer_passes_on_every_item(
    quest: Quest, items: dict[str, Item], key: str
) -> None:
    verdict = judge(quest, items[key], GOOD[key])
    assert verdict.outcome is Outcome.PASS, verdict.feedback


@pytest.mark.parametrize(
    ("key", "who", "wrong"),
    [
        ("election-recount", ["Lubomir Vanek", "Klara Dvorak"], "Klara Dvorak"),  # truncated
        ("marathon-record", ["Faith Kiptu"], "Faith Kiptu"),  # altered
        ("chess-upset", ["Nino Beridze", "Garry Kasparov"], "Garry Kasparov"),  # invented
        ("telescope-comet", ["Priya Natarajan."], "Priya Natarajan."),  # a stray full stop
    ],
)
def test_a_name_not_in_the_article_fails_who_anchored(
    quest: Quest, items: dict[str, Item], key: str, who: list[str], wrong: str
) -> None:
    verdict = judge(quest, items[key], good(key, who=who))
    assert (verdict.outcome, verdict.root_cause) == (Outcome.FAIL, "who-anchored")
    assert [f.actual for f in verdict.facts] == [wrong]
    assert "Copy each name exactly" in quest.coaching["who-anchored"]


def test_a_first_name_alone_is_a_truncated_name(quest: Quest, items: dict[str, Item]) -> None:
    verdict = judge(quest, items["election-recount"], good("election-recount", who=["Lubomir"]))
    assert (verdict.outcome, verdict.root_cause) == (Outcome.FAIL, "who-whole")
    assert "Lubomir Vanek" in verdict.facts[0].expected


def test_a_surname_the_article_uses_alone_is_whole(quest: Quest, items: dict[str, Item]) -> None:
    verdict = judge(quest, items["election-recount"], good("election-recount", who=["Vanek"]))
    assert verdict.outcome is Outcome.PASS


def test_an_unanchored_name_supersedes_its_truncation(quest: Quest, items: dict[str, Item]) -> None:
    judgement = graph(quest).judge(_context(quest, items["chess-upset"], who=["Nino Beri"]))
    assert judgement.verdict.root_cause == "who-anchored"
    assert "who-whole" not in judgement.remaining


def test_a_paraphrase_is_not_a_span_of_the_article(quest: Quest, items: dict[str, Item]) -> None:
    answer = good("drought-wheat", what="cut its harvest forecast by 14 percent")
    verdict = judge(quest, items["drought-wheat"], answer)
    assert (verdict.outcome, verdict.root_cause) == (Outcome.FAIL, "what-anchored")
    assert verdict.facts[0].where == "submission.what"


@pytest.mark.parametrize("day", ["2026-03-17", "2026-04", "2027"])
def test_a_date_after_the_article_fails_when_consistent(
    quest: Quest, items: dict[str, Item], day: str
) -> None:
    answer = good("council-bike-lanes", when={"text": "on Tuesday", "date": day})
    verdict = judge(quest, items["council-bike-lanes"], answer)
    assert (verdict.outcome, verdict.root_cause) == (Outcome.FAIL, "when-consistent")
    assert "2026-03-12" in verdict.facts[0].expected


def test_the_article_day_itself_and_the_days_before_are_consistent(
    quest: Quest, items: dict[str, Item]
) -> None:
    for day in ("2026-03-12", "2026-03", "2026", "2025-11-30"):
        answer = good("council-bike-lanes", when={"text": "on Tuesday", "date": day})
        assert judge(quest, items["council-bike-lanes"], answer).outcome is Outcome.PASS, day


def test_unanchored_when_words_supersede_the_date(quest: Quest, items: dict[str, Item]) -> None:
    answer = good("bridge-closure", when={"text": "next Friday", "date": "2026-10-09"})
    judgement = graph(quest).judge(_context(quest, items["bridge-closure"], **answer))
    assert judgement.verdict.root_cause == "when-anchored"
    assert judgement.superseded == {"when-consistent": ("when-anchored",)}


def test_an_undated_article_goes_to_a_person_not_to_a_fail(
    quest: Quest, items: dict[str, Item]
) -> None:
    payload: JSON = {k: v for k, v in fields(items["bridge-closure"]).items() if k != "date"}
    undated = Item(key="undated", state=State.TODO, tries=0, payload=payload)
    judgement = graph(quest).judge(_context(quest, undated, **GOOD["bridge-closure"]))
    assert (judgement.verdict.outcome, judgement.verdict.root_cause) == (
        Outcome.REVIEW,
        "article-dated",
    )
    assert judgement.superseded == {"when-consistent": ("article-dated",)}


def test_an_article_dated_with_a_time_is_dated_as_the_temporal_check_reads_it(
    quest: Quest, items: dict[str, Item]
) -> None:
    payload: dict[str, JSON] = dict(fields(items["bridge-closure"]))
    payload["date"] = fields(items["bridge-closure"])["date"] + "T10:00:00"
    timed = Item(key="timed", state=State.TODO, tries=0, payload=payload)
    verdict = quest.judge.evaluate(_context(quest, timed, **GOOD["bridge-closure"]))
    assert verdict.outcome is Outcome.PASS, verdict.facts


@pytest.mark.parametrize(
    "answer",
    [
        {"who": "Faith Kiptoo", "what": "won"},  # who not a list, keys missing
        [GOOD["marathon-record"]],  # wrapped in a list
        {**GOOD["marathon-record"], "when": "on Sunday"},  # when not an object
        {**GOOD["marathon-record"], "when": {"text": "on Sunday", "date": "12 April"}},
        {**GOOD["marathon-record"], "score": 1},
    ],
)
def test_a_wrong_shape_is_the_root_cause_over_every_field_rule(
    quest: Quest, items: dict[str, Item], answer: object
) -> None:
    judgement = graph(quest).judge(_raw_context(quest, items["marathon-record"], answer))
    assert (judgement.verdict.outcome, judgement.verdict.root_cause) == (Outcome.FAIL, "shape")
    assert judgement.remaining == ("shape",)
    assert "JSON object" in quest.coaching["shape"]


def test_prose_around_the_json_fails_before_any_rule(quest: Quest, items: dict[str, Item]) -> None:
    raw = "Here is the answer: " + json.dumps(GOOD["marathon-record"])
    verdict = judge(quest, items["marathon-record"], raw)
    assert verdict.outcome is Outcome.FAIL and verdict.facts[0].where == "submission"


def test_several_wrong_fields_each_leave_a_fact(quest: Quest, items: dict[str, Item]) -> None:
    answer = good("vaccine-trial", where="northern Uganda", how="with a new protein")
    verdict = judge(quest, items["vaccine-trial"], answer)
    assert {f.rule for f in verdict.facts} == {"where-anchored", "how-anchored"}
    assert verdict.root_cause == "where-anchored"


def test_a_pack_whose_example_fails_its_gate_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "news5w1h"
    shutil.copytree(PACK, folder)
    toml = folder / "quest.toml"
    toml.write_text(toml.read_text().replace('"date": "2026-02-04"', '"date": "2026-02-11"'))
    with pytest.raises(DocumentError, match="when-consistent"):
        load_quest(str(folder))


def graph(quest: Quest) -> Graph:
    """The pack's defeat graph (the document gate judges with it)."""
    inner = getattr(quest.gate, "inner", quest.gate)
    assert isinstance(inner, Graph)
    return inner


def _context(quest: Quest, item: Item, **answer: object) -> Any:
    full = {**GOOD.get(item.key, GOOD["bridge-closure"]), **answer}
    return _raw_context(quest, item, full)


def _raw_context(quest: Quest, item: Item, answer: object) -> Any:
    prepared = quest.prepare(item, json.dumps(answer))
    assert not isinstance(prepared, Verdict)
    return prepared
