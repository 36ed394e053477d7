"""Retry policies compared on the same items: each on its own ledger, the user's untouched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reins import SQLiteStore
from reins.errors import ConfigError
from reins.loop import LoopOptions, TextGenerator
from reins.loop.compare import compare_retry
from reins.loop.paired import recommend, sign_test
from reins.store.owner import Owner
from reins.store.query import PageQuery
from reins.store.walk import passes_by_try
from reins.testing import FakeBackend, FakeCall
from tests.kit import TINY, Cli
from tests.kit.loopkit import make_ledger, registered

FAST = LoopOptions(concurrency=2, error_backoff=0.0, export_every=0.05)


def learner() -> FakeBackend:
    """Answers 'bad' until the prompt quotes the gate's facts about 'bad'; then 'good'.

    Under ``fresh`` it never sees them, so it never passes; item "c" is answered 'meh'
    (REVIEW) at once under every policy.
    """

    def answer(call: FakeCall) -> str:
        if call.key == "c":
            return "meh"
        return "good" if "not-bad" in call.prompt.user else "bad"

    return FakeBackend(answer)


def text_learner() -> TextGenerator:
    return TextGenerator(learner())


def test_policies_differ_by_what_the_retry_shows(tmp_path: Path) -> None:
    items = [(k, {"word": k}) for k in ("a", "b", "c")]
    runs = compare_retry(TINY, items, text_learner, ["facts", "fresh"], options=FAST)
    by = {r.policy: r for r in runs}
    assert by["facts"].passes == (0, 2, 0)
    assert by["facts"].cumulative == (0, 2, 2)
    assert by["fresh"].passes == (0, 0, 0)
    assert by["fresh"].done == 2 and by["facts"].done == 0
    assert by["facts"].review == by["fresh"].review == 1
    assert by["facts"].turns == 2 * 2 + 1
    assert by["fresh"].turns == 3 * 2 + 1
    assert by["facts"].to_json()["cumulative"] == [0, 2, 2]


def test_the_users_ledger_is_not_touched(tmp_path: Path) -> None:
    path = make_ledger(tmp_path / "t.reins.db")
    before = path.read_bytes()
    with SQLiteStore.open(path) as led:
        items = [(i.key, i.payload) for i in led.page(PageQuery(limit=10)).items]
    compare_retry(TINY, items, text_learner, ["facts"], options=FAST)
    assert path.read_bytes() == before


def test_passes_by_try_counts_the_try_that_passed(tmp_path: Path) -> None:
    path = make_ledger(tmp_path / "t.reins.db", keys=("a", "b"))
    with SQLiteStore.open(path) as led:
        assert passes_by_try(led, 3) == (0, 0, 0)


def test_unknown_policy_and_no_items_are_refused() -> None:
    with pytest.raises(ConfigError, match="unknown retry policy sideways"):
        compare_retry(TINY, [("a", None)], text_learner, ["sideways"])
    with pytest.raises(ConfigError, match="no items"):
        compare_retry(TINY, [], text_learner, ["facts"])


# -- the command: reins report ---------------------------------------------------------------


@pytest.fixture
def here(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.reins.db"
    # made for the quest, as `reins scan` makes it: opening it records nothing more
    with SQLiteStore.open(path, create=True, owner=Owner("tiny", "tests.kit:TINY")) as led:
        led.add((k, {"word": k}) for k in "abc")
    return path


def test_report_shows_passes_by_try_after_a_loop(here: Path, cli: Cli) -> None:
    with registered(learner=learner()):
        assert cli("loop", "--model", "fake:learner").exit_code == 0
    out = cli("report")
    assert out.exit_code == 0, out.output
    assert "passes on answer  1: 0  2: 2  3: 0   (0 → 2 → 2 of 3)" in out.output
    data = json.loads(cli("report", "--json").output)
    assert data["passes_by_try"] == {"1": 0, "2": 2, "3": 0}


def test_report_retry_compare_runs_each_policy_and_leaves_the_ledger(here: Path, cli: Cli) -> None:
    before = here.read_bytes()
    with registered(learner=learner()):
        out = cli(
            "report", "--retry-compare", "facts", "--retry-compare", "fresh", "-m", "fake:learner"
        )
        data = json.loads(
            cli(
                "report", "--retry-compare", "facts", "-m", "fake:learner", "--items", "1", "--json"
            ).output
        )
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert lines[0] == "3 item(s), model fake:learner: passes after each answer (DONE: unsolved)"
    assert lines[2].split() == ["facts", "0", "2", "2", "1", "0", "5"]
    assert lines[3].split() == ["fresh", "0", "0", "0", "1", "2", "7"]
    assert data["runs"][0]["items"] == 1 and data["runs"][0]["cumulative"] == [0, 1, 1]
    assert here.read_bytes() == before


def test_report_retry_compare_needs_a_model(here: Path, cli: Cli) -> None:
    out = cli("report", "--retry-compare", "facts")
    assert out.exit_code == 2 and "needs --model" in out.output
    out = cli("report", "--retry-compare", "sideways", "-m", "fake:x")
    assert out.exit_code == 2 and "sideways" in out.output


# -- item by item: the paired comparison and the recommendation -------------------------------


def test_the_sign_test_is_two_sided_and_exact() -> None:
    assert sign_test(0, 0) == 1.0
    assert sign_test(5, 0) == sign_test(0, 5) == 0.0625
    assert sign_test(6, 1) == 0.125
    assert sign_test(2, 1) == 1.0


def test_each_run_says_which_items_it_solved_on_which_answer() -> None:
    items = [(k, {"word": k}) for k in ("a", "b", "c")]
    runs = compare_retry(TINY, items, text_learner, ["fresh", "fresh,facts@0.5"], options=FAST)
    by = {r.policy: r for r in runs}
    assert by["fresh"].solved == ()
    # answer 2 is a fresh sample (still 'bad'), answer 3 sees the facts
    assert by["fresh,facts@0.5"].solved == (("a", 3), ("b", 3))
    advice = recommend(runs)
    assert advice.policy == "fresh,facts@0.5" and advice.solved == 2
    assert advice.against is not None
    assert (advice.against.only_policy, advice.against.only_baseline) == (("a", "b"), ())
    assert advice.against.p_value == 0.5 and "no clear difference" in advice.said
    assert recommend(runs, answers=2).policy == "fresh"  # a tie by answer 2: fewer turns


def test_report_retry_compare_pairs_each_policy_with_fresh_and_recommends(
    here: Path, cli: Cli
) -> None:
    with registered(learner=learner()):
        out = cli(
            "report", "--retry-compare", "fresh", "--retry-compare", "facts", "-m", "fake:learner"
        )
        data = json.loads(
            cli("report", "--retry-compare", "fresh", "--retry-compare", "facts", "-m",
                "fake:learner", "--json").output
        )  # fmt: skip
        bad = cli("report", "--retry-compare", "facts@warm", "-m", "fake:learner")
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert lines[-2] == (
        "facts against fresh, by answer 3: solved alone 2 (a, b) against 0 (none), "
        "sign test p = 0.500"
    )
    assert lines[-1].startswith("recommended: --retry facts (2 solved by answer 3; against fresh")
    assert data["recommendation"]["policy"] == "facts"
    assert data["recommendation"]["against"]["only_policy"] == ["a", "b"]
    assert data["runs"][1]["solved"] == {"a": 2, "b": 2}
    assert bad.exit_code == 2 and "facts@warm" in bad.output
