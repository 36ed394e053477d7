"""Batch jobs: the ledger's record of the provider batches a batch round sends.

A batch round (``reins loop --batch``) leases the items it takes to one *job*, composes their
prompts, and sends them to a provider as one batch. The job is written to the ledger before
anything is sent, and each step it takes is written as it is taken, so a process killed at any
moment leaves a job a rerun can carry on: which items are in flight (each a
:class:`BatchRequest`: the item, the turn count its prompt was composed on, the custom id the
provider echoes), whether the requests were uploaded (``file_id``), whether the provider batch
exists (``batch_id``).

A job moves forward only (:data:`NEXT`). Its items are leased to :attr:`BatchJob.owner` for the
provider's window; reaching a final state gives their leases back in the same transaction. A
job is driven by one process at a time: its *hold* (``holder`` until ``held_until``), renewed
while the process works on it, so a second process resuming the same job leaves it alone.

The store knows nothing of providers: ``backend`` and ``model`` are plain names, ``note`` is
plain text (the provider's last word on the batch).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from reins.errors import IllegalTransition, NotFound

# How long a job's items stay leased to it: the providers' batch window (24 h) and an hour to
# collect the results in.
WINDOW = 25 * 3600.0


class JobState(StrEnum):
    """Where a batch job stands. ``collected``, ``cancelled`` and ``discarded`` are final."""

    LEASED = "leased"  # its items are leased to it; their requests are being composed
    COMPOSED = "composed"  # its requests are recorded; nothing is known to have been sent
    UPLOADED = "uploaded"  # the provider holds the requests file (file_id); no batch known yet
    SENT = "sent"  # the provider batch exists (batch_id); its results are being awaited
    COLLECTED = "collected"  # every result was recorded (or refused); the leases given back
    CANCELLED = "cancelled"  # cancelled at the provider; what had finished was recorded
    DISCARDED = "discarded"  # never sent (or nothing of it found at the provider)

    @property
    def final(self) -> bool:
        return self in FINAL


FINAL = frozenset({JobState.COLLECTED, JobState.CANCELLED, JobState.DISCARDED})

# The states a job may move to from each state (staying where it is, with the same or new ids,
# is always allowed: a resumed step writes again what it found).
NEXT: dict[JobState, frozenset[JobState]] = {
    JobState.LEASED: frozenset({JobState.COMPOSED, JobState.DISCARDED}),
    JobState.COMPOSED: frozenset({JobState.UPLOADED, JobState.SENT, JobState.DISCARDED}),
    JobState.UPLOADED: frozenset({JobState.SENT, JobState.DISCARDED}),
    JobState.SENT: frozenset({JobState.COLLECTED, JobState.CANCELLED}),
    JobState.COLLECTED: frozenset(),
    JobState.CANCELLED: frozenset(),
    JobState.DISCARDED: frozenset(),
}


def sources(target: JobState) -> tuple[str, ...]:
    """The states from which a job may be moved to ``target`` (itself included), as values."""
    return tuple(s.value for s in JobState if s is target or target in NEXT[s])


def refusal(job: int, found: JobState | None, target: JobState) -> Exception:
    """The error for a move of job ``job`` to ``target`` that its state ``found`` (None: no
    such job) does not allow."""
    if found is None:
        return NotFound(f"no batch job {job} in this ledger: `reins batch status` lists them")
    return IllegalTransition(
        f"batch job {job} is {found}: it cannot move to {target} (a job only moves forward)"
    )


@dataclass(frozen=True, slots=True)
class JobDraft:
    """A job to open: where its requests go, who records their turns, who drives it."""

    backend: str
    model: str
    driver: str
    holder: str


@dataclass(frozen=True, slots=True)
class BatchJob:
    """One provider batch as the ledger keeps it.

    ``tag`` is a random word the job's provider-side names carry (the requests file's name, the
    batch's metadata, every custom id), so that a rerun can find what a killed process sent.
    ``created_at`` and ``updated_at`` are the ledger's stamps; ``composed_at`` is the clock time
    (seconds) the job's requests were recorded, before anything was sent: a rerun looks for a
    provider batch made since whose id was never recorded; ``expires_at`` is when its leases
    run out.
    """

    id: int
    tag: str
    backend: str
    model: str
    driver: str
    state: JobState
    requests: int
    created_at: str
    updated_at: str
    expires_at: float
    composed_at: float | None = None
    file_id: str | None = None
    batch_id: str | None = None
    note: str | None = None
    holder: str | None = None
    held_until: float | None = None

    @property
    def owner(self) -> str:
        """The lease owner of the job's items."""
        return owner_of(self.id)


def owner_of(job: int) -> str:
    """The lease owner of job ``job``'s items: ``batch:<id>``."""
    return f"batch:{job}"


@dataclass(frozen=True, slots=True)
class BatchRequest:
    """One item in flight in a job: its custom id at the provider, the item's key, the turn
    count its prompt was composed on (the record's claim pins it: a result for an item that
    moved since is refused), the prompt's digest and the call's seed."""

    custom_id: str
    key: str
    turns: int
    prompt_digest: str
    seed: int
