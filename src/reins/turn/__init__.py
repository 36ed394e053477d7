"""The turn: compose → generate → judge → record, and the tables in turn.md that run it."""

from reins.turn.compose import compose, last_judged
from reins.turn.drivers import DRIVERS, Driver
from reins.turn.escalate import choose, escalating_cause
from reins.turn.failures import GenerationFailure, JudgeFailure
from reins.turn.judge import judge
from reins.turn.record import Origin, Recorded, draft, record
from reins.turn.replay import replay
from reins.turn.submit import submit
from reins.turn.table import DOCUMENT, TABLE
from reins.values import Prompt, call_seed

__all__ = [
    "DOCUMENT",
    "DRIVERS",
    "TABLE",
    "Driver",
    "GenerationFailure",
    "JudgeFailure",
    "Origin",
    "Prompt",
    "Recorded",
    "call_seed",
    "choose",
    "compose",
    "draft",
    "escalating_cause",
    "judge",
    "last_judged",
    "record",
    "replay",
    "submit",
]
