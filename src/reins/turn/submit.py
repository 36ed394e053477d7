"""A submitted turn: judge a submission and record it, then export what locked."""

from __future__ import annotations

import os

from reins.errors import NotTodo, TurnMoved
from reins.quest import Quest
from reins.store.export import Exported, export
from reins.store.model import Item, Usage
from reins.store.protocol import Store
from reins.turn.drivers import DRIVERS
from reins.turn.judge import DEFAULT_LIMIT, judge
from reins.turn.record import Origin, Recorded, record


def submit(
    store: Store,
    quest: Quest,
    key: str,
    raw: bytes | str,
    *,
    driver: str,
    limit: int = DEFAULT_LIMIT,
    results: str | os.PathLike[str] | None = None,
    policy: str | None = None,
    prompt_digest: str | None = None,
    usage: Usage | None = None,
    started_at: str | None = None,
    expected_turns: int | None = None,
    token: str | None = None,
) -> tuple[Recorded, Exported]:
    """Judge ``raw`` for item ``key`` and record the turn.

    ``expected_turns`` pins the turn the submitter read: the record is refused (TurnMoved) if
    another turn landed first. Without it, the submission counts on top of whatever landed.
    ``token`` is the lease token ``next`` printed: a stale one is refused (LeaseConflict).
    A judge error (the gate failing on the submission) is recorded and returned like a
    verdict, without using a try; ``Recorded.verdict`` is then None.

    Returns:
        The recorded turn, and what was exported to ``results`` (when the item locked and
        ``results`` is given): the records written and the locks refused.

    Raises:
        NotFound: no such item. NotTodo: the item is locked. LeaseConflict: another driver
        holds it.
    """
    item = store.get(key)
    _check_open(item, expected_turns)
    verdict, text = judge(quest, item, raw, limit=limit)
    origin = Origin(
        policy=policy or quest.retry,
        prompt_digest=prompt_digest,
        usage=usage or Usage(),
        started_at=started_at,
        notes=DRIVERS["manual"].notes(),
        gate_digest=quest.gate_digest,
    )
    recorded = record(
        store,
        quest,
        item,
        verdict,
        origin,
        driver=driver,
        token=token,
        submission=text,
        pinned=expected_turns is not None,
    )
    exported = Exported()
    if results is not None and recorded.item.state.terminal:
        exported = export(store, results)
    return recorded, exported


def _check_open(item: Item, expected_turns: int | None) -> None:
    """Refuse before judging: a locked item is never judged again, and a pinned turn that
    another turn overtook records nothing."""
    if item.state.terminal:
        raise NotTodo(
            f"item {item.key!r} is {item.state}, not TODO: terminal items are locked for good"
        )
    if expected_turns is not None and expected_turns != item.turns:
        raise TurnMoved(
            f"item {item.key!r} gained a turn since it was read (turn {item.turns}, expected "
            f"{expected_turns}); nothing was recorded"
        )
