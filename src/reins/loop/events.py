"""What a loop run reports: one event per recorded turn, one per item set aside, one per lock
its export refused, live counters, and the final summary."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any

from reins.store.model import State


class StopReason(StrEnum):
    """Why a run ended."""

    DONE = "done"  # no TODO item is left
    LEASED = "leased-elsewhere"  # items are left, all leased to other drivers
    SET_ASIDE = "set-aside"  # items are left that this run set aside (generation kept failing)
    MAX_ITEMS = "max-items"
    MAX_TURNS = "max-turns"
    MAX_TOKENS = "max-tokens"
    MAX_COST = "max-cost"
    BREAKER = "breaker"  # N generation errors in a row
    JUDGE_BREAKER = "judge-breaker"  # N judge errors in a row: the gate is broken
    INTERRUPTED = "interrupted"  # SIGINT, SIGTERM or a stop request
    ERROR = "error"  # a quest, ledger or reins failure

    @property
    def hard(self) -> bool:
        """Hard stops drop the generations in flight; soft ones let them finish."""
        return self in (
            StopReason.BREAKER,
            StopReason.JUDGE_BREAKER,
            StopReason.INTERRUPTED,
            StopReason.ERROR,
        )


@dataclass(frozen=True, slots=True)
class TurnEvent:
    """One recorded turn, as ``--json`` writes it. ``answer`` is the number of the answer a
    judged turn judged (None for an error: no answer), of ``answers_allowed`` (``max_tries``);
    ``failures_used`` is ``tries`` under its name."""

    key: str
    turn: int
    kind: str
    outcome: str | None
    state: str
    tries: int
    max_tries: int
    root_cause: str | None
    backend: str
    escalated_by: str | None
    seed: int
    policy: str
    prompt_digest: str
    input_tokens: int | None
    output_tokens: int | None
    cost: float | None
    latency: float | None
    error: str | None
    feedback: str
    answer: int | None = None

    def to_json(self) -> dict[str, Any]:
        extra = {"answers_allowed": self.max_tries, "failures_used": self.tries}
        return {"event": "turn", **asdict(self), **extra}


@dataclass(frozen=True, slots=True)
class AsideEvent:
    """An item set aside for the rest of the run: its generation failed ``errors`` times in a
    row (the last with ``error``), or, with ``errors`` 0, its own budget is spent (``error``
    says which). It stays TODO with ``tries`` (its failures used) unchanged."""

    key: str
    errors: int
    error: str | None
    tries: int
    max_tries: int

    def to_json(self) -> dict[str, Any]:
        extra = {"failures_used": self.tries, "answers_allowed": self.max_tries}
        return {"event": "set_aside", **asdict(self), **extra}


@dataclass(frozen=True, slots=True)
class RefusedEvent:
    """A locked item the run's export refused to write: no attempt produced its lock (the
    ledger was written by hand; ``reason`` says how, in the words of ``reins ledger check``)."""

    key: str
    state: str
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"event": "refused", **asdict(self)}


@dataclass(frozen=True, slots=True)
class BatchEvent:
    """What a batch job did: ``phase`` is ``sent``, ``resumed``, ``poll`` (the provider's
    status or counts changed), ``collected``, ``left`` (still running at the provider when the
    run stopped), ``discarded`` (never sent) or ``cancelled``.

    ``status`` and ``counts`` are the provider's own; ``done`` counts the results recorded of
    its ``requests``; ``elapsed`` the seconds since its requests were recorded.
    """

    phase: str
    job: int
    backend: str
    model: str
    batch_id: str | None
    status: str | None
    requests: int
    done: int
    counts: dict[str, int]
    elapsed: float
    message: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"event": "batch", **asdict(self)}


@dataclass(frozen=True, slots=True)
class ResultsEvent:
    """Trouble in an ended batch's results files, one event per kind and job: ``problem`` is
    ``repeated`` (a custom id read already: the first result of it is used), ``foreign``
    (results for requests the job did not send), ``malformed`` (lines that are no JSON result
    with a custom id) or ``cut`` (lines whose JSON stops before its end: the file was cut).
    ``count`` is how many; ``lines`` (``file:line``) and ``custom_ids`` the first few."""

    job: int
    backend: str
    batch_id: str
    problem: str
    count: int
    lines: list[str]
    custom_ids: list[str]
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"event": "batch_results", **asdict(self)}


@dataclass(frozen=True, slots=True)
class Status:
    """Live counters for a progress display: the ledger's counts and this run's."""

    total: int
    counts: dict[State, int]
    turns: int
    judged: int
    generation_errors: int
    judge_errors: int
    in_flight: int
    input_tokens: int
    output_tokens: int
    cost: float
    elapsed: float
    unpriced: int = 0  # turns that recorded tokens and no cost: their model has no price

    @property
    def remaining(self) -> int:
        return self.counts.get(State.TODO, 0)

    @property
    def done(self) -> int:
        return self.total - self.remaining

    @property
    def turns_per_second(self) -> float:
        return self.turns / self.elapsed if self.elapsed > 0 else 0.0


@dataclass(frozen=True, slots=True)
class Summary:
    """How a run ended and what it did. ``locked`` counts items this run locked, by state;
    ``set_aside`` names the items it set aside, in order; ``refused`` the locked items its
    exports refused to write (no attempt produced their lock); ``sandbox`` how a coding
    quest's agents were confined (``bwrap``; ``none``: unconfined; None for a text quest);
    ``unpriced`` the turns whose cost is unknown (tokens and no price), which ``cost`` lacks."""

    reason: StopReason
    message: str
    elapsed: float
    turns: int
    judged: int
    generation_errors: int
    judge_errors: int
    items: int
    locked: dict[str, int]
    escalated: int
    input_tokens: int
    output_tokens: int
    cost: float
    total: int
    remaining: int
    exported: int
    signal: str | None = None
    set_aside: tuple[str, ...] = ()
    sandbox: str | None = None
    refused: tuple[str, ...] = ()
    unpriced: int = 0  # turns that recorded tokens and no cost: ``cost`` leaves them out

    @property
    def turns_per_second(self) -> float:
        return self.turns / self.elapsed if self.elapsed > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["reason"] = self.reason.value
        data["set_aside"] = list(self.set_aside)
        data["refused"] = list(self.refused)
        data["turns_per_second"] = round(self.turns_per_second, 3)
        return {"event": "summary", **data}


def some(keys: tuple[str, ...], shown: int = 10) -> str:
    """The first ``shown`` of ``keys``, and how many more there are."""
    more = f" and {len(keys) - shown} more" if len(keys) > shown else ""
    return ", ".join(keys[:shown]) + more
