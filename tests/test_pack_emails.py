"""The emails pack: the Python emails quest as documents. Both judge every sample, and real mail,
the same way, through reins.verify.mailaddr."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reins import Item, Outcome, Quest, State, Verdict
from reins.gate.graph import Graph
from reins.packs import folder, load_pack
from reins.quests import emails as python_emails
from reins.turn import judge as judge_turn
from reins.values import JSON
from reins.verify.mailaddr import addresses
from tests.kit import Cli

PACK = folder("emails")
SHAPE_RULES = {"reins:json": "json-shape"}  # the loader's rule for an answer that is not JSON


@pytest.fixture(scope="module")
def pack() -> Quest:
    return load_pack("emails")


def item(key: str, text: str) -> Item:
    return Item(key=key, state=State.TODO, tries=0, payload={"file": f"{key}.txt", "text": text})


def text(payload: JSON) -> str:
    assert isinstance(payload, dict) and isinstance(payload["text"], str)
    return payload["text"]


def samples() -> dict[str, str]:
    return {key: text(payload) for key, payload in python_emails.quest.seed([])}


def judge(quest: Quest, it: Item, raw: str) -> Verdict:
    verdict, _ = judge_turn(quest, it, raw)
    assert isinstance(verdict, Verdict), verdict  # a judge error would be a bug
    return verdict


def answer(*addresses: str) -> str:
    return json.dumps({"addresses": list(addresses)})


def test_the_pack_loads_with_the_quest_s_rules_and_edges(pack: Quest) -> None:
    catalog = {e.id: e for e in pack.judge.catalog()}
    python_ids = [r.id for r in python_emails.RULES]
    assert list(catalog) == ["json-shape", *python_ids]
    assert catalog["address-syntax"].supersedes == ("address-in-source",)
    assert set(catalog["json-shape"].supersedes) == set(python_ids)
    assert catalog["free-mail"].level == "REVIEW"
    assert pack.manual == python_emails.MANUAL
    assert len(pack.examples) >= 1


def test_the_pack_and_the_python_quest_scan_the_one_copy_of_the_samples(pack: Quest) -> None:
    seeds = {key: payload for key, payload in pack.seed([])}
    assert {k: text(p) for k, p in seeds.items()} == samples()
    assert python_emails.SAMPLES == PACK / "samples"  # the pack's, so the two cannot drift
    assert len(seeds) == len(list(python_emails.SAMPLES.glob("*.txt"))) == 11


def test_the_prompt_matches_the_python_quest_s(pack: Quest) -> None:
    for key, text in samples().items():
        it = Item(key=key, state=State.TODO, tries=0, payload={"file": f"{key}.txt", "text": text})
        assert pack.render(it).rstrip() == python_emails.render(it).rstrip()


REAL = """\
Received: from mx.plotholders.example by mx1.allotment-gazette.example with ESMTPS id 7QxL
\tfor <committee@allotment-gazette.example>; Thu, 12 Mar 2026 08:01:09 +0000
Message-ID: <CAKw=3f9bT2+q@mail.plotholders.example>
In-Reply-To: <seedswap.2026.0310@allotment-gazette.example>
References: <tomatoes.2026.0309@news.example.net>
 <seedswap.2026.0310@allotment-gazette.example>
From: =?UTF-8?Q?Ray_Oka=C3=ABfor?= <R.Okafor@Plotholders.example>
To: "Allotment committee" <committee@allotment-gazette.example>
Cc: gwen.ashdown@gmail.com, "plot 14"@plotholders.example

Thanks Gwen. I'll bring envelopes. Please write to R.Okafor@plotholders.example, not
r.okafor@plotholders.example.org (that one is gone).

