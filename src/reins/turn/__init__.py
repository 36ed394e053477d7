"""The turn: compose → generate → judge → record, and the tables in turn.md that run it.

Names are imported on first use, so that ``reins next`` loads compose without replay or export.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reins.turn.compose import Prompt, call_seed, compose, last_judged
    from reins.turn.drivers import DRIVERS, Driver
    from reins.turn.escalate import choose, escalating_cause
    from reins.turn.judge import judge
    from reins.turn.record import Recorded, Usage, record_generation_error, record_verdict
    from reins.turn.replay import replay
    from reins.turn.submit import submit
    from reins.turn.table import DOCUMENT, TABLE

_WHERE = {
    "Prompt": "reins.turn.compose",
    "call_seed": "reins.turn.compose",
    "compose": "reins.turn.compose",
    "last_judged": "reins.turn.compose",
    "DRIVERS": "reins.turn.drivers",
    "Driver": "reins.turn.drivers",
    "choose": "reins.turn.escalate",
    "escalating_cause": "reins.turn.escalate",
    "judge": "reins.turn.judge",
    "Recorded": "reins.turn.record",
    "Usage": "reins.turn.record",
    "record_generation_error": "reins.turn.record",
    "record_verdict": "reins.turn.record",
    "replay": "reins.turn.replay",
    "submit": "reins.turn.submit",
    "DOCUMENT": "reins.turn.table",
    "TABLE": "reins.turn.table",
}

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


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'reins.turn' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
