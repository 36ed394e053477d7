"""Replay: the third driver. Recorded outputs go through the same turn as any other answer.

Each line of a replay file is ``{"key": …, "output": …}``, or a benchmark's own line read
through :class:`Fields` (other field names; the item found by a payload field such as the
prompt's text, as in ``{"prompt": …, "response": …}``). The output is judged as a
submission for that item at its current turn, and the turn is recorded with the digest of the
prompt reins would have composed (the driver table: the prompt is a digest, never sent). Lines
are taken in order, so several lines for one key are successive tries. A bad line, an unknown
key, a line ``--match`` finds no one item for (counted apart from bad lines: it is well
formed), a locked item or an item another driver holds is skipped and reported; nothing about
it is recorded.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from reins.errors import LeaseConflict, NotFound, NotTodo
from reins.gate import Verdict
from reins.quest import Quest
from reins.store import AttemptKind
from reins.store.export import Exported, export
from reins.store.protocol import Store
from reins.turn.compose import compose
from reins.turn.drivers import DRIVERS, PromptUse
from reins.turn.failures import JudgeFailure
from reins.turn.judge import DEFAULT_LIMIT, judge
from reins.turn.record import Origin, Recorded, record, storable

DRIVER = DRIVERS["replay"]


class Replayed(StrEnum):
    """What became of one line."""

    RECORDED = "recorded"
    BAD = "bad-line"
    UNKNOWN = "unknown-key"
    UNMATCHED = "unmatched"  # --match: no item (or more than one) holds the line's value
    LOCKED = "locked"
    LEASED = "leased"
    REPEATED = "repeated"  # this output was judged for this item already (this round)
    JUDGED = "judged"  # --dry-run: judged, not recorded


@dataclass(frozen=True, slots=True)
class ReplayLine:
    """One line of a replay file: its number, and its key and output or what is wrong."""

    number: int
    key: str | None = None
    output: str | None = None
    problem: str | None = None
    unmatched: bool = False  # a well-formed line whose match value names no one item


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """What one line did; ``recorded`` is set when its turn was recorded, ``judged`` to what
    the gate said (a verdict or its own failure) when the line was judged, recorded or not."""

    line: int
    key: str | None
    status: Replayed
    message: str
    recorded: Recorded | None = None
    judged: Verdict | JudgeFailure | None = None


@dataclass(slots=True)
class ReplaySummary:
    """Counts by status; for judged lines, by outcome, beside the judge's and the generator's
    errors (neither is an outcome); and records exported."""

    lines: Counter[Replayed] = field(default_factory=Counter)
    outcomes: Counter[str] = field(default_factory=Counter)
    judge_errors: int = 0
    generation_errors: int = 0
    exported: Exported = field(default_factory=Exported)

    def count(self, result: ReplayResult) -> None:
        self.lines[result.status] += 1
        if isinstance(result.judged, JudgeFailure):
            self.judge_errors += 1
        elif result.judged is not None:
            self.outcomes[result.judged.outcome.value] += 1
        elif (
            result.recorded is not None
            and result.recorded.attempt.kind is AttemptKind.GENERATION_ERROR
        ):
            self.generation_errors += 1

    @property
    def complete(self) -> bool:
        """True when every line was recorded."""
        done = (Replayed.RECORDED, Replayed.REPEATED, Replayed.JUDGED)
        return not any(n for status, n in self.lines.items() if status not in done)


@dataclass(frozen=True, slots=True)
class Fields:
    """Which fields of a line hold what: the item's key (a string, or an integer read as its
    decimal text) and the output; or, with ``match``, the line's field of that name holds the
    value of the item's payload field of the same name (``by_value``: each value's keys, from
    :func:`match_index`), so a benchmark's ``{"prompt", "response"}`` file needs no key."""

    key: str = "key"
    output: str = "output"
    match: str | None = None
    by_value: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


def match_index(store: Store, name: str) -> dict[str, tuple[str, ...]]:
    """Each string value of the payload field ``name`` → the keys of the items holding it."""
    from reins.store.walk import iter_items

    found: dict[str, list[str]] = {}
    for item in iter_items(store):
        value = item.payload.get(name) if isinstance(item.payload, dict) else None
        if isinstance(value, str):
            found.setdefault(value, []).append(item.key)
    return {value: tuple(keys) for value, keys in found.items()}


def read_lines(stream: Iterable[bytes | str], fields: Fields | None = None) -> Iterator[ReplayLine]:
    """Parse replay lines; blank lines are skipped, bad ones come back with their problem."""
    fields = fields or Fields()
    for number, raw in enumerate(stream, start=1):
        try:
            text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        except UnicodeDecodeError as exc:
            yield ReplayLine(number, problem=f"not UTF-8 (byte {exc.start})")
            continue
        if not text.strip():
            continue
        try:
            data = json.loads(text)
        except ValueError as exc:
            yield ReplayLine(number, problem=f"not JSON ({exc})")
            continue
        if not isinstance(data, dict):
            yield ReplayLine(number, problem=f"a JSON {type(data).__name__}, not an object")
            continue
        key, problem = _key_of(data, fields)
        output = data.get(fields.output)
        if key is None:
            unmatched = fields.match is not None and isinstance(data.get(fields.match), str)
            yield ReplayLine(number, problem=problem, unmatched=unmatched)
        elif not isinstance(output, str):
            yield ReplayLine(
                number, key=key, problem=f'"{fields.output}" is missing or not a string'
            )
        else:
            yield ReplayLine(number, key=key, output=output)


