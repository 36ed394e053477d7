"""Judge errors: when the gate itself fails, the turn is recorded but never charged.

A ``prepare``, rule, ground or AI check that raises (or cannot answer) is the judge's failure,
not the generator's: the attempt is of kind ``judge_error``, it uses no try, locks nothing, never
reaches a prompt and is never a PASS. The loop stops after ``--judge-breaker`` of them in a row
(exit 10); ``submit`` reports one with exit 10.
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reins.loop.slot
from reins import Quest, SQLiteStore, State
from reins.errors import BackendError, NotTodo
from reins.gate import (
    CatalogEntry,
    Context,
    Counter,
    Fact,
    FakeResolver,
    Graph,
    Level,
    Outcome,
    Snapshot,
    Verdict,
    ai_rule,
    rule,
)
from reins.gate.ai import Ask
from reins.store import AttemptKind, Item
from reins.testing import FakeBackend
from reins.turn import GenerationFailure, JudgeFailure, Origin, compose, judge, record, submit
from reins.turn.table import TABLE
from tests.kit import TINY, TINY_REF, Cli, not_bad, not_meh, tiny_prepare
from tests.kit.loopkit import make_ledger, registered

# --- a quest whose gate can fail in every way a gate can ------------------------------------

UP, DOWN = "https://example.org/up", "https://example.org/down"
RESOLVER = FakeResolver(pages={UP: "fine", DOWN: OSError("network unreachable")})


def broken_prepare(item: Item, raw: str) -> Context | Verdict:
    text = raw.strip()
    if text == "cheat":
        return Verdict(Outcome.PASS)  # only the gate may pass an item
    if text == "garbage":
        return 42  # type: ignore[return-value]
    return tiny_prepare(item, raw)  # "explode" raises RuntimeError


@rule("crashy", Level.FAIL, "a rule with a bug")
def crashy(ctx: Context) -> Fact | None:
    if "crash" in str(ctx.submission):
        return Fact(where="answer", expected="x", actual=str(1 // 0))
    return None


@rule("junky", Level.REVIEW, "a rule that returns the wrong type")
def junky(ctx: Context) -> Fact | None:
    return "junk" if "junk" in str(ctx.submission) else None  # type: ignore[return-value]


def ask_model(question: str) -> str:
    if "outage" in question:
        raise BackendError("model overloaded", backend="fake")
    return "yes"


def agrees(answer: str, ctx: Context) -> Fact | None:
    if answer == "yes":
        return None
    return Fact(where="answer", expected="a model to agree", actual=answer)


skeptic = ai_rule(
    "skeptic",
    "a model agrees with the answer",
    ask=ask_model,
    question=lambda ctx: str(ctx.submission),
    read=agrees,
)


@rule("page-ok", Level.FAIL, "the cited page says fine")
def page_ok(ctx: Context) -> Fact | None:
    page = ctx.grounds["page"]
    return None if page == "fine" else Fact(where="page", expected="fine", actual=page)


def page(ctx: Context, snapshot: Snapshot) -> str:
    return snapshot.fetch(DOWN if "offline" in str(ctx.submission) else UP)


BROKEN = dataclasses.replace(
    TINY,
    name="broken",
    prepare=broken_prepare,
    gate=Graph(
        [
            Counter(not_bad),
            Counter(not_meh),
            Counter(crashy),
            Counter(junky),
            Counter(skeptic),
            Counter(page_ok, needs=("page",)),
        ],
        grounds={"page": page},
        resolver=RESOLVER,
    ),
)


class RaisingGate:
    """A gate whose own code fails (not a rule of it): reins names it ``reins:gate``."""

    def evaluate(self, ctx: Context) -> Verdict:
        raise KeyError("lost")

    def catalog(self) -> list[CatalogEntry]:
        return []


RAISING_GATE = dataclasses.replace(TINY, name="raising", gate=RaisingGate())


def always_raises(item: Item, raw: str) -> Context | Verdict:
    raise OSError("dictionary file missing")


# Every submission is a judge error: its prepare always raises.
ALWAYS = dataclasses.replace(TINY, name="always", prepare=always_raises)

# (quest, answer, what the error names, the exception type or the complaint)
SOURCES = [
    (BROKEN, "explode", "quest.prepare", "RuntimeError: prepare blew up"),
    (BROKEN, "cheat", "quest.prepare", "returned a PASS verdict"),
    (BROKEN, "garbage", "quest.prepare", "returned 42, not a Context or a Verdict"),
    (BROKEN, "crash", "crashy", "ZeroDivisionError"),
    (BROKEN, "junk", "junky", "returned 'junk', not a Fact or None"),
    (BROKEN, "outage", "ai check skeptic", "BackendError: model overloaded"),
    (BROKEN, "offline", "ground page", "OSError: network unreachable"),
    (RAISING_GATE, "good", "reins:gate", "KeyError: 'lost'"),
    (ALWAYS, "good", "quest.prepare", "OSError: dictionary file missing"),
]
IDS = ["prepare-raises", "prepare-passes", "prepare-junk", "rule-raises", "rule-junk", "ai"]
IDS += ["ground", "gate", "always"]


def test_the_broken_quest_judges_ordinary_answers_like_the_tiny_one() -> None:
    """The test quest is sound where it is not meant to break."""
    item = Item(key="a", state=State.TODO, tries=0, payload={"word": "a"})
    for answer, outcome in [("good", Outcome.PASS), ("bad", Outcome.FAIL), ("meh", Outcome.REVIEW)]:
        v, _ = judge(BROKEN, item, answer)
        assert isinstance(v, Verdict) and v.outcome == outcome
    v, _ = judge(BROKEN, item, "bad offline")  # a FAIL no ground can change: never resolved
    assert isinstance(v, Verdict) and v.root_cause == "not-bad"


@pytest.mark.parametrize(("quest", "answer", "where", "cause"), SOURCES, ids=IDS)
def test_the_judge_names_what_failed_and_how(
    quest: Quest, answer: str, where: str, cause: str
) -> None:
    item = Item(key="a", state=State.TODO, tries=0, payload={"word": "a"})
    v, text = judge(quest, item, answer)
    assert isinstance(v, JudgeFailure) and text == answer
    assert v.where == where and cause in v.cause
    assert v.error == f"{v.where}: {v.cause}"


@pytest.mark.parametrize(("quest", "answer", "where", "cause"), SOURCES, ids=IDS)
def test_a_judge_error_is_recorded_without_a_try_a_lock_or_a_prompt(
    ledger: SQLiteStore, quest: Quest, answer: str, where: str, cause: str
) -> None:
    # Two FAILs first: the item stands one FAIL short of DONE (the "reaches max" class).
    # Only BROKEN can judge "bad"; the others' FAILs are recorded as the tiny quest judged them.
    judged = quest if quest is BROKEN else TINY
    for _ in range(2):
        assert submit(ledger, judged, "a", "bad", driver="t")[0].item.state is State.TODO
    item, log = ledger.snapshot("a")
    before = compose(quest, item, log)

    recorded, exported = submit(ledger, quest, "a", answer, driver="t")

    a = recorded.attempt
    assert a.kind is AttemptKind.JUDGE_ERROR and recorded.verdict is None and exported.count == 0
    assert (recorded.item.state, recorded.item.tries, recorded.item.turns) == (State.TODO, 2, 3)
    assert not recorded.item.state.terminal
    assert (a.turn, a.state_after, a.tries_after) == (3, State.TODO, 2)
    assert (a.outcome, a.root_cause, a.facts, a.feedback) == (None, None, (), "")
    assert a.error is not None and a.error.startswith(f"{where}: ") and cause in a.error
    assert "Traceback" not in a.error and 'File "' not in a.error
    assert a.submission == answer and a.gate_digest == quest.gate_digest
    assert recorded.text.startswith(f"a -> judge error: {where}: ")
    assert "it counts as no answer (no failure used) and nothing locked" in recorded.text

    item, log = ledger.snapshot("a")
    assert log[-1] == a
    after = compose(quest, item, log)
    assert after.system.encode() == before.system.encode()
    assert after.user.encode() == before.user.encode()
    assert after.digest() == before.digest() and after.turn == before.turn + 1
    assert "judge error" not in after.user and where not in after.user

    # The item is still one FAIL short of DONE: the judge error did not use its last try.
    done = submit(ledger, judged, "a", "bad", driver="t")[0].item
    assert (done.state, done.tries) == (State.DONE, 3)


def test_an_ai_outage_never_locks_a_passing_item_for_review(ledger: SQLiteStore) -> None:
    """Real doubt goes to a person; an AI that cannot answer is the judge's failure."""

    def quest_asking(ask: Ask) -> Quest:
        check = ai_rule("skeptic", "a model agrees", ask=ask, question=lambda c: "?", read=agrees)
        return dataclasses.replace(TINY, rules=[not_bad, not_meh, check])

    def down(question: str) -> str:
        raise BackendError("503 service unavailable", backend="fake")

    outage = submit(ledger, quest_asking(down), "a", "good", driver="t")[0]
    assert outage.attempt.kind is AttemptKind.JUDGE_ERROR
    assert (outage.item.state, outage.item.tries) == (State.TODO, 0)
    assert outage.attempt.error is not None
    assert outage.attempt.error.startswith("ai check skeptic: ")
    assert "BackendError: 503 service unavailable" in outage.attempt.error

    def mute(question: str) -> str:
        return None  # type: ignore[return-value]  # an answer that is not text

    silent = submit(ledger, quest_asking(mute), "a", "good", driver="t")[0]
    assert silent.attempt.kind is AttemptKind.JUDGE_ERROR
    assert silent.item.state is State.TODO

    back = submit(ledger, quest_asking(lambda q: "yes"), "a", "good", driver="t")[0]
    assert (back.item.state, back.item.tries) == (State.PASS, 0)

    doubt = submit(ledger, quest_asking(lambda q: "no"), "b", "good", driver="t")[0]
    assert doubt.item.state is State.REVIEW and doubt.verdict is not None
    assert doubt.verdict.root_cause == "skeptic"


