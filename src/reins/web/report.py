"""The shareable report: one self-contained HTML file (inline styles, SVG charts, no script, no
network) with the board, a table per rule, and the review queue read-only."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from reins.figures import Figure, compute
from reins.quest import Quest
from reins.store.model import Item
from reins.store.protocol import Store
from reins.store.query import PageQuery
from reins.web.board import Board, board
from reins.web.queue import Queue, queue

PER_RULE = 20
QUEUED = 100


@dataclass(frozen=True, slots=True)
class RuleItems:
    """A rule and the first items whose last judged root cause it is."""

    rule: str
    fired: int
    root: int
    items: tuple[Item, ...]
    more: bool


@dataclass(frozen=True, slots=True)
class Report:
    """What the report shows, and when it was made (``made_at``, and ``made`` as a Unix time);
    ``figures``: the quest's own. A snapshot read later says every time as it was, never
    "3 min ago": a relative time would be wrong by the time it is read."""

    board: Board
    rules: tuple[RuleItems, ...]
    queue: Queue
    made_at: str
    made: float
    figures: tuple[Figure, ...] = ()


def gather(store: Store, quest: Quest | None) -> Report:
    """Everything the report shows, read through the Store protocol (indexes, counters)."""
    found = board(store, quest)
    rules = []
    for r in found.rules:
        page = store.page(PageQuery(rule=r.rule, limit=PER_RULE))
        rules.append(RuleItems(r.rule, r.fired, r.root, page.items, page.next is not None))
    waiting = queue(store, quest, PageQuery(limit=QUEUED))
    own = (
        () if quest is None or quest.figures is None else compute(quest.figures, store, quest.name)
    )
    made = datetime.now(UTC)
    stamp = made.isoformat(timespec="seconds").replace("+00:00", "Z")
    return Report(found, tuple(rules), waiting, stamp, made.timestamp(), own)


def html(report: Report, quest: Quest | None) -> str:
    from reins.web.render import render, static_text

    return render(
        "report.html",
        report=True,
        css=static_text("reins.css"),
        board=report.board,
        rules=report.rules,
        queue=report.queue,
        figures=report.figures,
        made_at=report.made_at,
        quest=None if quest is None else quest.name,
        allowed=None if quest is None else quest.max_tries,
        now=None,  # times as they were: see Report
        title="report",
        can_act=False,
        read_only=True,
        csrf="",
        by="",
    )


def write_html(store: Store, quest: Quest | None, path: str | os.PathLike[str]) -> Path:
    """Write the report to ``path`` (whole or not at all: a temporary file renamed in place).

    The file is created with mode 0600, as the results file is: it holds submissions and
    payloads, which may carry personal data from the inputs.
    """
    target = Path(path)
    text = html(gather(store, quest), quest)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or Path("."))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(tmp, 0o600)  # mkstemp's mode already; said here so no edit widens it
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target
