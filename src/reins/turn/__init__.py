"""The turn: compose → generate → judge → record, and the table in turn.md that records it."""

from reins.turn.compose import Prompt, compose, last_judged
from reins.turn.judge import judge
from reins.turn.record import Recorded, Usage, record_generation_error, record_verdict
from reins.turn.submit import submit
from reins.turn.table import TABLE, DOCUMENT

__all__ = [
    "DOCUMENT",
    "TABLE",
    "Prompt",
    "Recorded",
    "Usage",
    "compose",
    "judge",
    "last_judged",
    "record_generation_error",
    "record_verdict",
    "submit",
]
