"""Retry policies as schedules: a step per answer, a declared temperature, recorded and replayed."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from reins import Quest, SQLiteStore
from reins.errors import ConfigError
from reins.loop import LoopOptions, TextGenerator, run
from reins.packs.humaneval.checks import expectation
from reins.retry import RetryStep, canonical_retry, parse_retry
from reins.store import Attempt, Item, State
from reins.testing import FakeBackend
from reins.turn import compose
from reins.turn.compose import FEEDBACK_HEADER
from tests.kit import TINY, Cli
from tests.kit.loopkit import fail, loop, make_ledger, registered


def test_a_schedule_reads_as_one_step_per_answer_the_last_repeating() -> None:
    policy = parse_retry(" fresh , facts @ 0.80")
    assert policy.steps == (RetryStep("fresh"), RetryStep("facts", 0.8))
    assert str(policy) == "fresh,facts@0.8" == canonical_retry("fresh,facts@0.80")
    assert [str(policy.step(r)) for r in (1, 2, 3, 9)] == ["fresh"] + ["facts@0.8"] * 3
    assert policy.temperatures and not parse_retry("facts").temperatures


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("sideways", "unknown retry policy 'sideways'"),
        ("fresh,sideways", "step 'sideways' of 'fresh,sideways'"),
        ("fresh,,facts", "step '' of 'fresh,,facts'"),
        ("facts@hot", "the temperature after @ in 'facts@hot' must be a number from 0 to 2"),
        ("facts@2.5", "must be a number from 0 to 2"),
        ("facts@nan", "must be a number from 0 to 2"),
        ("facts@-1", "must be a number from 0 to 2"),
        ("", "a retry policy is FEEDBACK[@TEMPERATURE]"),
    ],
)
def test_a_bad_policy_is_refused_naming_the_step(text: str, said: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_retry(text)
    assert said in str(caught.value)


def test_the_quest_and_the_options_keep_the_canonical_form_and_refuse_a_bad_one() -> None:
    assert dataclasses.replace(TINY, retry="fresh, facts@0.50").retry == "fresh,facts@0.5"
    assert LoopOptions(retry="facts+previous @1").retry == "facts+previous@1"
    with pytest.raises(ConfigError, match=r"quest tiny: retry must be one of .*'facts@x'"):
        dataclasses.replace(TINY, retry="facts@x")
    with pytest.raises(ConfigError, match="unknown retry policy 'often'"):
        LoopOptions(retry="often")


def _failed_once(tries: int) -> tuple[Item, list[Attempt]]:
    log = [fail(t) for t in range(1, tries + 1)]
    return Item("a", State.TODO, tries, {"word": "a"}, turns=tries), log


def test_compose_takes_the_step_of_the_answer_it_makes() -> None:
    policy = "fresh,facts@0.9"
    first = compose(TINY, Item("a", State.TODO, 0, {"word": "a"}), [], policy=policy)
    second = compose(TINY, *_failed_once(1), policy=policy)
    third = compose(TINY, *_failed_once(2), policy=policy)
    assert first.temperature is None and second.temperature is None  # the backend's own
    assert FEEDBACK_HEADER not in second.user and second.user == first.user  # fresh
    assert FEEDBACK_HEADER in third.user and third.temperature == 0.9  # facts@0.9
    # the first answer is the same call under every policy: its text and its sampling
    for other in ("facts", "facts+previous@1.2", "fresh@0.7"):
        same = compose(TINY, Item("a", State.TODO, 0, {"word": "a"}), [], policy=other)
        assert (same.user, same.temperature) == (first.user, None)


def test_the_loop_samples_each_retry_as_declared_and_records_it(tmp_path: Path) -> None:
    path = make_ledger(tmp_path / "t.reins.db", keys=("a",))
    fake = FakeBackend(["bad", "bad", "good"])
    summary = loop(path, fake, retry="fresh,facts@0.9")
    assert summary.turns == 3
    calls = fake.calls_for("a")
    assert [c.prompt.temperature for c in calls] == [None, None, 0.9]
    assert [FEEDBACK_HEADER in c.prompt.user for c in calls] == [False, False, True]
    with SQLiteStore.open(path) as led:
        item, log = led.snapshot("a")
    assert item.state is State.PASS and [a.policy for a in log] == ["fresh,facts@0.9"] * 3
    assert [a.notes.temperature for a in log] == [None, None, 0.9]
    # replay stays deterministic: from the recorded policy and the log before each turn, the
    # same prompt (text and temperature) comes back, whatever the item's tries are now
    for n, attempt in enumerate(log):
        again = compose(TINY, dataclasses.replace(item, turns=n), log[:n], policy=attempt.policy)
        assert again.digest() == attempt.prompt_digest
        assert again.temperature == attempt.notes.temperature
    # the item's page composes each turn again from the recorded schedule: it matches
    from reins.web.timeline import timeline

    with SQLiteStore.open(path) as led:
        shown = timeline(led, TINY, "a")
    assert [t.prompt_matches for t in shown.turns] == [True, True, True]


class _FixedTemperature(FakeBackend):
    """A backend that samples at its own temperature only (an HTTP batch API, say)."""

    def __init__(self) -> None:
        super().__init__(["good"])
        self.takes_temperature = False


def test_a_declared_temperature_a_backend_cannot_take_is_refused_before_any_call(
    tmp_path: Path,
) -> None:
    path = make_ledger(tmp_path / "t.reins.db", keys=("a",))
    fixed = _FixedTemperature()
    with SQLiteStore.open(path) as led, pytest.raises(ConfigError, match="declares a temperature"):
        run(led, TINY, TextGenerator(fixed), options=LoopOptions(retry="facts@0.8"))
    assert fixed.calls == []
    loop(path, fixed, retry="facts")  # without one it runs
    assert len(fixed.calls) == 1


def test_the_cli_takes_a_schedule_and_refuses_a_bad_one_as_a_usage_error(
    tmp_path: Path, cli: Cli
) -> None:
    make_ledger(tmp_path / "tiny.reins.db", keys=("a",))
    fake = FakeBackend(["bad", "good"])
    with registered(w=fake):
        out = cli("loop", "--model", "fake:w", "--retry", "facts+previous , fresh@1.1")
        bad = cli("loop", "--model", "fake:w", "--retry", "facts,often")
    assert out.exit_code == 0, out.output
    assert "step 'often' of 'facts,often'" in bad.stderr and bad.exit_code == 2
    with SQLiteStore.open(tmp_path / "tiny.reins.db") as led:
        assert {a.policy for a in led.snapshot("a")[1]} == {"facts+previous,fresh@1.1"}


def test_a_humaneval_fact_says_behaviour_never_the_tests_code() -> None:
    assert expectation("assert candidate(3.5) == 0.5", "f(3.5)") == "f(3.5) returns 0.5"
    assert expectation("assert abs(candidate([1.0]) - 2.0/3.0) < 1e-6", "f([1.0])") == (
        "f([1.0]) returns 2.0 / 3.0 (within 1e-06)"
    )
    # a conversion applied to both sides is the tests' way of comparing, not a type wanted
    assert expectation("assert tuple(candidate([2, 1])) == tuple([1, 2])", "f([2, 1])") == (
        "f([2, 1]) returns [1, 2]"
    )
    assert expectation("assert set(candidate(3)) == set([3, 1])", "f(3)") == (
        "f(3) returns [3, 1] in any order"
    )
    # one side converted, the other not: the literal as written (a tuple is wanted)
    assert (
        expectation("assert candidate([2]) == tuple([2])", "f([2])") == "f([2]) returns tuple([2])"
    )
    assert expectation("assert tuple(candidate([2])) == list([2])", "f([2])") == (
        "f([2]) returns list([2])"
    )
    assert expectation("assert not candidate('x')", "f('x')") == "f('x') returns a false value"
    # a check that names the tests' own helpers or variables is said in words, not pasted
    said = expectation("assert candidate(x) == sort_third(x)", "f([3])")
    assert said.startswith("f([3]) returns what the docstring asks for") and "sort" not in said


def test_a_quest_written_with_a_schedule_loads(tmp_path: Path) -> None:
    quest: Quest = dataclasses.replace(TINY, retry="fresh,facts")
    assert (
        compose(quest, *_failed_once(1)).user
        == compose(TINY, *_failed_once(1), policy="fresh").user
    )


def test_a_batch_round_refuses_a_declared_temperature() -> None:
    from reins.loop.generator import samples_as_told

    fake = TextGenerator(FakeBackend(["good"]))
    samples_as_told(fake, "fresh,facts@0.8")  # one call at a time: taken
    samples_as_told(fake, "fresh,facts", batch=True)  # no temperature: nothing to refuse
    with pytest.raises(ConfigError, match="which a batch round cannot take per call"):
        samples_as_told(fake, "fresh,facts@0.8", batch=True)


def test_reins_log_says_the_temperature_a_retry_sampled_at(tmp_path: Path, cli: Cli) -> None:
    make_ledger(tmp_path / "tiny.reins.db", keys=("a",))
    with registered(w=FakeBackend(["bad", "good"])):
        assert cli("loop", "--model", "fake:w", "--retry", "facts@0.7").exit_code == 0
    out = cli("log", "a").output
    turns = [line for line in out.splitlines() if line.startswith("turn ")]
    assert "temperature" not in turns[0]
    assert "via fake at temperature 0.7 (facts@0.7)" in turns[1]