On Tue, 10 Mar 2026, Gwen <gwen.ashdown@gmail.com> wrote:
> See the thread <tomatoes.2026.0309@news.example.net> and ask treasurer@allotment-gazette.example.
"""

REAL_MAILBOXES = [
    "committee@allotment-gazette.example",
    "R.Okafor@Plotholders.example",
    "gwen.ashdown@gmail.com",
    '"plot 14"@plotholders.example',
    "r.okafor@plotholders.example.org",
    "treasurer@allotment-gazette.example",
]


def test_real_mail_is_read_the_same_by_both() -> None:
    assert addresses(REAL) == REAL_MAILBOXES


def _answers(text: str) -> list[str]:
    """Good and bad answers for ``text``: every kind of verdict the gate can give."""
    found = addresses(text)
    out = [
        answer(*found),
        json.dumps(found),  # a bare list
        "```json\n" + answer(*found) + "\n```",
        answer(*found[:-1]),  # one missing
        answer(*found, "invented@nowhere.example"),
        answer(*found, "not an address"),
        answer(*found, *found[:1]),  # a duplicate
        answer(*[a.upper() for a in found]),  # the local part's case changed
        answer(*[a[:-1] for a in found]),  # each cut short
        answer(*found, "CAKw=3f9bT2+q@mail.plotholders.example"),  # a message id
        answer(*found, "gwen.ashdown@gmail.com"),
        answer(" " + found[0] + " ", *found[1:]) if found else answer(" "),
        answer(),
        "",
        "addresses: a@b.example",
        '{"emails": []}',
        "[1, 2]",
        '{"addresses": ["a@b.example"], "extra": 1}',
        "```json\n{oops\n```",
    ]
    if found:
        out.append(
            answer(*found, found[0].rpartition("@")[0] + "@" + found[0].rpartition("@")[2].upper())
        )
    return out


def _same_verdict(expected: Verdict, got: Verdict) -> None:
    assert got.outcome is expected.outcome
    root = SHAPE_RULES.get(got.root_cause or "", got.root_cause)
    assert root == expected.root_cause
    if expected.root_cause != "json-shape":
        assert [(f.rule, f.expected, f.actual) for f in got.facts] == [
            (f.rule, f.expected, f.actual) for f in expected.facts
        ]


@pytest.mark.parametrize("key", sorted(samples()))
def test_both_judge_every_sample_alike(pack: Quest, key: str) -> None:
    text = samples()[key]
    it = item(key, text)
    for raw in _answers(text):
        _same_verdict(judge(python_emails.quest, it, raw), judge(pack, it, raw))


def test_both_judge_real_mail_alike(pack: Quest) -> None:
    it = item("real", REAL)
    outcomes = set()
    for raw in _answers(REAL):
        expected = judge(python_emails.quest, it, raw)
        _same_verdict(expected, judge(pack, it, raw))
        outcomes.add((expected.outcome, expected.root_cause))
    # the answers exercise every rule of the gate (the free-mail address rules out a PASS)
    assert {root for _, root in outcomes} >= {
        "json-shape",
        "address-syntax",
        "address-in-source",
        "address-missing",
        "address-duplicate",
        "free-mail",
    }


@pytest.mark.parametrize(
    ("extra", "why"),
    [
        ("CAKw=3f9bT2+q@mail.plotholders.example", "message id (Message-ID field)"),
        ("tomatoes.2026.0309@news.example.net", "message id (References field)"),
        ("r.okafor@plotholders.example", "the local part's case matters"),
        ("R.Okafor@plotholders.example.org", "the local part's case matters"),
        ("okafor@plotholders.example", "not whole"),
        ("treasurer@allotment-gazette.exampl", "not whole"),
        ("ray@plotholders.example", "not in the text"),
    ],
)
def test_an_id_or_near_miss_fails_in_source_with_the_reason(
    pack: Quest, extra: str, why: str
) -> None:
    verdict = judge(pack, item("real", REAL), answer(*REAL_MAILBOXES, extra))
    assert (verdict.outcome, verdict.root_cause) == (Outcome.FAIL, "address-in-source")
    assert verdict.facts[0].where == f"submission.addresses[{len(REAL_MAILBOXES)}]"
    assert verdict.facts[0].actual.startswith(extra + ": ") and why in verdict.facts[0].actual


def test_the_real_mail_answer_goes_to_a_person_for_its_free_mail(pack: Quest) -> None:
    verdict = judge(pack, item("real", REAL), answer(*REAL_MAILBOXES))
    assert (verdict.outcome, verdict.root_cause) == (Outcome.REVIEW, "free-mail")
    assert verdict.facts[0].actual == "gwen.ashdown@gmail.com"


def test_a_wrong_shape_supersedes_every_address_rule(pack: Quest) -> None:
    gate = getattr(pack.gate, "inner", pack.gate)
    assert isinstance(gate, Graph)
    ctx = pack.prepare(item("real", REAL), '{"addresses": ["x@y.example"], "extra": 1}')
    assert not isinstance(ctx, Verdict)
    judgement = gate.judge(ctx)
    assert judgement.remaining == ("json-shape",)
    assert judgement.verdict.root_cause == "json-shape"


def test_the_pack_folder_is_self_contained(tmp_path: Path) -> None:
    names = {p.name for p in PACK.iterdir()}
    assert {
        "quest.toml",
        "gate.md",
        "README.md",
        "schema.json",
        "emails_checks.py",
        "samples",
    } <= names


# Old mail, as archives keep it. Each text hides one address, or one id, where a reader of
# mail would see it and a naive scanner would not (or would make one up).
SIGNATURE = """\
From: Bob Lab <lab-desk@example.org>
Subject: Re: the gateway