# --- the property: only judged attempts use tries or lock --------------------------------

# A rule or AI check that fails is a judge error even beside a machine FAIL (all checks that
# read no ground run); a ground is not resolved when a FAIL already settles the verdict.
JUDGE_ERRORS = ["explode", "cheat", "garbage", "crash", "bad crash", "junk", "bad outage"]
JUDGE_ERRORS += ["offline", "meh offline"]
JUDGED = ["good", "bad", "meh", "skip", "block", "bad offline"]
GENERATION_ERROR = "<the backend timed out>"


@contextmanager
def fresh_ledger() -> Iterator[SQLiteStore]:
    with (
        tempfile.TemporaryDirectory() as folder,
        SQLiteStore.open(Path(folder) / "p.reins.db", create=True) as led,
    ):
        led.add([("a", {"word": "a"})])
        yield led


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([*JUDGE_ERRORS, *JUDGED, GENERATION_ERROR]), max_size=12))
def test_no_sequence_of_judge_errors_uses_a_try_or_locks(steps: list[str]) -> None:
    with fresh_ledger() as led:
        fails = 0
        for step in steps:
            item, log = led.snapshot("a")
            if item.state.terminal:
                with pytest.raises(NotTodo):
                    submit(led, BROKEN, "a", "good", driver="t")
                break
            prompt = compose(BROKEN, item, log)
            if step == GENERATION_ERROR:
                rec = record(led, BROKEN, item, GenerationFailure("timeout"), Origin(), driver="t")
            else:
                rec = submit(led, BROKEN, "a", step, driver="t")[0]
            after, kind = rec.item, rec.attempt.kind
            assert kind is (
                AttemptKind.JUDGE_ERROR
                if step in JUDGE_ERRORS
                else AttemptKind.GENERATION_ERROR
                if step == GENERATION_ERROR
                else AttemptKind.JUDGED
            )
            if kind is AttemptKind.JUDGED:
                assert rec.verdict is not None
                row = TABLE.lookup(kind, rec.verdict.outcome.value, item.tries, BROKEN.max_tries)
                assert (after.state, after.tries) == (row.state, item.tries + row.tries_delta)
                fails += rec.verdict.outcome is Outcome.FAIL
            else:
                # Unchanged, and the next prompt is the one the error interrupted.
                assert (after.state, after.tries) == (State.TODO, item.tries)
                assert compose(BROKEN, *led.snapshot("a")) == prompt
            assert after.turns == item.turns + 1
        item, log = led.snapshot("a")
        assert item.tries == fails == sum(a.outcome == "FAIL" for a in log)
        locking = [a for a in log if a.state_after.terminal]
        assert len(locking) <= 1 and all(a.judged for a in locking)
        assert item.state.terminal == bool(locking)
        assert all(a.tries_after <= item.tries for a in log)


