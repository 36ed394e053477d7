"""Escalation is read from the log on every turn, so a restarted loop picks the same backend."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from reins import SQLiteStore
from reins.errors import BackendError
from reins.store import Attempt, AttemptKind, State
from reins.testing import FakeBackend
from reins.turn import choose, escalating_cause
from tests.kit import ESCALATING, ROOT, TINY
from tests.kit.loopkit import loop, make_ledger

# A submission that is not UTF-8 on the wire: a judged FAIL whose root cause is reins:submission.
NOT_UTF8 = "\udcff"


def attempt(
    kind: AttemptKind, outcome: str | None, cause: str | None, error: str | None = None
) -> Attempt:
    return Attempt(
        "a", 1, kind, "d", State.TODO, 0, "t", outcome=outcome, root_cause=cause, error=error
    )


def test_only_a_judged_fail_with_a_listed_root_cause_escalates() -> None:
    fail = attempt(AttemptKind.JUDGED, "FAIL", "not-bad")
    other = attempt(AttemptKind.JUDGED, "FAIL", "reins:submission")
    error = attempt(AttemptKind.GENERATION_ERROR, None, None)
    broken = attempt(AttemptKind.JUDGE_ERROR, None, None, "not-bad: RuntimeError: boom")
    assert escalating_cause([], {"not-bad"}) is None
    assert escalating_cause([error, other, broken], {"not-bad"}) is None
    assert choose([broken], {"not-bad"}, "weak", "strong") == ("weak", None)
    assert escalating_cause([other, fail, error], {"not-bad"}) == "not-bad"
    assert escalating_cause([fail], set()) is None
    assert choose([fail], {"not-bad"}, "weak", "strong") == ("strong", "not-bad")
    assert choose([fail], {"not-bad"}, "weak", None) == ("weak", None)
    assert choose([other], {"not-bad"}, "weak", "strong") == ("weak", None)


def test_an_item_moves_to_the_strong_backend_after_an_escalating_fail(tmp_path: Path) -> None:
    path = make_ledger(tmp_path / "t.reins.db")
    weak = FakeBackend(
        {"a": ["bad"], "b": ["explode", NOT_UTF8, "good"], "c": ["good"]}, name="weak"
    )
    strong = FakeBackend({"a": ["good"]}, name="strong")
    summary = loop(path, weak, ESCALATING, strong=strong)
    assert summary.remaining == 0 and summary.escalated == 1
    with SQLiteStore.open(path) as led:
        assert [a.usage.backend for a in led.snapshot("a")[1]] == ["weak", "strong"]
        assert led.snapshot("a")[1][1].notes.escalated_by == "not-bad"
        # A judge error, then a FAIL on a rule not listed: neither escalates.
        log = led.snapshot("b")[1]
        assert [a.kind.value for a in log] == ["judge_error", "judged", "judged"]
        assert [a.root_cause for a in log] == [None, "reins:submission", None]
        assert [a.usage.backend for a in log] == ["weak", "weak", "weak"]


@pytest.mark.slow  # the restarted loop is another process
def test_escalation_survives_a_restart(tmp_path: Path) -> None:
    path = make_ledger(tmp_path / "t.reins.db", ["a"])
    weak = FakeBackend({"a": ["bad"]}, name="weak")
    loop(path, weak, ESCALATING, strong=FakeBackend([], name="strong"), max_turns=1)
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from reins.errors import BackendError\n"
        "from reins.testing import FakeBackend\n"
        "from tests.kit import ESCALATING\n"
        "from tests.kit.loopkit import loop\n"
        "weak = FakeBackend(['good'], name='weak')\n"
        "strong = FakeBackend([BackendError('busy'), 'bad', 'good'], name='strong')\n"
        "loop(Path(sys.argv[1]), weak, ESCALATING, strong=strong)\n"
        "assert not weak.calls, 'the restarted loop went back to the weak backend'\n"
    )
    subprocess.run([sys.executable, "-c", script, str(path)], check=True, cwd=ROOT)
    with SQLiteStore.open(path) as led:
        item, log = led.snapshot("a")
        assert [a.usage.backend for a in log] == ["weak", "strong", "strong", "strong"]
        assert [a.kind.value for a in log][1] == "generation_error"
        assert item.state is State.PASS and item.tries == 2


def test_the_command_line_adds_rules_to_the_quests_own(tmp_path: Path) -> None:
    path = make_ledger(tmp_path / "t.reins.db", ["a", "b"])
    weak = FakeBackend({"a": [NOT_UTF8], "b": ["bad"]}, name="weak")
    strong = FakeBackend({"a": ["good"], "b": ["good"]}, name="strong")
    loop(path, weak, ESCALATING, strong=strong, escalate_on={"reins:submission"})
    with SQLiteStore.open(path) as led:
        for key, cause in (("a", "reins:submission"), ("b", "not-bad")):
            log = led.snapshot(key)[1]
            assert [a.usage.backend for a in log] == ["weak", "strong"]
            assert log[1].notes.escalated_by == cause


def test_judge_errors_never_escalate_whatever_is_listed(tmp_path: Path) -> None:
    """The gate failing says nothing about the generator: no stronger model is called for."""
    path = make_ledger(tmp_path / "t.reins.db", ["a"])
    weak = FakeBackend({"a": ["explode", "good"]}, name="weak")
    strong = FakeBackend([], name="strong")
    loop(path, weak, TINY, strong=strong, escalate_on={"quest.prepare", "reins:prepare"})
    assert not strong.calls
    with SQLiteStore.open(path) as led:
        item, log = led.snapshot("a")
        assert [a.kind.value for a in log] == ["judge_error", "judged"]
        assert [a.usage.backend for a in log] == ["weak", "weak"]
        assert item.state is State.PASS and item.tries == 0


def test_generation_errors_never_escalate(tmp_path: Path) -> None:
    path = make_ledger(tmp_path / "t.reins.db", ["a"])
    quest = dataclasses.replace(TINY, escalate_on=frozenset({"backend-error", ""}))
    weak = FakeBackend({"a": [BackendError("down"), "good"]}, name="weak")
    loop(path, weak, quest, strong=FakeBackend([], name="strong"))
    with SQLiteStore.open(path) as led:
        assert [a.usage.backend for a in led.snapshot("a")[1]] == ["weak", "weak"]
