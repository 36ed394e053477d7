"""How attempts, facts and payloads cross into a store's columns and back: one place for both.

JSON is written ASCII-only, so any text a generator produced — a lone surrogate, a NUL — is
stored losslessly as a JSON escape and read back unchanged.
"""

from __future__ import annotations

import json
from dataclasses import fields
from datetime import UTC, datetime
from typing import Any

from reins.store.model import Attempt, AttemptKind, Draft, Item, Mark, Notes, State, Usage
from reins.values import Fact

# Column order shared by both engines' attempt tables.
ATTEMPT_COLUMNS = (
    "turn, kind, driver, state_after, tries_after, outcome, root_cause, facts, feedback, "
    "submission, error, policy, backend, prompt_digest, input_tokens, output_tokens, cost, "
    "latency, started_at, recorded_at, extra, gate_digest, action, note, round, "
    "cache_read_tokens, cache_write_tokens, batch, list_cost"
)
# Column order shared by both engines' item tables, as every item query selects them.
ITEM_COLUMNS = (
    "key, state, tries, payload, turns, created_at, updated_at, locked_at, "
    "lease_owner, lease_expires, export_batch, root_cause, round, lease_token, gate_digest"
)
# What ``load`` (a copy between engines) writes of an item: its record, not its bookkeeping.
LOAD_COLUMNS = (
    "key, state, tries, turns, payload, created_at, updated_at, locked_at, root_cause, round, "
    "gate_digest"
)
_NOTE_FIELDS = tuple(f.name for f in fields(Notes))


def now_iso() -> str:
    """The current UTC time as ISO 8601 with milliseconds and a ``Z``."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def dump_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"))


def load_json(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def facts_json(facts: tuple[Fact, ...]) -> str | None:
    return dump_json([f.to_dict() for f in facts]) if facts else None


def facts_of(text: str | None) -> tuple[Fact, ...]:
    if not text:
        return ()
    return tuple(
        Fact(
            rule=d.get("rule", ""),
            where=d.get("where", ""),
            expected=d.get("expected", ""),
            actual=d.get("actual", ""),
            level=d.get("level", ""),
        )
        for d in json.loads(text)
    )


def notes_json(notes: Notes) -> str | None:
    data = {name: getattr(notes, name) for name in _NOTE_FIELDS}
    return dump_json({k: v for k, v in data.items() if v is not None}) or None


def notes_of(text: str | None) -> Notes:
    if not text:
        return Notes()
    data = json.loads(text)
    return Notes(**{k: v for k, v in data.items() if k in _NOTE_FIELDS})


# What a chart reads of an attempt (:class:`Mark`), in this order.
MARK_COLUMNS = "recorded_at, kind, state_after, tries_after, item_id"


def mark_of(row: tuple[Any, ...] | Any) -> Mark:
    """A mark from a row in :data:`MARK_COLUMNS` order."""
    return Mark(row[0], AttemptKind(row[1]), State(row[2]), row[3], row[4])


def sample_runs(low: int, high: int, *, samples: int, window: int) -> list[tuple[int, int]]:
    """The id ranges :meth:`Store.activity` reads from a log whose ids span ``low..high``.

    One range for a short log; else ``samples`` runs of ``window`` ids, the first at the
    start of the log and the last at its end, evenly spaced between (never overlapping).
    """
    span = high - low + 1
    if span <= samples * window or samples < 2:
        return [(low, high)]
    step = (span - window) / (samples - 1)
    starts = [low + round(step * i) for i in range(samples)]
    return [(s, s + window - 1) for s in starts]


def item_of(row: tuple[Any, ...] | Any) -> Item:
    """An item from a row in :data:`ITEM_COLUMNS` order."""
    return Item(
        key=row[0],
        state=State(row[1]),
        tries=row[2],
        payload=load_json(row[3]),
        turns=row[4],
        created_at=row[5],
        updated_at=row[6],
        locked_at=row[7],
        lease_owner=row[8],
        lease_expires=row[9],
        exported=row[10] is not None,
        root_cause=row[11],
        round=row[12],
        lease_token=row[13],
        gate_digest=row[14],
    )


def load_row(item: Item) -> tuple[Any, ...]:
    """The item's values in :data:`LOAD_COLUMNS` order."""
    return (
        item.key,
        item.state.value,
        item.tries,
        item.turns,
        None if item.payload is None else dump_json(item.payload),
        item.created_at,
        item.updated_at,
        item.locked_at,
        item.root_cause,
        item.round,
        item.gate_digest,
    )


