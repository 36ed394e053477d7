"""The ledger: items, their log of attempts, the ratchet, and the SQLite store."""

from reins.ledger.model import TERMINAL_STATES, Attempt, AttemptKind, Item, State, Transition

__all__ = ["TERMINAL_STATES", "Attempt", "AttemptKind", "Item", "State", "Transition"]
