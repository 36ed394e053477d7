"""Compose is a pure function of (quest, item, log); the call seed of (key, turn)."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reins.store import Attempt, AttemptKind, Item, State
from reins.turn import Prompt, call_seed, compose
from reins.turn.compose import FEEDBACK_HEADER, PREVIOUS_HEADER, PREVIOUS_NOTE
from tests.kit import TINY
from tests.kit.loopkit import fail

ITEM = Item("a", State.TODO, 0, {"word": "a"})


def error(turn: int, text: str) -> Attempt:
    return Attempt(
        "a",
        turn,
        AttemptKind.GENERATION_ERROR,
        "d",
        State.TODO,
        0,
        "t",
        error=text,
        submission=text,
    )


logs = st.lists(
    st.one_of(
        st.builds(fail, st.integers(1, 3), st.sampled_from(["not-bad", "x"]), st.text(max_size=9)),
        st.builds(error, st.integers(1, 3), st.text(max_size=20)),
    ),
    max_size=6,
)


@given(log=logs, policy=st.sampled_from(["facts", "facts+previous", "fresh"]))
def test_the_same_log_gives_the_same_prompt(log: list[Attempt], policy: str) -> None:
    item = dataclasses.replace(ITEM, turns=len(log))
    first = compose(TINY, item, log, policy=policy)
    again = compose(TINY, item, [dataclasses.replace(a) for a in log], policy=policy)
    assert (first.system, first.user, first.key, first.turn) == (
        again.system, again.user, again.key, again.turn
    )  # fmt: skip
    assert first.turn == len(log) + 1 and first.seed == call_seed("a", len(log) + 1)


@given(log=logs, errors=st.lists(st.text(min_size=1, max_size=20), max_size=4))
def test_generation_errors_never_reach_a_prompt(log: list[Attempt], errors: list[str]) -> None:
    with_errors = log + [error(9, e) for e in errors]
    for policy in ("facts", "facts+previous", "fresh"):
        plain = compose(TINY, ITEM, log, policy=policy)
        noisy = compose(TINY, ITEM, with_errors, policy=policy)
        assert plain == noisy  # text equality: errors add nothing


def test_the_policies_compose_the_retry_differently() -> None:
    log = [fail(1, submission="bad answer")]
    facts = compose(TINY, ITEM, log, policy="facts")
    both = compose(TINY, ITEM, log, policy="facts+previous")
    fresh = compose(TINY, ITEM, log, policy="fresh")
    coached = "Say 'good' for a.\n\nNever answer 'bad'."
    assert facts.user == f"{coached}\n\n{FEEDBACK_HEADER}\n\n{log[0].feedback}"
    assert facts.system == "Answer in one word."
    # the failed answer shown as what failed, the facts after it (not it last, bare)
    assert both.user == (
        f"{coached}\n\n{PREVIOUS_HEADER}\n\nbad answer\n\n{PREVIOUS_NOTE}"
        f"\n\n{FEEDBACK_HEADER}\n\n{log[0].feedback}"
    )
    assert (fresh.system, fresh.user) == ("Answer in one word.", "Say 'good' for a.")
    assert compose(TINY, ITEM, log).user == facts.user  # the quest's default: facts


def test_prompts_are_equal_when_their_texts_are() -> None:
    assert Prompt("s", "u", key="a", turn=1) == Prompt("s", "u")
    assert Prompt("s", "u").digest() == Prompt("s", "u", key="b", turn=9).digest()


@pytest.mark.slow  # fresh interpreters
def test_the_call_seed_is_the_same_in_every_process() -> None:
    code = "from reins.turn import call_seed; print(call_seed('item-7', 3), call_seed('é', 1))"
    seen = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": salt},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for salt in ("1", "2", "random")
    }
    assert seen == {f"{call_seed('item-7', 3)} {call_seed('é', 1)}\n"}


@given(key=st.text(min_size=1, max_size=30), turn=st.integers(1, 10_000))
def test_the_call_seed_fits_31_bits_and_moves_with_the_turn(key: str, turn: int) -> None:
    seed = call_seed(key, turn)
    assert 0 <= seed < 2**31
    assert call_seed(key, turn) == seed


def test_the_call_seed_differs_between_turns_and_items() -> None:
    seeds = {call_seed(k, t) for k in ("a", "b", "c", "a1") for t in range(1, 50)}
    assert len(seeds) == 4 * 49


def test_the_two_feedback_headers_cannot_be_taken_for_each_other() -> None:
    assert not FEEDBACK_HEADER.startswith(PREVIOUS_HEADER)
    assert not PREVIOUS_HEADER.startswith(FEEDBACK_HEADER)
