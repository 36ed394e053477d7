"""A submitted turn: judge a submission and record it, then export what locked."""

from __future__ import annotations

import os

from reins.errors import NotTodo
from reins.ledger.export import export
from reins.ledger.sqlite import Ledger
from reins.quest import Quest
from reins.turn.drivers import DRIVERS
from reins.turn.judge import DEFAULT_LIMIT, judge
from reins.turn.record import Recorded, Usage, record_verdict


def submit(
    ledger: Ledger,
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
) -> tuple[Recorded, int]:
    """Judge ``raw`` for item ``key`` and record the turn.

    Returns:
        The recorded turn, and how many records were exported to ``results`` (when the item
        locked and ``results`` is given).

    Raises:
        NotFound: no such item. NotTodo: the item is locked. LeaseConflict: another driver
        holds it.
    """
    item = ledger.get(key)
    if item.state.terminal:
        # Fail before judging: a locked item is never judged again.
        raise NotTodo(f"item {key!r} is {item.state}, not TODO: terminal items are locked for good")
    verdict, text = judge(quest, item, raw, limit=limit)
    recorded = record_verdict(
        ledger,
        quest,
        key,
        verdict,
        text,
        driver=driver,
        policy=policy or quest.retry,
        prompt_digest=prompt_digest,
        usage=usage,
        started_at=started_at,
        expected_turns=expected_turns,
        extra=DRIVERS["manual"].extra(),
    )
    exported = 0
    if results is not None and recorded.item.state.terminal:
        exported = export(ledger, results)
    return recorded, exported
