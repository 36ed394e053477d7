"""The store: items, their log of attempts, the ratchet; the Store protocol and its engines."""

from reins.store.model import (
    TERMINAL_STATES,
    Attempt,
    AttemptKind,
    Claim,
    Draft,
    ExportClaim,
    ExportEntry,
    Item,
    Lease,
    Notes,
    Page,
    State,
    Stats,
    Transition,
    Usage,
)
from reins.store.protocol import Store
from reins.store.query import PageQuery

__all__ = [
    "TERMINAL_STATES",
    "Attempt",
    "AttemptKind",
    "Claim",
    "Draft",
    "ExportClaim",
    "ExportEntry",
    "Item",
    "Lease",
    "Notes",
    "Page",
    "PageQuery",
    "State",
    "Stats",
    "Store",
    "Transition",
    "Usage",
]
