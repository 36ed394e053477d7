"""Retry policies compared on the same items: each on its own ledger, the user's untouched."""

from __future__ import annotations

from pathlib import Path

import pytest

from reins import SQLiteStore
from reins.errors import ConfigError
from reins.loop import LoopOptions
from reins.loop.compare import compare_retry, passes_by_try
from reins.testing import FakeBackend, FakeCall
from tests.conftest import TINY
from tests.loopkit import make_ledger

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


def test_policies_differ_by_what_the_retry_shows(tmp_path: Path) -> None:
    items = [(k, {"word": k}) for k in ("a", "b", "c")]
    runs = compare_retry(TINY, items, learner, ["facts", "fresh"], options=FAST)
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
        items = [(i.key, i.payload) for i in led.page(limit=10).items]
    compare_retry(TINY, items, learner, ["facts"], options=FAST)
    assert path.read_bytes() == before


def test_passes_by_try_counts_the_try_that_passed(tmp_path: Path) -> None:
    path = make_ledger(tmp_path / "t.reins.db", keys=("a", "b"))
    with SQLiteStore.open(path) as led:
        assert passes_by_try(led, 3) == (0, 0, 0)


def test_unknown_policy_and_no_items_are_refused() -> None:
    with pytest.raises(ConfigError, match="unknown retry policy sideways"):
        compare_retry(TINY, [("a", None)], learner, ["sideways"])
    with pytest.raises(ConfigError, match="no items"):
        compare_retry(TINY, [], learner, ["facts"])
