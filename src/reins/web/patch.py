"""A coding item's change as a reviewer reads it: the agent's message, then the diff per file.

A coding turn's submission is the agent's final message, a ``## Changes:`` header and the whole
patch in a fenced block (:mod:`reins.workspace.submission`); the patch is read at the span the
attempt notes, as the export reads it. The item page and the review queue
show it as code: each file of the patch on its own, its added, removed and unchanged lines
apart (the templates colour them), and beside it the test output of the last judged turn (its
facts). A file's lines are bounded (:data:`MOST_LINES`), saying how many were left out; the
ledger keeps the whole patch.
"""

from __future__ import annotations

from dataclasses import dataclass

from reins.store.model import Attempt
from reins.workspace.submission import HEADER, patch_at

MOST_LINES = 2_000  # lines of one file's diff shown on a page


@dataclass(frozen=True, slots=True)
class Line:
    """One line of a file's diff: ``kind`` is ``add``, ``del``, ``hunk`` (an ``@@`` header),
    ``meta`` (git's own lines: index, modes, the ---/+++ names) or ``same``."""

    kind: str
    text: str


@dataclass(frozen=True, slots=True)
class FileDiff:
    """The diff of one file: its path, lines added and removed, its lines (at most
    :data:`MOST_LINES`; ``hidden`` more), and whether git gave it as binary."""

    path: str
    added: int
    removed: int
    lines: tuple[Line, ...]
    hidden: int
    binary: bool


@dataclass(frozen=True, slots=True)
class Patch:
    """A coding submission: the agent's ``message``, the ``header`` line saying what the diff
    is (files, base..commit, branch), and each file's diff."""

    message: str
    header: str
    files: tuple[FileDiff, ...]


def patch(attempt: Attempt | None) -> Patch | None:
    """The coding change an attempt's submission holds, per file; None for any other."""
    if attempt is None or attempt.submission is None:
        return None
    submission, notes = attempt.submission, attempt.notes
    diff = patch_at(submission, notes.patch_start, notes.patch_end)
    if diff is None:
        return None
    # reins' header is the last one before the patch (the message comes before it)
    at = submission.rfind("\n" + HEADER, 0, notes.patch_start)
    message = submission[:at].rstrip()
    header = submission[at + 1 :].split("\n", 1)[0].removeprefix("## ")
    return Patch(message, header, tuple(_files(diff)))


def _files(diff: str) -> list[FileDiff]:
    chunks: list[list[str]] = []
    for line in diff.splitlines():
        if line.startswith("diff --git ") or not chunks:
            chunks.append([])
        chunks[-1].append(line)
    return [_file(chunk) for chunk in chunks if chunk]


def _file(chunk: list[str]) -> FileDiff:
    head = chunk[0]
    path = head.rsplit(" b/", 1)[-1] if head.startswith("diff --git ") else "(patch)"
    lines: list[Line] = []
    in_hunk = False  # before the first hunk every line is git's own (index, modes, ---/+++)
    for text in chunk[1:]:
        in_hunk = in_hunk or text.startswith("@@")
        lines.append(_line(text) if in_hunk else Line("meta", text))
    added = sum(1 for line in lines if line.kind == "add")
    removed = sum(1 for line in lines if line.kind == "del")
    binary = any(t.startswith(("Binary files ", "GIT binary patch")) for t in chunk[1:])
    shown = tuple(lines[:MOST_LINES])
    return FileDiff(path, added, removed, shown, len(lines) - len(shown), binary)


def _line(text: str) -> Line:
    if text.startswith("@@"):
        return Line("hunk", text)
    if text.startswith("+"):
        return Line("add", text)
    if text.startswith("-"):
        return Line("del", text)
    if text.startswith("\\"):  # "\ No newline at end of file"
        return Line("meta", text)
    return Line("same", text)
