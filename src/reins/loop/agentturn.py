"""A coding agent's turn, between the workshop that runs it and the recorder that records it:
where it starts, read from the log, and what it made.

Where a turn starts is read from the log, like its prompt (:func:`start_of`): under
``continue`` the commit of the last judged try, and that try's patch read at the span its
attempt notes (to make the commit again if reins' store lost it); under ``fresh`` and on the
first try the base. What it made (:class:`AgentTurn`) is the submission with the span of its
patch, or the error, with what it cost and where its work is. With a remote, its commit is
pushed there beside the judgment (:func:`publishing`), and the record waits for the push
(:func:`pushed`): a lock never names a commit the remote lacks.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from reins.coders.runner import RunEnd
from reins.errors import WorkspaceError
from reins.sandbox.egress import Refusals
from reins.store.model import Attempt, Usage
from reins.values import Fact
from reins.workspace.judgetree import JudgeTrees
from reins.workspace.submission import Submission, patch_at
from reins.workspace.workspaces import Workspaces


@dataclass(frozen=True, slots=True)
class AgentTurn:
    """What an agent's turn made: the submission (None when it failed), with where its
    patch lies, or the error.

    ``refused`` is the fact of a change refused before judging (over its caps): a FAIL with
    no gate run. ``judges`` builds the judge's tree the gate runs in; ``limit`` is the size a
    submission of this workspace may have; ``refusals`` what the agent's egress proxy refused
    (None: the agent was not confined); ``published`` the push of its commit to the quest's
    remote, under way (None: no remote, or no commit), which its record waits for."""

    submission: Submission | None
    error: str | None
    usage: Usage
    branch: str | None = None
    commit: str | None = None
    base: str | None = None
    model: str | None = None
    budget: str | None = None  # which cap killed it: run-tokens, run-cost or item
    refused: Fact | None = None
    judges: JudgeTrees | None = None
    sandbox: str | None = None
    limit: int = 0
    refusals: Refusals | None = None
    published: asyncio.Future[None] | None = None


def start_of(
    log: Sequence[Attempt], retry: str, base: str, origin: str | None = None
) -> tuple[str, str | None]:
    """The commit the next turn starts from (the last judged try's, or the item's origin: the
    base, or a land item's integration commit), and that try's recorded patch (to make the
    commit again if its store lost it), read at the span its notes give."""
    if retry == "continue":
        for attempt in reversed(log):
            if attempt.judged:
                notes = attempt.notes
                if notes.commit and notes.base == base:
                    patch = patch_at(attempt.submission, notes.patch_start, notes.patch_end)
                    return notes.commit, patch
                break
    return origin or base, None


def usage_of(backend: str, outcome: RunEnd) -> Usage:
    """What a run used, as a turn records it."""
    return Usage(
        backend=backend,
        input_tokens=outcome.usage.input_tokens,
        output_tokens=outcome.usage.output_tokens,
        cost=outcome.usage.cost,
        latency=outcome.latency,
        cache_read_tokens=outcome.usage.cache_read_tokens or None,
        cache_write_tokens=outcome.usage.cache_write_tokens or None,
    )


def publishing(spaces: Workspaces, key: str, commit: str | None) -> asyncio.Future[None] | None:
    """The push of item ``key``'s ``commit`` onto its branch on the quest's remote, started
    (None: no commit). It runs beside the judgment; the turn is recorded once it is done."""
    if commit is None:
        return None
    pushing = asyncio.ensure_future(asyncio.to_thread(spaces.land, key, commit))
    pushing.add_done_callback(_seen)  # a turn a hard stop dropped never awaits it
    return pushing


async def pushed(made: AgentTurn) -> str | None:
    """Wait for the push of ``made``'s commit: why it failed (the turn is then the
    workspace's error, as when its change cannot be taken), or None."""
    if made.published is None:
        return None
    try:
        await made.published
    except (WorkspaceError, OSError) as exc:
        return f"workspace: {exc}"
    return None


def _seen(done: asyncio.Future[None]) -> None:
    if not done.cancelled():
        done.exception()  # read here too, so that a push nobody waited for is not reported
