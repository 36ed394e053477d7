"""A run's own counters, and what the loop reports from them: turn events, status, summary.

The ledger's counts say where the quest stands; the tally says what this run did (turns,
errors, locks, tokens, cost), which budgets read and the summary prints.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from reins.gate.wording import judged_answer
from reins.loop.events import Status, StopReason, Summary, TurnEvent, some
from reins.loop.options import Budget
from reins.store.export import Exported
from reins.store.model import AttemptKind, State, Stats
from reins.turn.record import Recorded

if TYPE_CHECKING:
    from reins.store.lockfault import LockFault


@dataclass(slots=True)
class Tally:
    """What one loop run has done so far."""

    turns: int = 0
    judged: int = 0
    errors: int = 0
    judge_errors: int = 0
    escalated: int = 0
    turns_started: int = 0
    items_started: int = 0
    in_flight: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    unpriced: int = 0  # turns that recorded tokens and no cost (their model has no price)
    # Generation errors recorded after a hard stop: coding agents killed by it (a text call in
    # flight is dropped instead, never recorded)
    cut_short: int = 0
    consecutive_errors: int = 0
    consecutive_judge_errors: int = 0
    # The items of the generation errors counted in consecutive_errors: the breaker trips on
    # how many there are, so one stuck item alone never trips it (it is set aside instead).
    erring: set[str] = field(default_factory=set)
    # Whether the generator answered once in this run (a judged turn or a judge error), and
    # whether the last generation error found nothing answering at all: together, a backend
    # that is not running, which the breaker stops at once (see reins.loop.breakers).
    answered: bool = False
    unreachable: bool = False
    locked: Counter[str] = field(default_factory=Counter)
    unexported: int = 0
    # What the run's exports wrote and refused; ``+=`` adds an export's to it.
    exported: Exported = field(default_factory=Exported)
    sandbox: str | None = None  # how a coding quest's agents were confined (the workshop's)

    def count(
        self, recorded: Recorded, escalated_by: str | None, *, unreachable: bool = False
    ) -> None:
        """Count one recorded turn (``unreachable``: a generation error where nothing
        answered)."""
        a, item = recorded.attempt, recorded.item
        self.turns += 1
        self.unreachable = unreachable and a.kind is AttemptKind.GENERATION_ERROR
        if a.kind is not AttemptKind.GENERATION_ERROR:
            self.answered = True
        if a.judged:
            self.judged += 1
            self.consecutive_errors = self.consecutive_judge_errors = 0
            self.erring.clear()
        elif a.kind is AttemptKind.JUDGE_ERROR:
            self.judge_errors += 1
            self.consecutive_judge_errors += 1
            self.consecutive_errors = 0  # the generator answered
            self.erring.clear()
        else:
            self.errors += 1
            self.consecutive_errors += 1
            self.erring.add(item.key)
        if escalated_by is not None:
            self.escalated += 1
        self.tokens_in += a.usage.input_tokens or 0
        self.tokens_out += a.usage.output_tokens or 0
        self.cost += a.usage.cost or 0.0
        if a.usage.cost is None and (a.usage.input_tokens or a.usage.output_tokens):
            self.unpriced += 1
        if item.state.terminal:
            self.locked[item.state.value] += 1
            self.unexported += 1

    def exported_now(self, done: Exported) -> tuple[LockFault, ...]:
        """Add an export's work to the run's: the locks it refused that none before did."""
        known = {f.key for f in self.exported.refused}
        self.exported += done
        return tuple(f for f in done.refused if f.key not in known)

    def budget_spent(self, budget: Budget) -> StopReason | None:
        """The budget this run has used up, if any."""
        if budget.max_turns is not None and self.turns_started >= budget.max_turns:
            return StopReason.MAX_TURNS
        if budget.max_tokens is not None and self.tokens_in + self.tokens_out >= budget.max_tokens:
            return StopReason.MAX_TOKENS
        if budget.max_cost is not None and self.cost >= budget.max_cost:
            return StopReason.MAX_COST
        return None

    def status(self, stats: Stats | None, elapsed: float) -> Status:
        return Status(
            total=stats.total if stats else 0,
            counts=dict(stats.counts) if stats else {},
            turns=self.turns,
            judged=self.judged,
            generation_errors=self.errors,
            judge_errors=self.judge_errors,
            in_flight=self.in_flight,
            input_tokens=self.tokens_in,
            output_tokens=self.tokens_out,
            cost=self.cost,
            elapsed=elapsed,
            unpriced=self.unpriced,
        )

    def summary(
        self,
        stats: Stats | None,
        reason: StopReason | None,
        message: str,
        *,
        signal: str | None,
        budget: Budget,
        elapsed: float,
        set_aside: tuple[str, ...] = (),
        held: str = "",
    ) -> Summary:
        """How the run ended: the stop reason, or what the ledger says when none was given
        (``held``: which items other drivers hold, when it gave up waiting for them)."""
        remaining = stats.remaining if stats else 0
        if remaining == 0 and (reason is None or not reason.hard):
            reason, message = StopReason.DONE, "every item is locked"
        if reason is None:
            if budget.max_items is not None and self.items_started >= budget.max_items:
                reason, message = StopReason.MAX_ITEMS, f"took up {budget.max_items} item(s)"
            elif set_aside:
                reason = StopReason.SET_ASIDE
                message = (
                    f"{remaining} item(s) left; set aside this run after generation errors in a "
                    f"row: {some(set_aside)}. They are TODO, their failures used unchanged: see "
                    "why with `reins log KEY`, then run again"
                )
            else:
                reason = StopReason.LEASED
                held = held or f"{remaining} item(s) left, all leased to other drivers"
                message = f"{held}; run again when they are free"
        elif reason is StopReason.INTERRUPTED:
            message = stopped_text(signal, self.cut_short)
        return Summary(
            reason=reason,
            message=message,
            elapsed=elapsed,
            turns=self.turns,
            judged=self.judged,
            generation_errors=self.errors,
            judge_errors=self.judge_errors,
            items=self.items_started,
            locked=dict(self.locked),
            escalated=self.escalated,
            input_tokens=self.tokens_in,
            output_tokens=self.tokens_out,
            cost=self.cost,
            total=stats.total if stats else 0,
            remaining=remaining,
            exported=self.exported.count,
            signal=signal,
            set_aside=set_aside,
            sandbox=self.sandbox,
            refused=tuple(f.key for f in self.exported.refused),
            unpriced=self.unpriced,
        )


def stopped_text(signal: str | None, cut_short: int) -> str:
    """What a run stopped by a signal (or a stop request) did with its turns in flight: text
    calls dropped, not recorded; coding agents killed, each turn recorded as a generation
    error (``cut_short`` of them)."""
    by = f" by {signal}" if signal else ""
    if not cut_short:
        return f"stopped{by}: turns in flight were dropped, none half-recorded, leases released"
    return (
        f"stopped{by}: {cut_short} turn(s) in flight were cut short, their agents killed, and "
        "recorded as generation errors (no try used; what they spent is kept); none "
        "half-recorded, leases released"
    )


def budget_message(budget: Budget, reason: StopReason, *, killed: bool = False) -> str:
    """Why the run stopped at a cap; ``killed``: its coding agents were killed at it."""
    cap = {
        StopReason.MAX_TURNS: f"{budget.max_turns} turn(s)",
        StopReason.MAX_TOKENS: f"{budget.max_tokens} token(s)",
        StopReason.MAX_COST: f"a cost of {budget.max_cost}",
    }[reason]
    if killed:
        return (
            f"the budget of {cap} is spent; the agents in flight were killed at it and their "
            "turns recorded as generation errors"
        )
    return f"the budget of {cap} is spent; turns in flight were finished and recorded"


def turn_event(
    recorded: Recorded, *, max_tries: int, backend: str, seed: int, escalated_by: str | None
) -> TurnEvent:
    """The ``--json`` event of one recorded turn."""
    a, item = recorded.attempt, recorded.item
    return TurnEvent(
        key=item.key,
        turn=a.turn,
        kind=a.kind.value,
        outcome=a.outcome,
        state=item.state.value,
        tries=item.tries,
        max_tries=max_tries,
        root_cause=a.root_cause,
        backend=backend,
        escalated_by=escalated_by,
        seed=seed,
        policy=a.policy,
        prompt_digest=a.prompt_digest or "",
        input_tokens=a.usage.input_tokens,
        output_tokens=a.usage.output_tokens,
        cost=a.usage.cost,
        latency=a.usage.latency,
        error=a.error,
        feedback=a.feedback,
        answer=judged_answer(a.outcome, a.tries_after) if a.judged else None,
    )


def move_to_locked(stats: Stats | None, state: State) -> None:
    """Keep the display's counts current between refreshes from the ledger."""
    if stats is not None and state.terminal:
        counts = stats.counts
        counts[State.TODO] = max(0, counts.get(State.TODO, 0) - 1)
        counts[state] = counts.get(state, 0) + 1