The gateway is down until Friday.
--
Bob, Example Organization lab
Mail bob@lab.example.org-- or call +1 555 0142.
Our other lab: ann@my-lab.example.org-
"""

PREFIXED_ID = """\
From: Bob Lab <bob@lab.example.org>
X-Xxmessage-Id: <9a3f00c2e71b@lab.example.org>
Subject: the gateway

Down until Friday.
"""

UNCLOSED_REFERENCES = """\
From: Bob Lab <bob@lab.example.org>
References: <1993Nov3.221530.1@mail.example.net> <1993Nov4.10:42.7@po.Example.Organization
Cc: Ann <ann@my-lab.example.org>
References: <ok.1@mail.example.net> <1993Nov5.09:13.2@po.Example.Organization To: desk@example.org
Subject: Re: the gateway

Down until Friday.
"""


@pytest.fixture(params=["python", "pack"])
def either(request: pytest.FixtureRequest, pack: Quest) -> Quest:
    """Each emails quest in turn: they must judge alike."""
    return python_emails.quest if request.param == "python" else pack


def test_an_address_before_a_dash_is_read_without_the_dash(either: Quest) -> None:
    it = item("sig", SIGNATURE)
    both = ["lab-desk@example.org", "bob@lab.example.org", "ann@my-lab.example.org"]
    assert judge(either, it, answer(*both)).outcome is Outcome.PASS
    verdict = judge(either, it, answer("lab-desk@example.org"))
    assert (verdict.outcome, verdict.root_cause) == (Outcome.FAIL, "address-missing")
    assert verdict.facts[0].expected == "also bob@lab.example.org, ann@my-lab.example.org"
    empty = judge(either, item("only", "Mail bob@lab.example.org-- or call.\n"), answer())
    assert (empty.outcome, empty.root_cause) == (Outcome.FAIL, "address-missing")
    assert empty.facts[0].expected == "also bob@lab.example.org"


def test_a_field_whose_name_ends_in_message_id_holds_an_id(either: Quest) -> None:
    it = item("prefixed", PREFIXED_ID)
    assert judge(either, it, answer("bob@lab.example.org")).outcome is Outcome.PASS
    verdict = judge(either, it, answer("bob@lab.example.org", "9a3f00c2e71b@lab.example.org"))
    assert (verdict.outcome, verdict.root_cause) == (Outcome.FAIL, "address-in-source")
    assert verdict.facts[0].actual == (
        "9a3f00c2e71b@lab.example.org: a message id (X-Xxmessage-ID field), not a mailbox"
    )


def test_an_unclosed_bracket_in_references_makes_no_mailbox(either: Quest) -> None:
    it = item("unclosed", UNCLOSED_REFERENCES)
    real = ["bob@lab.example.org", "ann@my-lab.example.org", "desk@example.org"]
    assert addresses(UNCLOSED_REFERENCES) == real
    assert judge(either, it, answer(*real)).outcome is Outcome.PASS
    made_up = "42.7@po.Example.Organization"
    verdict = judge(either, it, answer(*real, made_up))
    assert (verdict.outcome, verdict.root_cause) == (Outcome.FAIL, "address-in-source")
    assert verdict.facts[0].actual.startswith(made_up + ": a message id (References field)")


def test_every_offending_address_leaves_its_own_fact(either: Quest) -> None:
    """An answer learns of all its bad entries at once, not one per try."""
    it = item("real", REAL)
    invented = ["ray@plotholders.example", "CAKw=3f9bT2+q@mail.plotholders.example"]
    verdict = judge(either, it, answer(*REAL_MAILBOXES, *invented))
    assert (verdict.outcome, verdict.root_cause) == (Outcome.FAIL, "address-in-source")
    at = "addresses" if either is python_emails.quest else "submission.addresses"
    n = len(REAL_MAILBOXES)
    facts = [f for f in verdict.facts if f.rule == "address-in-source"]
    assert [(f.where, f.actual.partition(":")[0]) for f in facts] == [
        (f"{at}[{n}]", invented[0]),
        (f"{at}[{n + 1}]", invented[1]),
    ]
    for i, address in enumerate(invented, n):  # the feedback a retry reads names each one
        assert f"address-in-source at {at}[{i}]" in verdict.feedback
        assert f'actual:   "{address}: ' in verdict.feedback
    bad = judge(either, it, answer(*REAL_MAILBOXES, "ray at plot", "ray@@plot.example"))
    assert bad.root_cause == "address-syntax"
    facts = [f for f in bad.facts if f.rule == "address-syntax"]
    assert [f.actual for f in facts] == ["ray at plot", "ray@@plot.example"]
    twice = judge(either, it, answer(*REAL_MAILBOXES, *REAL_MAILBOXES[:2]))
    assert twice.root_cause == "address-duplicate"
    facts = [f for f in twice.facts if f.rule == "address-duplicate"]
    assert [f.actual for f in facts] == REAL_MAILBOXES[:2]


@pytest.mark.parametrize("quest", ["emails", str(PACK)])
def test_a_user_submitting_old_mail_meets_the_same_verdicts(
    quest: str, tmp_path: Path, cli: Cli
) -> None:
    """Through the CLI, for the Python quest and the pack: the right answers lock, an empty
    answer to a text whose address stands before a dash does not."""
    cli.quest, cli.ledger = quest, str(tmp_path / "l.db")
    texts = {"sig": SIGNATURE, "prefixed": PREFIXED_ID, "unclosed": UNCLOSED_REFERENCES}
    for key, text in texts.items():
        (tmp_path / f"{key}.txt").write_text(text)
    (tmp_path / "dash.txt").write_text("Mail bob@lab.example.org-- or call.\n")

    assert cli("scan", *(str(tmp_path / f"{k}.txt") for k in [*texts, "dash"])).exit_code == 0
    right = {
        "sig": ["lab-desk@example.org", "bob@lab.example.org", "ann@my-lab.example.org"],
        "prefixed": ["bob@lab.example.org"],
        "unclosed": ["bob@lab.example.org", "ann@my-lab.example.org", "desk@example.org"],
    }
    for key, found in right.items():
        out = cli("submit", "--key", key, input=answer(*found))
        assert (out.exit_code, out.stdout.splitlines()[0]) == (
            0,
            f"{key} -> PASS on answer 1 of 3 (state PASS)",
        )
    out = cli("submit", "--key", "dash", input=answer())
    assert out.exit_code == 4 and "Root cause: address-missing" in out.stdout
    assert 'expected: "also bob@lab.example.org"' in out.stdout
