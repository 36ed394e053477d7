"""Record: the only irreversible step. The record table decides; the ledger writes it at once."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reins.gate import Verdict, render
from reins.ledger import Attempt, AttemptKind, Item, State, Transition
from reins.ledger.sqlite import Ledger
from reins.quest import Quest
from reins.turn.table import TABLE


@dataclass(frozen=True, slots=True)
class Usage:
    """What a generation cost, when the generator reports it."""

    backend: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost: float | None = None
    latency: float | None = None


@dataclass(frozen=True, slots=True)
class Recorded:
    """A recorded turn: the item after it, the attempt appended, and the verdict (if judged)."""

    item: Item
    attempt: Attempt
    verdict: Verdict | None

    @property
    def text(self) -> str:
        """What ``submit`` prints; for a FAIL, exactly what the next prompt feeds back."""
        return (
            self.attempt.feedback or f"{self.item.key} -> generation error: {self.attempt.error}\n"
        )


def record_verdict(
    ledger: Ledger,
    quest: Quest,
    key: str,
    verdict: Verdict,
    submission: str,
    *,
    driver: str,
    owner: str | None = None,
    policy: str = "facts",
    prompt_digest: str | None = None,
    usage: Usage | None = None,
    started_at: str | None = None,
    expected_turns: int | None = None,
    extra: Mapping[str, Any] | None = None,
) -> Recorded:
    """Record a judged attempt. Raises NotTodo for a locked item, LeaseConflict on a race.

    ``owner`` is the lease holder when it is not ``driver``; ``extra`` is kept on the attempt
    (the loop notes its driver kind, call seed and escalation there).
    """
    use = usage or Usage()

    def decide(item: Item) -> tuple[Transition, Attempt]:
        row = TABLE.lookup(AttemptKind.JUDGED, verdict.outcome.value, item.tries, quest.max_tries)
        tries = item.tries + row.tries_delta
        text = render(key, verdict, state=row.state, tries=tries, max_tries=quest.max_tries)
        attempt = _attempt(
            AttemptKind.JUDGED,
            outcome=verdict.outcome.value,
            root_cause=verdict.root_cause,
            facts=tuple(f.to_dict() for f in verdict.facts),
            feedback=text,
            submission=submission,
            policy=policy,
            prompt_digest=prompt_digest,
            usage=use,
            started_at=started_at,
            extra=extra,
        )
        return Transition(row.state, row.tries_delta), attempt

    item, attempt = ledger.record(
        key, decide, driver=driver, owner=owner, expected_turns=expected_turns
    )
    return Recorded(item, attempt, verdict)


def record_generation_error(
    ledger: Ledger,
    quest: Quest,
    key: str,
    error: str,
    *,
    driver: str,
    owner: str | None = None,
    policy: str = "facts",
    prompt_digest: str | None = None,
    usage: Usage | None = None,
    started_at: str | None = None,
    expected_turns: int | None = None,
    extra: Mapping[str, Any] | None = None,
) -> Recorded:
    """Record that the generator failed: logged, no try consumed, nothing locked."""
    use = usage or Usage()

    def decide(item: Item) -> tuple[Transition, Attempt]:
        row = TABLE.lookup(AttemptKind.GENERATION_ERROR, None, item.tries, quest.max_tries)
        attempt = _attempt(
            AttemptKind.GENERATION_ERROR,
            error=error,
            policy=policy,
            prompt_digest=prompt_digest,
            usage=use,
            started_at=started_at,
            extra=extra,
        )
        return Transition(row.state, row.tries_delta), attempt

    item, attempt = ledger.record(
        key, decide, driver=driver, owner=owner, expected_turns=expected_turns
    )
    return Recorded(item, attempt, None)


def _attempt(
    kind: AttemptKind,
    *,
    usage: Usage,
    outcome: str | None = None,
    root_cause: str | None = None,
    facts: tuple[dict[str, str], ...] = (),
    feedback: str = "",
    submission: str | None = None,
    error: str | None = None,
    policy: str,
    prompt_digest: str | None,
    started_at: str | None,
    extra: Mapping[str, Any] | None,
) -> Attempt:
    # key, turn, driver, state_after, tries_after and recorded_at are stamped by the ledger.
    return Attempt(
        key="",
        turn=0,
        kind=kind,
        driver="",
        state_after=State.TODO,
        tries_after=0,
        outcome=outcome,
        root_cause=root_cause,
        facts=facts,
        feedback=feedback,
        submission=submission,
        error=error,
        policy=policy,
        backend=usage.backend,
        prompt_digest=prompt_digest,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cost=usage.cost,
        latency=usage.latency,
        started_at=started_at,
        extra=dict(extra) if extra else {},
    )
