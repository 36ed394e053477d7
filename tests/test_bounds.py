"""Facts and the feedback a prompt carries are bounded; the whole submission stays in the ledger.

A generator's answer may be a megabyte, and a rule may quote it or leave thousands of facts. The
gate cuts every fact's where, expected and actual at 2,000 characters, the feedback shows at
most 20 facts and 16,000 characters, and a ``facts+previous`` prompt quotes at most 16,000
characters of the submission that failed; every cut says how much it left out (invariant 15).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence

import pytest

from reins import Context, Fact, Item, Level, Outcome, Quest, Seed, Verdict, rule
from reins.gate import Graph
from reins.packs import HERE as PACKS
from reins.testing import FakeBackend
from reins.turn.compose import PREVIOUS_NOTE
from reins.values import JSON
from tests.kit import Cli
from tests.kit.loopkit import registered

FACT_CAP = 2_000
FACTS_SHOWN = 20
FEEDBACK_CAP = 16_000
PREVIOUS_CAP = 16_000
MB = 1_000_000


def _seed(args: Sequence[str]) -> Iterator[Seed]:
    for word in args or ["apple", "pear"]:
        yield Seed(word, {"word": word})


def _word(payload: JSON) -> str:
    assert isinstance(payload, dict) and isinstance(payload["word"], str)
    return payload["word"]


def _render(item: Item) -> str:
    return f"Write the word {_word(item.payload)!r} in capital letters."


def _prepare(item: Item, raw: str) -> Context | Verdict:
    text = raw.strip()
    if text.startswith("short:"):  # prepare's own short verdict, quoting the answer whole
        return Verdict.short(Outcome.FAIL, Fact(rule="shape", where="answer", expected="a word",
                                                actual=text))  # fmt: skip
    if text.startswith("told:"):  # a verdict with its own feedback text
        return Verdict(Outcome.FAIL, (), "shape", feedback=text)
    return Context(key=item.key, submission=text, payload=item.payload)


@rule("upper-case", Level.FAIL, "the answer is the word in capital letters")
def upper_case(ctx: Context) -> Fact | None:
    want = _word(ctx.payload).upper()
    if ctx.submission != want:
        return Fact(where="answer", expected=want, actual=str(ctx.submission))
    return None


@rule("letters", Level.FAIL, "every character is a capital letter")
def letters(ctx: Context) -> list[Fact]:
    return [
        Fact(where=f"answer[{i}]", expected="A-Z", actual=c)
        for i, c in enumerate(str(ctx.submission))
        if not "A" <= c <= "Z"
    ]


@rule("echo", Level.FAIL, "the answer's JSON field w is empty")
def echo(ctx: Context) -> Fact | None:
    w = json.loads(str(ctx.submission))["w"]  # an escaped lone surrogate decodes to one
    return Fact(where=w, expected="", actual=w) if w else None


# The README's quest, as a user writes it.
SHOUT = Quest(name="shout", seed=_seed, render=_render, prepare=_prepare, rules=[upper_case])
# A rule that leaves a fact per character, flat and as a defeat graph.
LETTERS = Quest(name="letters", seed=_seed, render=_render, prepare=_prepare, rules=[letters])
LETTERS_GRAPH = Quest(
    name="letters",
    seed=_seed,
    render=_render,
    prepare=_prepare,
    rules=[letters],
    gate=Graph.from_rules([letters]),
)

ECHO = Quest(name="echo", seed=_seed, render=_render, prepare=_prepare, rules=[echo])

EMAILS_PACK = str(PACKS / "emails")
# A megabyte answer of the wanted shape: one "address" a rule quotes whole.
BIG_EMAILS = json.dumps({"addresses": ["x" * MB + "@example.org"]})


def _assert_honest_cut(shown: str, whole: str) -> None:
    """``shown`` is the start of ``whole`` and says exactly how many characters it left out."""
    cut = re.search(r"… \((\d+) more characters\)$", shown)
    assert cut is not None, shown[-80:]
    kept = shown[: cut.start()]
    assert whole.startswith(kept) and len(kept) + int(cut.group(1)) == len(whole)


def _assert_bounded(facts: list[dict[str, str]]) -> None:
    for fact in facts:
        for field in ("where", "expected", "actual"):
            assert len(fact[field]) <= FACT_CAP, (field, len(fact[field]))


@pytest.mark.parametrize(
    ("quest", "key", "answer"),
    [
        ("emails", "01-meeting", BIG_EMAILS),
        (EMAILS_PACK, "01-meeting", BIG_EMAILS),
        ("tests.test_bounds:SHOUT", "apple", "x" * MB),
    ],
    ids=["emails", "emails-pack", "shout"],
)
def test_a_megabyte_answer_leaves_bounded_facts_feedback_and_prompt(
    cli: Cli, quest: str, key: str, answer: str
) -> None:
    assert cli("scan", quest=quest).exit_code == 0
    out = cli("submit", "--key", key, "--json", input=answer, quest=quest)
    assert out.exit_code == 4, out.output
    data = json.loads(out.stdout)
    _assert_bounded(data["facts"])
    assert any("more characters)" in f["actual"] for f in data["facts"])
    assert len(data["feedback"]) <= FEEDBACK_CAP
    printed = cli("log", key, "--json", quest=quest).stdout  # what a person reads back
    attempt = json.loads(printed)["attempts"][0]
    assert attempt["facts"] == data["facts"] and attempt["feedback"] == data["feedback"]
    assert attempt["submission"] == answer  # the whole submission stays in the ledger
    prompt = json.loads(cli("next", "--json", quest=quest).stdout)
    assert prompt["user"].endswith(data["feedback"])  # feedback parity
    assert len(prompt["user"]) <= FEEDBACK_CAP + 2_000


def test_the_plain_submit_text_is_the_bounded_feedback(cli: Cli) -> None:
    cli("scan", quest="emails")
    out = cli("submit", "--key", "01-meeting", input=BIG_EMAILS, quest="emails")
    assert out.exit_code == 4 and len(out.stdout) <= FEEDBACK_CAP
    assert "more characters)" in out.stdout
    user = json.loads(cli("next", "--json", quest="emails").stdout)["user"]
    assert user.endswith(out.stdout)
    full = cli("log", "01-meeting", "--full", quest="emails").stdout
    assert "x" * MB in full


@pytest.mark.parametrize("quest", ["LETTERS", "LETTERS_GRAPH"])
def test_many_facts_are_all_recorded_but_the_feedback_shows_twenty(cli: Cli, quest: str) -> None:
    ref = f"tests.test_bounds:{quest}"
    cli("scan", quest=ref)
    out = cli("submit", "--key", "apple", "--json", input="a" * 5_000, quest=ref)
    assert out.exit_code == 4, out.output
    data = json.loads(out.stdout)
    assert len(data["facts"]) == 5_000  # every fact is on the record
    feedback = data["feedback"]
    assert len(feedback) <= FEEDBACK_CAP
    assert feedback.count('expected: "A-Z"') == FACTS_SHOWN
    assert "4980 more fact(s)" in feedback
    user = json.loads(cli("next", "--json", quest=ref).stdout)["user"]
    assert user.endswith(feedback)


def test_a_short_verdict_from_prepare_is_bounded_too(cli: Cli) -> None:
    ref = "tests.test_bounds:SHOUT"
    cli("scan", quest=ref)
    out = cli("submit", "--key", "apple", "--json", input="short:" + "y" * MB, quest=ref)
    assert out.exit_code == 4, out.output
    data = json.loads(out.stdout)
    assert data["root_cause"] == "shape"
    _assert_bounded(data["facts"])
    _assert_honest_cut(data["facts"][0]["actual"], "short:" + "y" * MB)
    assert len(data["feedback"]) <= FEEDBACK_CAP


def test_a_verdicts_own_feedback_text_is_cut_visibly(cli: Cli) -> None:
    ref = "tests.test_bounds:SHOUT"
    cli("scan", quest=ref)
    out = cli("submit", "--key", "apple", input="told:" + "z" * MB, quest=ref)
    assert out.exit_code == 4
    assert len(out.stdout) <= FEEDBACK_CAP and out.stdout.endswith(" more characters)\n")
    user = json.loads(cli("next", "--json", quest=ref).stdout)["user"]
    assert user.endswith(out.stdout)


def test_facts_plus_previous_quotes_a_bounded_previous_submission(cli: Cli) -> None:
    ref = "tests.test_bounds:SHOUT"
    cli("scan", "apple", quest=ref)
    fake = FakeBackend({"apple": ["x" * MB, "APPLE"]})
    with registered(w=fake):
        out = cli("loop", "--model", "fake:w", "--retry", "facts+previous", "--json", quest=ref)
    assert out.exit_code == 0, out.output
    second = fake.calls_for("apple")[1].prompt.user
    assert "## The submission that failed" in second
    assert len(second) <= FEEDBACK_CAP + PREVIOUS_CAP + 2_000
    previous = second.split("## The submission that failed\n\n", 1)[1].split(PREVIOUS_NOTE)[0]
    assert previous.startswith("x" * 1_000) and previous.endswith(" more characters)\n\n")


def test_feedback_that_escaping_lengthens_still_fits_and_is_fed_back_whole(cli: Cli) -> None:
    """Lone surrogates are kept as 6-character escapes when a turn is recorded: the recorded
    feedback is cut after that, so the next prompt quotes all of it (feedback parity)."""
    ref = "tests.test_bounds:ECHO"
    cli("scan", quest=ref)
    answer = json.dumps({"w": "\ud800" * 5_000})
    out = cli("submit", "--key", "apple", "--json", input=answer, quest=ref)
    assert out.exit_code == 4, out.output
    feedback = json.loads(out.stdout)["feedback"]
    assert len(feedback) <= FEEDBACK_CAP and feedback.endswith(" more characters)\n")
    user = json.loads(cli("next", "--json", quest=ref).stdout)["user"]
    assert user.endswith("## Your last submission failed the gate\n\n" + feedback)