def turn_row(after: Item) -> tuple[Any, ...]:
    """What a turn writes of its item, in the order both engines write it."""
    return (
        after.state.value,
        after.tries,
        after.turns,
        after.updated_at,
        after.locked_at,
        after.lease_owner,
        after.lease_expires,
        after.root_cause,
        after.round,
        after.lease_token,
        after.gate_digest,
        after.exported,
    )


def attempt_row(a: Attempt) -> tuple[Any, ...]:
    """The attempt's values in :data:`ATTEMPT_COLUMNS` order."""
    u = a.usage
    return (
        a.turn,
        a.kind.value,
        a.driver,
        a.state_after.value,
        a.tries_after,
        a.outcome,
        a.root_cause,
        facts_json(a.facts),
        a.feedback,
        a.submission,
        a.error,
        a.policy,
        u.backend,
        a.prompt_digest,
        u.input_tokens,
        u.output_tokens,
        u.cost,
        u.latency,
        a.started_at,
        a.recorded_at,
        notes_json(a.notes),
        a.gate_digest,
        a.action,
        a.note,
        a.round,
        u.cache_read_tokens,
        u.cache_write_tokens,
        u.batch,
        u.list_cost,
    )


def attempt_of(key: str, row: tuple[Any, ...] | Any) -> Attempt:
    """An attempt from a row in :data:`ATTEMPT_COLUMNS` order."""
    return Attempt(
        key=key,
        turn=row[0],
        kind=AttemptKind(row[1]),
        driver=row[2],
        state_after=State(row[3]),
        tries_after=row[4],
        outcome=row[5],
        root_cause=row[6],
        facts=facts_of(row[7]),
        feedback=row[8],
        submission=row[9],
        error=row[10],
        policy=row[11],
        usage=Usage(
            backend=row[12],
            input_tokens=row[14],
            output_tokens=row[15],
            cost=row[16],
            latency=row[17],
            cache_read_tokens=row[25],
            cache_write_tokens=row[26],
            batch=bool(row[27]),
            list_cost=row[28],
        ),
        prompt_digest=row[13],
        started_at=row[18],
        recorded_at=row[19],
        notes=notes_of(row[20]),
        gate_digest=row[21],
        action=row[22],
        note=row[23],
        round=row[24],
    )


def usage_totals(a: Attempt) -> tuple[int, int, float, int, int, float, float]:
    """What the attempt adds to the kept usage totals: input and output tokens, cost, cache
    reads and writes, the cost of a batch call, and the cost at list price (its cost when it
    recorded none)."""
    u = a.usage
    cost = u.cost or 0.0
    listed = u.list_cost if u.list_cost is not None else cost
    return (
        u.input_tokens or 0,
        u.output_tokens or 0,
        cost,
        u.cache_read_tokens or 0,
        u.cache_write_tokens or 0,
        cost if u.batch else 0.0,
        listed,
    )


def fired_rules(a: Attempt | Draft) -> dict[str, tuple[int, int]]:
    """Per rule on the attempt's (or the draft's) facts: (times fired, 1 if it is the root
    cause else 0)."""
    counts: dict[str, int] = {}
    for fact in a.facts:
        if fact.rule:
            counts[fact.rule] = counts.get(fact.rule, 0) + 1
    return {r: (n, 1 if r == a.root_cause else 0) for r, n in counts.items()}
