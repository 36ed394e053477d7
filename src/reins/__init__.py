"""reins: a deterministic gate, not the agent, decides when work is done.

Public names are imported here explicitly; ``__all__`` is checked by a test.
"""

from reins._version import __version__
from reins.errors import (
    BackendError,
    BackendTimeout,
    ConfigError,
    CorruptLedger,
    IllegalTransition,
    LeaseConflict,
    LedgerError,
    NotFound,
    NotTodo,
    ReinsError,
)
from reins.gate import CatalogEntry, Context, Fact, Level, Outcome, Rule, Verdict, evaluate, rule
from reins.ledger import Attempt, AttemptKind, Item, State
from reins.ledger.sqlite import Ledger
from reins.quest import Quest, Seed, load_quest

__all__ = [
    "Attempt",
    "AttemptKind",
    "BackendError",
    "BackendTimeout",
    "CatalogEntry",
    "ConfigError",
    "Context",
    "CorruptLedger",
    "Fact",
    "IllegalTransition",
    "Item",
    "LeaseConflict",
    "Ledger",
    "LedgerError",
    "Level",
    "NotFound",
    "NotTodo",
    "Outcome",
    "Quest",
    "ReinsError",
    "Rule",
    "Seed",
    "State",
    "Verdict",
    "__version__",
    "evaluate",
    "load_quest",
    "rule",
]
