"""reins: a deterministic gate, not the agent, decides when work is done.

Public names are listed here explicitly (``__all__`` is checked by a test) but imported on
first use: ``reins next`` and ``reins submit`` run once per agent turn, so start-up matters.
"""

from __future__ import annotations

from reins._lazy import lazy_names as _lazy_names
from reins._version import __version__

TYPE_CHECKING = False  # not from typing: `reins --version` imports this module, and no typing

if TYPE_CHECKING:
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
        WrongQuest,
    )
    from reins.gate import (
        CatalogEntry,
        Context,
        Fact,
        Level,
        Outcome,
        Rule,
        Verdict,
        evaluate,
        rule,
    )
    from reins.quest import (
        Example,
        Quest,
        Seed,
    )
    from reins.quests.find import (
        load_quest,
    )
    from reins.store import (
        Attempt,
        AttemptKind,
        Item,
        State,
        Store,
    )
    from reins.store.engines import (
        open_store,
    )
    from reins.store.sqlite import (
        SQLiteStore,
    )

_WHERE = {
    "BackendError": "reins.errors",
    "BackendTimeout": "reins.errors",
    "ConfigError": "reins.errors",
    "CorruptLedger": "reins.errors",
    "IllegalTransition": "reins.errors",
    "LeaseConflict": "reins.errors",
    "LedgerError": "reins.errors",
    "NotFound": "reins.errors",
    "NotTodo": "reins.errors",
    "WrongQuest": "reins.errors",
    "ReinsError": "reins.errors",
    "CatalogEntry": "reins.gate",
    "Context": "reins.gate",
    "Fact": "reins.gate",
    "Level": "reins.gate",
    "Outcome": "reins.gate",
    "Rule": "reins.gate",
    "Verdict": "reins.gate",
    "evaluate": "reins.gate",
    "rule": "reins.gate",
    "Attempt": "reins.store",
    "AttemptKind": "reins.store",
    "Item": "reins.store",
    "State": "reins.store",
    "Store": "reins.store",
    "SQLiteStore": "reins.store.sqlite",
    "open_store": "reins.store.engines",
    "Example": "reins.quest",
    "Quest": "reins.quest",
    "Seed": "reins.quest",
    "load_quest": "reins.quests.find",
}

__all__ = [
    "Attempt",
    "AttemptKind",
    "BackendError",
    "BackendTimeout",
    "CatalogEntry",
    "ConfigError",
    "Context",
    "CorruptLedger",
    "Example",
    "Fact",
    "IllegalTransition",
    "Item",
    "LeaseConflict",
    "LedgerError",
    "Level",
    "NotFound",
    "NotTodo",
    "Outcome",
    "Quest",
    "ReinsError",
    "Rule",
    "SQLiteStore",
    "Seed",
    "State",
    "Store",
    "Verdict",
    "WrongQuest",
    "__version__",
    "evaluate",
    "load_quest",
    "open_store",
    "rule",
]


__getattr__, __dir__ = _lazy_names("reins", _WHERE, globals(), __all__)