# --- the command line: `reins submit` and `reins loop` ----------------------------------------

ALWAYS_REF = "tests.test_judge_errors:ALWAYS"


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli) -> Path:
    """A ledger of the quest whose ``prepare`` always fails, which ``cli`` runs."""
    cli.quest, cli.driver = ALWAYS_REF, "alice"
    # A judge error backs off like a generation error (1 s, doubling); not in tests.
    monkeypatch.setattr(reins.loop.slot, "MAX_BACKOFF", 0.0)
    make_ledger(tmp_path / "always.reins.db")
    return tmp_path


def attempts(folder: Path, ledger: str = "always.reins.db") -> list[tuple[str, str, State, int]]:
    with SQLiteStore.open(folder / ledger) as led:
        return [
            (a.key, a.kind.value, a.state_after, a.tries_after)
            for key in ("a", "b", "c")
            for a in led.snapshot(key)[1]
        ]


def items(folder: Path, ledger: str = "always.reins.db") -> list[tuple[State, int]]:
    with SQLiteStore.open(folder / ledger) as led:
        return [(led.get(k).state, led.get(k).tries) for k in ("a", "b", "c")]


def test_submit_reports_a_judge_error_with_exit_10_and_charges_nothing(
    folder: Path, cli: Cli
) -> None:
    out = cli("submit", "-k", "a", input="good")
    assert out.exit_code == 10, out.output
    assert out.stdout.startswith(
        "a -> judge error: quest.prepare: OSError: dictionary file missing\n"
    )
    assert "it counts as no answer (no failure used) and nothing locked" in out.stdout
    assert "Traceback" not in out.output
    assert attempts(folder) == [("a", "judge_error", State.TODO, 0)]
    assert items(folder) == [(State.TODO, 0)] * 3

    as_json = cli("submit", "-k", "a", "--json", input="good")
    assert as_json.exit_code == 10
    data = json.loads(as_json.stdout)
    assert (data["kind"], data["outcome"], data["state"], data["tries"]) == (
        "judge_error",
        None,
        "TODO",
        0,
    )
    assert data["error"] == "quest.prepare: OSError: dictionary file missing"
    assert data["turn"] == 2 and data["facts"] == [] and data["root_cause"] is None
    assert items(folder)[0] == (State.TODO, 0)


