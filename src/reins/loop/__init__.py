"""The unattended driver: a backend generates, the gate judges, the ledger records, N at once.

``run(ledger, quest, backend)`` works the ledger until every item is locked, a budget cap is
reached, the circuit breaker trips, or a signal stops it; it returns a :class:`Summary`. An item
whose generation keeps failing is set aside for the run (an :class:`AsideEvent`).
"""

from reins.loop.events import AsideEvent, Status, StopReason, Summary, TurnEvent
from reins.loop.generate import GenerationError, generate
from reins.loop.options import Budget, LoopOptions
from reins.loop.progress import JsonReporter, LineReporter, NullReporter, Reporter, TtyReporter
from reins.loop.run import drive, run

__all__ = [
    "AsideEvent",
    "Budget",
    "GenerationError",
    "JsonReporter",
    "LineReporter",
    "LoopOptions",
    "NullReporter",
    "Reporter",
    "Status",
    "StopReason",
    "Summary",
    "TtyReporter",
    "TurnEvent",
    "drive",
    "generate",
    "run",
]
