"""The turn: compose → generate → judge → record, and the tables in turn.md that run it.

The names below are imported on first use: ``reins next`` composes and ``reins submit`` judges
and records, once per agent turn each, and neither should pay for the other's modules (nor
for replay's).
"""

import sys
import types
from typing import TYPE_CHECKING

from reins._lazy import lazy_names as _lazy_names

if TYPE_CHECKING:
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

_WHERE = {
    "compose": "reins.turn.compose",
    "last_judged": "reins.turn.compose",
    "DRIVERS": "reins.turn.drivers",
    "Driver": "reins.turn.drivers",
    "choose": "reins.turn.escalate",
    "escalating_cause": "reins.turn.escalate",
    "GenerationFailure": "reins.turn.failures",
    "JudgeFailure": "reins.turn.failures",
    "judge": "reins.turn.judge",
    "Origin": "reins.turn.record",
    "Recorded": "reins.turn.record",
    "draft": "reins.turn.record",
    "record": "reins.turn.record",
    "replay": "reins.turn.replay",
    "submit": "reins.turn.submit",
    "DOCUMENT": "reins.turn.table",
    "TABLE": "reins.turn.table",
    "Prompt": "reins.values",
    "call_seed": "reins.values",
}

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

# Five functions share their module's name (reins.turn.submit holds submit, …).
_FUNCTIONS = frozenset(n for n, m in _WHERE.items() if m == f"{__name__}.{n}")


class _Package(types.ModuleType):
    """``reins.turn``, whose attribute ``submit`` is the function even once its module loads.

    Importing a submodule binds it on its package; here that would shadow the function of the
    same name for every later ``from reins.turn import submit``. So a module is not bound over
    those five names: they stay the functions, as when this file imported every turn module.
    """

    def __setattr__(self, name: str, value: object) -> None:
        if name in _FUNCTIONS and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
__getattr__, __dir__ = _lazy_names(__name__, _WHERE, globals(), __all__)
