"""The store's values: item states, items, the draft of a turn, the claim, and the attempt.

The store knows nothing of gates or models: an attempt carries its verdict as plain data (an
outcome string, a root cause, facts and the rendered feedback). A driver hands the store a
:class:`Draft` (what it wants recorded) and a :class:`Claim` (who it is and which turn it read);
the store checks the claim, applies the ratchet and returns the finished :class:`Attempt`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from reins.values import JSON, Fact

GATE_AGREES = "gate.agrees."
"""The ledger's meta key (+ the current gate's digest) listing, as ``DIGEST=N`` words, the
older gates whose N locked items ``reins rejudge`` judged again, all of them, and found the
current gate agrees with (no verdict changed, or every change applied): ``status`` no longer
counts them as judged under an older gate."""


def read_agreeing(text: str | None) -> dict[str, int]:
    """The ``DIGEST=N`` words of a :data:`GATE_AGREES` entry (a malformed word is left out)."""
    found: dict[str, int] = {}
    for word in (text or "").split():
        digest, _, n = word.partition("=")
        if digest and n.isdigit():
            found[digest] = int(n)
    return found


class State(StrEnum):
    """Where an item stands. Everything but TODO is terminal."""

    TODO = "TODO"
    PASS = "PASS"
    REVIEW = "REVIEW"
    DONE = "DONE"
    SKIPPED = "SKIPPED"
    BLOCKED = "BLOCKED"

    @property
    def terminal(self) -> bool:
        return self is not State.TODO


TERMINAL_STATES: tuple[State, ...] = tuple(s for s in State if s.terminal)


class AttemptKind(StrEnum):
    """What made an attempt.

    A judged attempt has a verdict. A generation error (the generator failed) and a judge error
    (the gate itself failed) have only their cause: neither uses a try or locks anything. A
    human attempt is a person's action (resolve, reopen, re-judge, drop): the only kind that
    may move a terminal item, and a drop the only one that acts on a TODO item too.
    """

    JUDGED = "judged"
    GENERATION_ERROR = "generation_error"
    JUDGE_ERROR = "judge_error"
    HUMAN = "human"


@dataclass(frozen=True, slots=True)
class Item:
    """One unit of work as the store holds it."""

    key: str
    state: State
    tries: int
    payload: JSON = None
    turns: int = 0
    created_at: str = ""
    updated_at: str = ""
    locked_at: str | None = None
    lease_owner: str | None = None
    lease_expires: float | None = None
    exported: bool = False
    root_cause: str | None = None
    round: int = 1
    lease_token: str | None = None
    gate_digest: str | None = None


@dataclass(frozen=True, slots=True)
class Transition:
    """What recording a turn does to its item, as turn.md's tables decided it.

    ``new_round``: a person reopened the item: it starts round N+1 as TODO with no tries used
    (the log keeps every earlier attempt).
    """

    state: State
    tries_delta: int
    new_round: bool = False


@dataclass(frozen=True, slots=True)
class Usage:
    """What a generation cost, when the generator reports it.

    The fields mean what :class:`reins.values.Completion`'s do: ``input_tokens`` all the prompt
    tokens billed, ``cache_read_tokens`` / ``cache_write_tokens`` the part of them the
    provider's prompt cache read and wrote, ``batch`` a call made through a batch API (billed
    at the batch price), ``cost`` what was billed and ``list_cost`` the same tokens at list
    price, no discount of any kind (None: the same as ``cost``).
    """

    backend: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost: float | None = None
    latency: float | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    batch: bool = False
    list_cost: float | None = None


@dataclass(frozen=True, slots=True)
class Notes:
    """What a driver notes on an attempt beside its columns (kept as JSON).

    ``via`` is the driver table's row; ``nonce`` makes a retried record idempotent (a record
    whose commit was lost with the connection is found again, not written twice); ``batch``
    names the provider batch a batch round sent the turn in. A coding
    agent's turn notes its workspace: the item's ``branch``, the ``commit`` on it that holds
    the turn's work, the ``base`` commit its diff is taken from, the ``sandbox`` the agent
    ran in (``bwrap``, or ``none``: unconfined) and where its patch lies in the submission
    (``patch_start``, ``patch_end``: character offsets, equal when it has none; read by
    :func:`reins.workspace.submission.patch_at`, so the patch is not stored twice). A coding
    attempt recorded before the span was noted has neither. A sandboxed agent's turn notes
    the connections its egress proxy ``refused`` (a count) and ``refused_to`` (where they
    went, as the agent named them: ``host:port xN, …``). ``temperature`` is the sampling
    temperature the turn's retry policy declared (``facts@0.8``), None for the backend's own.
    """

    via: str = "manual"
    seed: int | None = None
    temperature: float | None = None
    escalated_by: str | None = None
    model: str | None = None
    line: int | None = None
    nonce: str | None = None
    batch: str | None = None  # the provider's batch id, for a turn answered through a batch
    branch: str | None = None
    commit: str | None = None
    base: str | None = None
    sandbox: str | None = None
    patch_start: int | None = None
    patch_end: int | None = None
    refused: int | None = None
    refused_to: str | None = None


@dataclass(frozen=True, slots=True)
class Draft:
    """What a driver wants recorded for one turn of ``key``: one value for every kind of turn."""

    key: str
    kind: AttemptKind
    transition: Transition
    outcome: str | None = None
    root_cause: str | None = None
    facts: tuple[Fact, ...] = ()
    feedback: str = ""
    submission: str | None = None
    error: str | None = None
    policy: str = "facts"
    prompt_digest: str | None = None
    usage: Usage = field(default_factory=Usage)
    started_at: str | None = None
    notes: Notes = field(default_factory=Notes)
    gate_digest: str | None = None
    action: str | None = None
    note: str | None = None


@dataclass(frozen=True, slots=True)
class Claim:
    """Who records, and which turn they read: the record is refused if the item moved since.

    ``turns`` is the item's turn count when the driver read it; ``owner`` is the lease holder
    when it differs from the ``driver`` name recorded on the attempt (the loop leases per slot).
    """

    driver: str
    turns: int
    owner: str | None = None
    token: str | None = None

    @property
    def holder(self) -> str:
        return self.owner or self.driver


@dataclass(frozen=True, slots=True)
class Attempt:
    """One recorded turn of an item: only ever a finished, stored record.

    ``turn`` N is the N-th attempt of that item.
    """

    key: str
    turn: int
    kind: AttemptKind
    driver: str
    state_after: State
    tries_after: int
    recorded_at: str
    outcome: str | None = None
    root_cause: str | None = None
    facts: tuple[Fact, ...] = ()
    feedback: str = ""
    submission: str | None = None
    error: str | None = None
    policy: str = "facts"
    prompt_digest: str | None = None
    usage: Usage = field(default_factory=Usage)
    started_at: str | None = None
    notes: Notes = field(default_factory=Notes)
    gate_digest: str | None = None
    action: str | None = None
    note: str | None = None
    round: int = 1

    @property
    def judged(self) -> bool:
        return self.kind is AttemptKind.JUDGED


@dataclass(frozen=True, slots=True)
class Lease:
    """What leasing hands a driver: the item, and how often it asked without submitting."""

    item: Item
    nexts_since_submit: int
    renewed: bool
    token: str = ""


@dataclass(frozen=True, slots=True)
class Page:
    """One page of an item query, and the cursor of the next (None on the last page).

    Pages are keyset-paginated (``after`` the last item's position), never by offset, so a
    page costs the same at item 10 and item 1,000,000.
    """

    items: tuple[Item, ...]
    next: int | None


@dataclass(frozen=True, slots=True)
class Mark:
    """One attempt as a chart of the run sees it: when it landed, what it did, and to which
    item (the ledger's own number for it; None where it is not known)."""

    recorded_at: str
    kind: AttemptKind
    state_after: State
    tries_after: int
    item: int | None = None

    @property
    def locked(self) -> bool:
        """Whether the gate locked its item with this turn (a person's action is not a lock)."""
        return self.kind is AttemptKind.JUDGED and self.state_after.terminal


@dataclass(frozen=True, slots=True)
class Activity:
    """The log's attempts over time, for charts: every attempt of a short log, else evenly
    spread runs of consecutive attempts (a sample whose size does not grow with the log).

    ``total`` is the number of attempts in the whole log; ``marks`` are in log order.
    """

    marks: tuple[Mark, ...]
    total: int

    @property
    def sampled(self) -> bool:
        return len(self.marks) < self.total


@dataclass(frozen=True, slots=True)
class Stats:
    """Counters for ``status``: read from tables the store keeps, never from a scan."""

    counts: dict[State, int]
    tries: dict[int, int]
    rules: dict[str, tuple[int, int]]
    attempts: int
    input_tokens: int
    output_tokens: int
    cost: float
    leased: int
    kinds: dict[str, int] = field(default_factory=dict)
    reopened: int = 0
    gates: dict[str, int] = field(default_factory=dict)
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    # The cost of the turns made through a batch API, and what every turn's tokens cost at list
    # price (a turn that recorded no list cost counts its cost): see Usage.
    batch_cost: float = 0.0
    list_cost: float = 0.0
    # DONE items a person dropped (their last attempt a drop): through the index of a person's
    # actions, so it costs what the people did, not what the ledger holds.
    dropped: int = 0
    # REVIEW items a person holds a live claim on (reins.store.people): counted apart from
    # ``leased``, which counts leases of work (TODO items) only.
    claimed: int = 0

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def remaining(self) -> int:
        return self.counts.get(State.TODO, 0)

    def older_gate(
        self, current: str | None, agreeing: Mapping[str, int] | None = None
    ) -> int | None:
        """Items last judged under a gate other than the one of digest ``current`` (None when
        there is no current gate to compare with), but as many of each digest as ``agreeing``
        says a re-judge of every locked item found the current gate agrees with (the meta entry
        :data:`GATE_AGREES` + ``current``, which ``reins rejudge`` writes: see
        :func:`read_agreeing`); one judged under that gate since is counted again."""
        if not current:
            return None
        agreed = agreeing or {}
        return sum(max(0, n - agreed.get(d, 0)) for d, n in self.gates.items() if d != current)


@dataclass(frozen=True, slots=True)
class ExportEntry:
    """A terminal item and the attempt that locked it, as an export writes them."""

    item: Item
    attempt: Attempt | None


@dataclass(frozen=True, slots=True)
class ExportClaim:
    """A claimed export: the file it goes to, the offset it starts at, its entries (a span
    of the results file one writer holds; not a provider batch)."""

    id: int
    path: str
    offset: int
    entries: tuple[ExportEntry, ...]
