"""A tripped breaker says whose failure it was: reins' own folders (an item's workspace, a
judge's tree: a full disk, a folder it cannot write) are not the backend's or the gate's, and
the message must not send a person to look there."""

from __future__ import annotations

import pytest

from reins.loop.breakers import tripped
from reins.loop.events import StopReason
from reins.loop.options import LoopOptions
from reins.loop.recording import JUDGE_TREE
from reins.loop.tally import Tally
from reins.store.model import Attempt, AttemptKind, State

OPTIONS = LoopOptions(breaker=3, judge_breaker=3)


def attempt(kind: AttemptKind, error: str) -> Attempt:
    return Attempt("k", 1, kind, "loop", State.TODO, 0, "2026-12-06T00:00:00Z", error=error)


def tally_of(kind: AttemptKind) -> Tally:
    tally = Tally(answered=True)
    if kind is AttemptKind.JUDGE_ERROR:
        tally.consecutive_judge_errors = 3
    else:
        tally.consecutive_errors, tally.erring = 3, {"a", "b", "c"}
    return tally


@pytest.mark.parametrize(
    ("kind", "error", "said", "not_said"),
    [
        (AttemptKind.GENERATION_ERROR, "workspace: [Errno 28] No space left on device",
         "could not make or read an item's workspace", "Check the backend"),
        (AttemptKind.GENERATION_ERROR, "openai: 503 Service Unavailable",
         "Check the backend", "workspace"),
        (AttemptKind.JUDGE_ERROR, f"{JUDGE_TREE}: the judge's tree: [Errno 28] No space left",
         "could not make the judge's tree", "fix the quest's gate"),
        (AttemptKind.JUDGE_ERROR, "rule x: ZeroDivisionError", "fix the quest's gate",
         "judge's tree"),
    ],
)  # fmt: skip
def test_the_breaker_s_advice_names_whose_failure_it_was(
    kind: AttemptKind, error: str, said: str, not_said: str
) -> None:
    found = tripped(tally_of(kind), OPTIONS, attempt(kind, error))
    assert found is not None
    reason, message = found
    assert reason in (StopReason.BREAKER, StopReason.JUDGE_BREAKER)
    assert said in message and not_said not in message, message
