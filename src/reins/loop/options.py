"""What a loop run may do: concurrency, budget caps, the breakers, setting items aside, leases and
timeouts."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

from reins.errors import ConfigError
from reins.retry import canonical_retry
from reins.turn.drivers import DRIVERS
from reins.workspace.spec import SANDBOX

DEFAULT_BREAKER = 5
DEFAULT_JUDGE_BREAKER = 3
DEFAULT_SET_ASIDE = 3
DEFAULT_TIMEOUT = 300.0
DEFAULT_LEASE = 60.0
MAX_BACKOFF = 30.0
DEFAULT_ROUND = 1000
DEFAULT_POLL = 5.0
MAX_POLL = 60.0
POLL_GROWTH = 1.5  # each wait between two polls of a batch is this much longer, up to MAX_POLL
POLL_FAILURES = 10  # polls in a row that fail before the run stops (the batch runs on)
DEFAULT_AGENT_IDLE = 600.0
DEFAULT_AGENT_TIMEOUT = 1800.0


@dataclass(frozen=True, slots=True)
class Budget:
    """Caps on one run; None is no cap. A reached cap starts no new turn, and the turns
    already in flight finish (so tokens and cost may overshoot by up to ``concurrency`` turns).

    ``max_items`` counts the items this run takes up, ``max_turns`` the turns it records
    (generation errors included: each is a turn).

    A coding agent is held to ``max_tokens`` and ``max_cost`` as it runs: the agents in flight
    are killed once the run's spending reaches a cap, so the overshoot is at most what they
    spend between two usage events. ``max_item_tokens`` and ``max_item_cost`` cap each item
    over every turn of its log (every run's): an agent that reaches one is killed, and an item
    that reached one is set aside (TODO, tries unchanged) before anything more is spent on it.
    """

    max_items: int | None = None
    max_turns: int | None = None
    max_tokens: int | None = None
    max_cost: float | None = None
    max_item_tokens: int | None = None
    max_item_cost: float | None = None

    def __post_init__(self) -> None:
        for name in ("max_items", "max_turns", "max_tokens", "max_item_tokens"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 1):
                raise ConfigError(f"{name} must be a whole number ≥ 1, not {value!r}")
        for name in ("max_cost", "max_item_cost"):
            value = getattr(self, name)
            if value is not None and not (value > 0 and math.isfinite(value)):
                raise ConfigError(f"{name} must be a positive number, not {value!r}")


@dataclass(frozen=True, slots=True)
class LoopOptions:
    """How a loop runs.

    Args:
        concurrency: items in flight at once, each under its own lease.
        budget: caps on items, turns, tokens and cost.
        breaker: items in a row whose generation failed (no judged turn between them) that
            stop the run: the backend itself is failing (None: never stop). One item's errors
            alone never trip it; that item is set aside.
        set_aside_after: generation errors in a row on one item after which the run sets it
            aside: it stays TODO with its tries unchanged, the run goes on with the others and
            does not lease it again (None: never). The next run tries it again.
        wait: when every item left is leased to other drivers, wait for their leases to run
            out (False: stop, as ``--no-wait`` does).
        judge_breaker: consecutive judge errors (the gate failing on a submission) that stop
            the run (None: never stop). They use no try and lock nothing, but a broken gate
            makes every further generation wasted.
        retry: retry policy (``facts``, ``facts+previous``, ``fresh``, or a schedule of them
            with declared temperatures, ``fresh,facts@0.8``: :mod:`reins.retry`); None is the
            quest's.
        escalate_on: root causes that move an item to the stronger backend, on top of the
            quest's ``escalate_on``.
        driver: the driver name recorded on each attempt; leases are held per slot under
            ``<driver>@<host>:<pid>.<tag>#<slot>``.
        timeout: seconds a backend call may take; reins cuts it off a little later.
        lease_ttl: seconds a lease lasts without a heartbeat; a crashed loop's items return to
            the pool after this long.
        heartbeat: seconds between lease renewals (default a third of ``lease_ttl``).
        error_backoff: pause after a generation error before the item's next try; doubles
            with each further error on that item, up to 30 seconds.
        results: JSONL file locked items are exported to (None: no export).
        export_every: seconds between exports while the run goes on (and once at the end).
        round_size: batch rounds only: items one round takes, sent as one provider batch.
        poll: batch rounds only: seconds before the first poll of a batch; each wait is half
            as long again as the last, up to a minute.
        agent_idle: a coding agent that prints nothing for this many seconds is killed.
        agent_timeout: a coding agent's run that takes longer than this is killed.
        sandbox: how coding agents are confined (``none``, ``bwrap``); None: the quest's.
        worktrees: the folder of the items' worktrees when the quest's workspace names none
            (None: ``.reins-worktrees/<quest>`` beside the repository).
    """

    concurrency: int = 1
    budget: Budget = field(default_factory=Budget)
    breaker: int | None = DEFAULT_BREAKER
    set_aside_after: int | None = DEFAULT_SET_ASIDE
    judge_breaker: int | None = DEFAULT_JUDGE_BREAKER
    wait: bool = True
    retry: str | None = None
    escalate_on: frozenset[str] = frozenset()
    driver: str = DRIVERS["loop"].default_name
    timeout: float = DEFAULT_TIMEOUT
    lease_ttl: float = DEFAULT_LEASE
    heartbeat: float | None = None
    error_backoff: float = 1.0
    results: str | os.PathLike[str] | None = None
    export_every: float = 1.0
    round_size: int = DEFAULT_ROUND
    poll: float = DEFAULT_POLL
    agent_idle: float = DEFAULT_AGENT_IDLE
    agent_timeout: float = DEFAULT_AGENT_TIMEOUT
    sandbox: str | None = None
    worktrees: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.concurrency, int) or self.concurrency < 1:
            raise ConfigError(f"concurrency must be a whole number ≥ 1, not {self.concurrency!r}")
        for name in ("breaker", "set_aside_after"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 1):
                raise ConfigError(f"{name} must be a whole number ≥ 1, not {value!r}")
        if self.retry is not None:
            object.__setattr__(self, "retry", canonical_retry(self.retry))
        if not self.driver or any(c.isspace() or c in "@#" for c in self.driver):
            raise ConfigError(f"a driver name is one word without @ or #, not {self.driver!r}")
        if not isinstance(self.round_size, int) or self.round_size < 1:
            raise ConfigError(f"round_size must be a whole number ≥ 1, not {self.round_size!r}")
        for name in ("timeout", "lease_ttl", "export_every", "poll", "agent_idle", "agent_timeout"):
            value = getattr(self, name)
            if not (value > 0 and math.isfinite(value)):
                raise ConfigError(f"{name} must be a positive number of seconds, not {value!r}")
        if self.heartbeat is not None and not 0 < self.heartbeat < self.lease_ttl:
            raise ConfigError("heartbeat must be positive and shorter than lease_ttl")
        if not self.error_backoff >= 0:
            raise ConfigError("error_backoff must be zero or more seconds")
        if self.sandbox is not None and self.sandbox not in SANDBOX:
            raise ConfigError(f"sandbox must be one of {', '.join(SANDBOX)}, not {self.sandbox!r}")
        object.__setattr__(self, "escalate_on", frozenset(self.escalate_on))

    @property
    def beat(self) -> float:
        """Seconds between heartbeats."""
        return self.heartbeat if self.heartbeat is not None else self.lease_ttl / 3
