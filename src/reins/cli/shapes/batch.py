"""The ``--json`` of the ``batch`` commands: each batch job as the ledger keeps it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from reins.cli.shapes import Plain

if TYPE_CHECKING:
    from reins.backends.batch import RemoteBatch
    from reins.store.jobs import BatchJob


@dataclass(frozen=True, slots=True)
class Provider(Plain):
    """The provider's own word on a batch: its status and request counts."""

    status: str
    counts: dict[str, int]

    @classmethod
    def of(cls, remote: RemoteBatch) -> Provider:
        return cls(remote.status, dict(remote.counts))


@dataclass(frozen=True, slots=True)
class JobView(Plain):
    """``batch status`` and ``batch cancel``: one batch job. ``held_by`` is the process
    driving it (None: none now); ``outcome`` what ``cancel`` did (None under ``status``)."""

    job: int
    state: str
    backend: str
    model: str
    batch_id: str | None
    file_id: str | None
    requests: int
    created_at: str
    updated_at: str
    expires_at: float
    note: str | None
    held_by: str | None
    provider: Provider | None
    outcome: str | None

    @classmethod
    def of(
        cls,
        job: BatchJob,
        now: float,
        remote: RemoteBatch | None = None,
        outcome: str | None = None,
    ) -> JobView:
        live = job.holder if (job.held_until or 0.0) > now else None
        return cls(
            job.id,
            job.state.value,
            job.backend,
            job.model,
            job.batch_id,
            job.file_id,
            job.requests,
            job.created_at,
            job.updated_at,
            job.expires_at,
            job.note,
            live,
            Provider.of(remote) if remote is not None else None,
            outcome,
        )