def _key_of(data: Mapping[str, object], fields: Fields) -> tuple[str | None, str]:
    """The key a line names, or why it names none."""
    if fields.match is None:
        key = data.get(fields.key)
        if isinstance(key, int) and not isinstance(key, bool):
            return str(key), ""
        if not isinstance(key, str) or not key:
            return None, f'no "{fields.key}" string'
        return key, ""
    value = data.get(fields.match)
    if not isinstance(value, str):
        return None, f'no "{fields.match}" string to find its item by'
    keys = fields.by_value.get(value, ())
    shown = value if len(value) <= 60 else value[:57] + "..."
    if not keys:
        return None, f'no item whose payload "{fields.match}" is {shown!r}'
    if len(keys) > 1:
        return None, (
            f'{len(keys)} items have this payload "{fields.match}" ({", ".join(keys[:3])}): '
            "match by a field that tells them apart, or by the key"
        )
    return keys[0], ""


def replay_line(
    store: Store,
    quest: Quest,
    line: ReplayLine,
    *,
    driver: str = DRIVER.default_name,
    policy: str | None = None,
    limit: int = DEFAULT_LIMIT,
    dry_run: bool = False,
) -> ReplayResult:
    """Judge and record one line as a turn of its item, or say why it was skipped.

    An output already judged for the item in its current round is not judged again: replaying
    a file twice spends no second try on the same output. ``dry_run`` judges and reports
    without recording anything.
    """
    n, key = line.number, line.key
    if line.unmatched:
        return ReplayResult(n, key, Replayed.UNMATCHED, f"line {n}: {line.problem}, skipped")
    if line.problem is not None or key is None or line.output is None:
        return ReplayResult(n, key, Replayed.BAD, f"line {n}: {line.problem}, skipped")
    try:
        item, log = store.snapshot(key)
    except NotFound:
        return ReplayResult(n, key, Replayed.UNKNOWN, f"line {n}: no item {key!r}, skipped")
    if any(
        a.judged and a.round == item.round and a.submission == storable(line.output) for a in log
    ):
        message = f"line {n}: {key} was judged with this output already; not judged again"
        return ReplayResult(n, key, Replayed.REPEATED, message)
    if item.state.terminal:
        message = f"line {n}: {key} is {item.state}, locked for good; not judged again"
        return ReplayResult(n, key, Replayed.LOCKED, message)
    if item.lease_owner not in (None, driver) and (item.lease_expires or 0) > time.time():
        message = f"line {n}: {key} is leased to {item.lease_owner}, skipped"
        return ReplayResult(n, key, Replayed.LEASED, message)
    if dry_run:
        verdict, _ = judge(quest, item, line.output, limit=limit)
        text = verdict.error if isinstance(verdict, JudgeFailure) else verdict.outcome.value
        message = f"line {n}: {key} -> {text} (not recorded)"
        return ReplayResult(n, key, Replayed.JUDGED, message, judged=verdict)
    used = policy or quest.retry
    digest = None
    if DRIVER.prompt is PromptUse.DIGEST:
        digest = compose(quest, item, log, policy=used).digest()
    verdict, text = judge(quest, item, line.output, limit=limit)
    try:
        origin = Origin(
            policy=used,
            prompt_digest=digest,
            notes=DRIVER.notes(line=n),
            gate_digest=quest.gate_digest,
        )
        recorded = record(store, quest, item, verdict, origin, driver=driver, submission=text)
    except NotTodo:
        return ReplayResult(n, key, Replayed.LOCKED, f"line {n}: {key} locked meanwhile")
    except LeaseConflict as exc:
        return ReplayResult(n, key, Replayed.LEASED, f"line {n}: {exc}")
    return ReplayResult(n, key, Replayed.RECORDED, recorded.text, recorded, verdict)


def replay(
    store: Store,
    quest: Quest,
    lines: Iterable[ReplayLine],
    *,
    driver: str = DRIVER.default_name,
    policy: str | None = None,
    limit: int = DEFAULT_LIMIT,
    results: str | os.PathLike[str] | None = None,
    on_result: Callable[[ReplayResult], None] | None = None,
    dry_run: bool = False,
) -> ReplaySummary:
    """Replay ``lines`` in order; export what locked to ``results`` at the end."""
    summary = ReplaySummary()
    for line in lines:
        result = replay_line(
            store, quest, line, driver=driver, policy=policy, limit=limit, dry_run=dry_run
        )
        summary.count(result)
        if on_result is not None:
            on_result(result)
    if results is not None and summary.lines[Replayed.RECORDED]:
        summary.exported = export(store, results)
    return summary
