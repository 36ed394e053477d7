"""The unattended driver: a backend generates, the gate judges, the ledger records, N at once.

``run(ledger, quest, generator)`` works the ledger until every item is locked, a budget cap is
reached, the circuit breaker trips, or a signal stops it; it returns a :class:`Summary`. An item
whose generation keeps failing is set aside for the run (an :class:`AsideEvent`). The generator
is a :class:`TextGenerator` (a backend) or an :class:`AgentGenerator` (a coding agent, for a
quest with a workspace); ``choose_generator(spec, quest)`` makes the one a model spec names.
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
from reins.loop.generator import AgentGenerator, Generator, TextGenerator, choose_generator
from reins.loop.options import Budget, LoopOptions
from reins.loop.progress import JsonReporter, LineReporter, NullReporter, Reporter, TtyReporter
from reins.loop.run import drive, drive_batches, run, run_batches

__all__ = [
    "AgentGenerator",
    "AsideEvent",
    "BatchEvent",
    "Budget",
    "GenerationError",
    "Generator",
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
    "TextGenerator",
    "TtyReporter",
    "TurnEvent",
    "choose_generator",
    "drive",
    "drive_batches",
    "generate",
    "run",
    "run_batches",
]
