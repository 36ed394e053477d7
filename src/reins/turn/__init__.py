"""The turn: compose → generate → judge → record, and the tables in turn.md that run it."""

from reins.turn.compose import Prompt, call_seed, compose, last_judged
from reins.turn.drivers import DRIVERS, Driver
from reins.turn.escalate import choose, escalating_cause
from reins.turn.judge import judge
from reins.turn.record import Recorded, Usage, record_generation_error, record_verdict
from reins.turn.replay import replay
from reins.turn.submit import submit
from reins.turn.table import DOCUMENT, TABLE

__all__ = [
    "DOCUMENT",
    "DRIVERS",
    "TABLE",
    "Driver",
    "Prompt",
    "Recorded",
    "Usage",
    "call_seed",
    "choose",
    "compose",
    "escalating_cause",
    "judge",
    "last_judged",
    "record_generation_error",
    "record_verdict",
    "replay",
    "submit",
]
