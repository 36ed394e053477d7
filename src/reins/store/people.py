"""The reviewer's desk in the store: a person's claim on a REVIEW item, and the log of what
people decided, read by the same SQL on both engines.

A claim is a lease for people: the item's lease columns, on a REVIEW item, held by a person's
name for a while. Others see it (the review queue and ``reins review`` name the holder), their
decisions on the item are refused while it is live (the ratchet refuses any record under
another holder's live lease, :func:`reins.store.ratchet.admit`), it is given back by
:meth:`~reins.store.protocol.Store.release`, runs out as every lease does, and ends with the
holder's decision (a person's action clears the lease). No machine's lease ever takes a REVIEW
item (leases take TODO items only), and a claim never holds a TODO one.

A person's actions are read newest first through a partial index of the ``human`` attempts
(schema v5 on SQLite, v6 on PostgreSQL); the counts per person are a grouping over those
attempts alone, which are as many as people made, not as many as the log holds.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from reins.errors import IllegalTransition, LeaseConflict
from reins.store.codec import ATTEMPT_COLUMNS, ITEM_COLUMNS, attempt_of
from reins.store.model import Attempt, Item, State
from reins.store.sql import prefixed

# A claim: the item's lease to ``owner``, if it is REVIEW and nobody else holds it live.
# Arguments: owner, expiry, key, owner, now.
RESERVE = (
    "UPDATE items SET lease_owner = {mark}, lease_expires = {mark}, lease_token = NULL "
    "WHERE key = {mark} AND state = 'REVIEW' AND (lease_owner IS NULL OR lease_owner = {mark} "
    f"OR lease_expires <= {{mark}}) RETURNING {ITEM_COLUMNS}"
)
# A person's actions, newest first, before the cursor; the id last, for the next cursor.
DECISIONS = (
    f"SELECT i.key, {prefixed(ATTEMPT_COLUMNS, 'a')}, a.id FROM attempts a "
    "JOIN items i ON i.id = a.item_id WHERE a.kind = 'human' AND a.id < {mark} "
    "ORDER BY a.id DESC LIMIT {mark}"
)
# Per person and action: how many, how many at or after a time, and the last one's time.
REVIEWERS = (
    "SELECT driver, coalesce(action, ''), count(*), "
    "sum(CASE WHEN recorded_at >= {mark} THEN 1 ELSE 0 END), max(recorded_at) "
    "FROM attempts WHERE kind = 'human' GROUP BY driver, action"
)
LAST_CURSOR = 2**62


@dataclass(frozen=True, slots=True)
class Decisions:
    """A page of a person's actions (``human`` attempts), newest first, and the cursor of the
    next (an attempt's position in the log; None on the last page)."""

    attempts: tuple[Attempt, ...]
    next: int | None


@dataclass(frozen=True, slots=True)
class Reviewer:
    """What one person did: their actions by name (``accept``, ``reject``, ``reopen``,
    ``rejudge``) over the whole log, how many of them were recorded at or after a given time
    (``since``), and when the last one was."""

    name: str
    actions: dict[str, int]
    since: int
    last: str

    @property
    def total(self) -> int:
        return sum(self.actions.values())


def refusal(item: Item, now: float) -> Exception:
    """Why a claim on ``item`` was refused: it is not REVIEW, or another person holds it."""
    if item.state is not State.REVIEW:
        return IllegalTransition(
            f"item {item.key!r} is {item.state}, not REVIEW: only an item waiting for a person "
            "is claimed"
        )
    left = max((item.lease_expires or 0) - now, 0)
    return LeaseConflict(
        f"item {item.key!r} is claimed by {item.lease_owner!r} for another {left / 60:.0f} min: "
        "ask them to release it, or take another item"
    )


def decisions_of(rows: list[Any], limit: int) -> Decisions:
    """The page read by :data:`DECISIONS` (one row more than ``limit`` says a next exists)."""
    attempts = tuple(attempt_of(r[0], r[1:-1]) for r in rows[:limit])
    return Decisions(attempts, rows[limit - 1][-1] if len(rows) > limit else None)


def reviewers_of(rows: Iterable[Any]) -> list[Reviewer]:
    """The people of rows read by :data:`REVIEWERS`, the busiest first, then by name."""
    found: dict[str, tuple[dict[str, int], int, str]] = {}
    for name, action, n, since, last in rows:
        actions, counted, latest = found.get(name, ({}, 0, ""))
        actions[action or "?"] = actions.get(action or "?", 0) + int(n)
        found[name] = (actions, counted + int(since or 0), max(latest, str(last)))
    people = [Reviewer(name, a, since, last) for name, (a, since, last) in found.items()]
    return sorted(people, key=lambda r: (-r.total, r.name))
