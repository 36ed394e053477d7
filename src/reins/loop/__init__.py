"""The unattended driver: a backend generates, the gate judges, the ledger records, N at once.

``run(ledger, quest, backend)`` works the ledger until every item is locked, a budget cap is
reached, the circuit breaker trips, or a signal stops it; it returns a :class:`Summary`. An item
whose generation keeps failing is set aside for the run (an :class:`AsideEvent`).
``run_batches`` does the same in batch rounds, each sent as one provider batch at the batch
price (:class:`BatchEvent`; trouble in a batch's results files: :class:`ResultsEvent`).
"""

from reins.loop.events import (
    AsideEvent,
    BatchEvent,
    RefusedEvent,
    ResultsEvent,
    Status,
    StopReason,
    Summary,
    TurnEvent,
)
from reins.loop.generate import GenerationError, generate
from reins.loop.options import Budget, LoopOptions
from reins.loop.progress import JsonReporter, LineReporter, NullReporter, Reporter, TtyReporter
from reins.loop.run import drive, drive_batches, run, run_batches

__all__ = [
    "AsideEvent",
    "BatchEvent",
    "Budget",
    "GenerationError",
    "JsonReporter",
    "LineReporter",
    "LoopOptions",
    "NullReporter",
    "RefusedEvent",
    "Reporter",
    "ResultsEvent",
    "Status",
    "StopReason",
    "Summary",
    "TtyReporter",
    "TurnEvent",
    "drive",
    "drive_batches",
    "generate",
    "run",
    "run_batches",
]
