"""The gate: rules that leave facts, and the verdict their aggregation yields.

The flat gate is imported at once; the graph gate, grounds and AI checks on first use, since
``reins.gate`` is imported on every CLI start and most turns need none of them.
"""

from typing import TYPE_CHECKING

from reins._lazy import lazy_names as _lazy_names
from reins.gate.evaluate import evaluate, excerpt, fire
from reins.gate.rule import CatalogEntry, Context, Fact, Level, Rule, rule
from reins.gate.verdict import Outcome, Verdict, render

if TYPE_CHECKING:
    from reins.errors import GroundError
    from reins.gate.ai import AICheck, ai_rule, is_ai
    from reins.gate.counter import Counter
    from reins.gate.graph import Graph, Judgement
    from reins.gate.ground import (
        FakeResolver,
        NetResolver,
        Provider,
        Resolver,
        Snapshot,
        require_dnspython,
    )
    from reins.gate.hcat import h_categoriser

_LAZY = {
    "AICheck": "reins.gate.ai",
    "ai_rule": "reins.gate.ai",
    "is_ai": "reins.gate.ai",
    "Counter": "reins.gate.counter",
    "Graph": "reins.gate.graph",
    "Judgement": "reins.gate.graph",
    "FakeResolver": "reins.gate.ground",
    "GroundError": "reins.errors",
    "NetResolver": "reins.gate.ground",
    "Provider": "reins.gate.ground",
    "Resolver": "reins.gate.ground",
    "Snapshot": "reins.gate.ground",
    "require_dnspython": "reins.gate.ground",
    "h_categoriser": "reins.gate.hcat",
}

__all__ = [
    "AICheck",
    "CatalogEntry",
    "Context",
    "Counter",
    "Fact",
    "FakeResolver",
    "Graph",
    "GroundError",
    "Judgement",
    "Level",
    "NetResolver",
    "Outcome",
    "Provider",
    "Resolver",
    "Rule",
    "Snapshot",
    "Verdict",
    "ai_rule",
    "evaluate",
    "excerpt",
    "fire",
    "h_categoriser",
    "is_ai",
    "render",
    "require_dnspython",
    "rule",
]


__getattr__, __dir__ = _lazy_names("reins.gate", _LAZY, globals(), __all__)
