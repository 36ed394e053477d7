"""A coding item's change as a reviewer reads it: the agent's message, then the diff per file.

A coding turn's submission is the agent's final message, a ``## Changes:`` header and the whole
patch in a fenced block (:mod:`reins.workspace.submission`); the patch is read at the span the
attempt notes, as the export reads it. The item page and the review queue
show it as code: each file of the patch on its own, its added, removed and unchanged lines
apart (the templates colour them), and beside it the test output of the last judged turn (its
facts). A file's lines are bounded (:data:`MOST_LINES`), saying how many were left out; the
ledger keeps the whole patch.

A file's path is read from git's own headers, never guessed from a split on " b/" (a file
named ``x.py b/README.md`` is not ``README.md``): the ``---``/``+++`` names, else the
``diff --git`` line, whose two names are the same one (reins takes diffs with
``--no-renames``). A name git quotes (``core.quotePath``: non-ASCII bytes, a quote, a
backslash, a control character) is unquoted by git's C-quoting rules and decoded as UTF-8; a
control character then shows as its escape. A binary file's base85 patch is no reading: it
shows as "binary file changed".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reins.store.model import Attempt
from reins.workspace.submission import HEADER, patch_at

MOST_LINES = 2_000  # lines of one file's diff shown on a page
BINARY = "binary file changed"
_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


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
    lines: list[Line] = []
    in_hunk = False  # before the first hunk every line is git's own (index, modes, ---/+++)
    binary = False
    head: list[str] = []
    for text in chunk[1:]:
        if not in_hunk and text.startswith(("GIT binary patch", "Binary files ")):
            binary = True  # what follows is base85 (or nothing): no reading for a person
            lines.append(Line("meta", BINARY))
            break
        in_hunk = in_hunk or text.startswith("@@")
        if not in_hunk:
            head.append(text)
        lines.append(_line(text) if in_hunk else Line("meta", text))
    added = sum(1 for line in lines if line.kind == "add")
    removed = sum(1 for line in lines if line.kind == "del")
    shown = tuple(lines[:MOST_LINES])
    path = _path(chunk[0], head)
    return FileDiff(path, added, removed, shown, len(lines) - len(shown), binary)


def _path(first: str, head: list[str]) -> str:
    """The file's path, as git's headers name it (see the module's doc)."""
    named = {}
    for text in head:  # "--- a/NAME" and "+++ b/NAME", or /dev/null
        if text.startswith(("--- ", "+++ ")):
            name = _name(text[4:], tab=True)
            if name is not None and name != "/dev/null":
                named[text[0]] = name.removeprefix("b/" if text[0] == "+" else "a/")
    if named:
        return _shown(named.get("+") or named["-"])
    if not first.startswith("diff --git "):
        return "(patch)"
    rest = first.removeprefix("diff --git ")
    if rest.startswith('"'):  # a quoted name: the first is whole up to its closing quote
        a = _unquote(rest)
        if a is not None:
            return _shown(a.removeprefix("a/"))
    # "a/NAME b/NAME", the same NAME twice: its length is fixed by the line's
    half = (len(rest) - 5) // 2
    name = rest[2 : 2 + half]
    if rest == f"a/{name} b/{name}":
        return _shown(name)
    return _shown(rest)  # not git's form: the line as it is, never a guess


def _name(text: str, *, tab: bool = False) -> str | None:
    """A name of a ---/+++ line: quoted, or as it is (git ends a name that holds a space
    with a tab, ``tab``)."""
    if text.startswith('"'):
        return _unquote(text)
    return text.removesuffix("\t") if tab else text


def _unquote(text: str) -> str | None:
    """The C-quoted string at the start of ``text`` (git's quoting: ``\\``, ``\\"``,
    ``\\t`` and the like, and ``\\ooo`` for a byte) decoded as UTF-8; None when it is not
    closed, or holds an escape git never writes."""
    out = bytearray()
    i = 1
    while i < len(text):
        c = text[i]
        if c == '"':
            return out.decode("utf-8", "replace")
        if c != "\\":
            out += c.encode("utf-8")
            i += 1
            continue
        nxt = text[i + 1 : i + 2]
        if nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
        elif re.fullmatch(r"[0-3][0-7]{2}", text[i + 1 : i + 4]):
            out.append(int(text[i + 1 : i + 4], 8))
            i += 4
        else:
            return None
    return None


def _shown(path: str) -> str:
    """A path a person reads: a control character (a tab, a newline) as its escape."""
    return _CONTROL.sub(lambda m: repr(m.group(0))[1:-1], path)


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
