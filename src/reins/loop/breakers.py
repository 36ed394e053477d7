"""The breakers: when errors in a row stop a run, so that no item and no outage holds it hostage.

Errors use no try and lock nothing, so a run that meets only errors would spin forever. Two
breakers stop it: N judge errors in a row (the gate itself is broken), and generation errors on
N items in a row with no judged turn between them (the backend itself is down). One item whose
generation keeps failing alone (a prompt too long for the model, a refusal) never trips the
second: after ``set_aside_after`` errors in a row it is set aside for the run instead, and the
other items go on.
"""

from __future__ import annotations

from reins.loop.events import StopReason
from reins.loop.options import LoopOptions
from reins.loop.recording import JUDGE_TREE
from reins.loop.tally import Tally
from reins.store.model import Attempt, AttemptKind


def tripped(tally: Tally, options: LoopOptions, last: Attempt) -> tuple[StopReason, str] | None:
    """The stop reason and message when ``last`` (an error, already counted) trips a breaker."""
    if last.kind is AttemptKind.GENERATION_ERROR and never_answered(tally, options):
        return StopReason.BREAKER, (
            f"circuit breaker: the backend is not running (the first call of this run found "
            f"nothing answering: {last.error}). It counts as no answer and locked nothing; start "
            "the backend, then run the loop again."
        )
    if last.kind is AttemptKind.JUDGE_ERROR:
        count, breaker = tally.consecutive_judge_errors, options.judge_breaker
        what = f"judge breaker: {count} judge errors in a row"
        reason, advice = StopReason.JUDGE_BREAKER, _advice(last)
    else:
        count, breaker = len(tally.erring), options.breaker
        what = (
            f"circuit breaker: generation errors on {count} items in a row, "
            f"{tally.consecutive_errors} errors with no judged turn between them"
        )
        reason, advice = StopReason.BREAKER, _advice(last)
    if breaker is None or count < breaker:
        return None
    return reason, (
        f"{what} (the last: {last.error}). They count as no answers and locked nothing. "
        f"{advice}, "
        "then run the loop again."
    )


def _advice(last: Attempt) -> str:
    """What to look at, by whose the last error was: reins' own folders (an item's workspace,
    a judge's tree: a full disk, a folder it cannot write), else the gate or the backend."""
    error = last.error or ""
    if last.kind is AttemptKind.JUDGE_ERROR:
        if error.startswith(JUDGE_TREE) or "holds objects git did not make" in error:
            return (
                "reins could not make the judge's tree (not the gate's fault: the error says "
                "why, a full disk or a folder of reins' it cannot write); fix that"
            )
        return "The gate itself failed; fix the quest's gate"
    if error.startswith("workspace:"):
        return (
            "reins could not make or read an item's workspace (not the backend's fault: the "
            "error says why, a full disk or a folder it cannot write); fix that"
        )
    return "Check the backend"


def never_answered(tally: Tally, options: LoopOptions) -> bool:
    """Whether the last generation error found nothing answering (a refused connection, an
    unknown host, a CLI that cannot run) before the backend ever answered in this run: it is
    not running, and every other item would wait a minute of retries to learn the same. Once
    it has answered, a refusal is an outage mid-run, counted by the breaker like any error
    (the backend retries it first), so a backend that comes and goes is still worked."""
    return options.breaker is not None and tally.unreachable and not tally.answered


def sets_aside(options: LoopOptions, errors: int) -> bool:
    """Whether ``errors`` generation errors in a row on one item set it aside for the run."""
    return options.set_aside_after is not None and errors >= options.set_aside_after