def test_the_loop_stops_after_three_judge_errors_in_a_row_with_exit_10(
    folder: Path, cli: Cli
) -> None:
    fake = FakeBackend(lambda call: "good")
    with registered(w=fake):
        out = cli("loop", "--model", "fake:w")
    assert out.exit_code == 10, out.output
    assert "judge breaker: 3 judge errors in a row" in out.stderr  # a message for people
    assert "quest.prepare: OSError: dictionary file missing" in out.stderr
    assert len(fake.calls) == 3
    recorded = attempts(folder)
    assert [kind for _, kind, _, _ in recorded] == ["judge_error"] * 3
    assert all(state is State.TODO and tries == 0 for _, _, state, tries in recorded)
    assert items(folder) == [(State.TODO, 0)] * 3
    assert not (folder / "always-results.jsonl").exists()


def test_the_judge_breaker_is_set_on_the_command_line(folder: Path, cli: Cli) -> None:
    with registered(w=FakeBackend(lambda call: "good")):
        out = cli("loop", "--model", "fake:w", "--judge-breaker", "5", "--json")
    assert out.exit_code == 10, out.output
    summary = json.loads(out.stdout.splitlines()[-1])
    assert (summary["reason"], summary["judge_errors"], summary["judged"]) == (
        "judge-breaker",
        5,
        0,
    )
    assert sum(summary["locked"].values()) == 0
    assert len(attempts(folder)) == 5 and items(folder) == [(State.TODO, 0)] * 3
    bad = cli("loop", "--model", "fake:w", "--judge-breaker", "0")
    assert bad.exit_code == 2 and "0 is not in the range" in bad.output


def test_judge_errors_between_judged_turns_do_not_trip_the_breaker(folder: Path, cli: Cli) -> None:
    """The breaker counts judge errors in a row; a judged turn resets it."""
    make_ledger(folder / "tiny.reins.db")
    answers = {k: ["explode", "explode", "good"] for k in ("a", "b", "c")}
    with registered(w=FakeBackend(answers)):
        out = cli("loop", "--model", "fake:w", "--json", quest=TINY_REF)
    assert out.exit_code == 0, out.output
    summary = json.loads(out.stdout.splitlines()[-1])
    assert (summary["reason"], summary["judge_errors"], summary["judged"]) == ("done", 6, 3)
    assert items(folder, "tiny.reins.db") == [(State.PASS, 0)] * 3
    kinds = [kind for _, kind, _, _ in attempts(folder, "tiny.reins.db")]
    assert kinds == ["judge_error", "judge_error", "judged"] * 3


@pytest.mark.parametrize("depth", [1_988, 10_000])
def test_a_deeply_nested_answer_is_the_generators_fail_not_a_judge_error(depth: int) -> None:
    """reins' own quest refuses what its decoder cannot read: a hostile answer must not pass
    itself off as the judge's failure and so escape being charged a try."""
    from reins.quests.emails import quest as emails

    item = Item(key="k", state=State.TODO, tries=0, payload=next(iter(emails.seed([])))[1])
    for answer in ("[" * depth + "]" * depth, '{"addresses":' + "[" * depth + "]" * depth + "}"):
        v, _ = judge(emails, item, answer)
        assert isinstance(v, Verdict), v
        assert (v.outcome, v.root_cause) == (Outcome.FAIL, "json-shape")
