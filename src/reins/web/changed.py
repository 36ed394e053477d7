"""What a retry changed: the previous answer of an item beside the one a reviewer decides,
compared line by line and, within a changed run of lines, word by word (stdlib :mod:`difflib`).

The comparison is bounded, since difflib's cost grows with the product of the two sides: the
first :data:`MOST_CHARS` characters of each answer are compared (a card says so when there is
more), and a changed run of more than :data:`MOST_WORDS` words on either side is shown whole,
removed then added, not word by word. Pieces are plain text: the page escapes them and shows
hidden characters as markers, as it does the answers themselves.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher

from reins.store.model import Attempt, AttemptKind
from reins.web.words import answer

MOST_CHARS = 20_000  # characters of each answer compared
MOST_WORDS = 1_000  # words on a side of a changed run compared word by word
EXACT_WORDS = 600  # words of a changed run (both sides) compared with no word left out
# A word or a sign with the spaces after it: a lone space, everywhere, would be a token so common
# that matching it costs the most and shows the least.
_TOKEN = re.compile(r"\w+\s*|[^\w\s]\s*|\s+")


@dataclass(frozen=True, slots=True)
class Piece:
    """A run of the compared answers: ``same`` in both, ``del`` only in the previous one,
    ``add`` only in this one."""

    kind: str
    text: str


@dataclass(frozen=True, slots=True)
class Changed:
    """What changed since ``previous`` (the earlier judged answer): the pieces, the words
    added and removed, how many characters of the longer answer were left uncompared
    (``cut``; 0: the answers were compared whole), and whether a run too long to compare
    word by word is shown whole (``whole``)."""

    previous: Attempt
    pieces: tuple[Piece, ...]
    added: int
    removed: int
    cut: int
    whole: bool = False
    most: int = MOST_CHARS
    most_words: int = MOST_WORDS

    @property
    def answer(self) -> int | None:
        """Which answer of its round the previous one was."""
        return answer(self.previous)


def retried(log: list[Attempt], shown: Attempt | None) -> Changed | None:
    """What changed between the judged answer before ``shown`` in ``log`` and ``shown``'s
    own; None when there is no earlier answer (or nothing shown)."""
    if shown is None or shown.submission is None:
        return None
    before = log[: shown.turn - 1]
    answers = [a for a in before if a.kind is AttemptKind.JUDGED and a.submission is not None]
    if shown.kind is not AttemptKind.JUDGED and answers:
        # A person's re-judge judged an earlier answer again: the one before that is previous.
        answers = [a for a in answers if a.turn < answers[-1].turn]
    previous = answers[-1] if answers else None
    if previous is None or previous.submission is None:
        return None
    return compared(previous, previous.submission, shown.submission)


def compared(previous: Attempt, before: str, after: str) -> Changed:
    """``before`` against ``after``, bounded (see the module's doc)."""
    cut = max(len(before), len(after)) - MOST_CHARS
    old, new = before[:MOST_CHARS], after[:MOST_CHARS]
    old_lines, new_lines = old.splitlines(keepends=True), new.splitlines(keepends=True)
    pieces: list[Piece] = []
    whole = False
    # Lines match on their text, the line break apart (an answer's last line has none); a
    # line many times over is left out of the anchors (autojunk), which keeps this linear.
    old_keys = [line.rstrip("\r\n") for line in old_lines]
    new_keys = [line.rstrip("\r\n") for line in new_lines]
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, old_keys, new_keys).get_opcodes():
        gone, come = "".join(old_lines[i1:i2]), "".join(new_lines[j1:j2])
        if tag == "equal":
            pieces.append(Piece("same", come))
        elif tag == "replace":
            words, too_long = _words(gone, come)
            pieces += words
            whole = whole or too_long
        else:
            pieces += [Piece("del", gone), Piece("add", come)]
    joined = _joined(pieces)
    added, removed = _count(joined, "add"), _count(joined, "del")
    return Changed(previous, joined, added, removed, max(cut, 0), whole)


def _words(gone: str, come: str) -> tuple[list[Piece], bool]:
    """A changed run of lines, word by word; and whether it was too long for that (then it
    is removed and added whole)."""
    old, new = _TOKEN.findall(gone), _TOKEN.findall(come)
    if len(old) > MOST_WORDS or len(new) > MOST_WORDS:
        return [Piece("del", gone), Piece("add", come)], True
    out = []
    # Each word against each costs the product of the two sides: a short run is compared
    # exactly, a longer one with its commonest words left out of the anchors (autojunk).
    common = len(old) + len(new) > EXACT_WORDS
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, old, new, autojunk=common).get_opcodes():
        if tag == "equal":
            out.append(Piece("same", "".join(old[i1:i2])))
            continue
        out += [Piece("del", "".join(old[i1:i2])), Piece("add", "".join(new[j1:j2]))]
    return out, False


def _joined(pieces: list[Piece]) -> tuple[Piece, ...]:
    """Neighbouring pieces of a kind as one, empty ones gone."""
    out: list[Piece] = []
    for piece in pieces:
        if not piece.text:
            continue
        if out and out[-1].kind == piece.kind:
            out[-1] = Piece(piece.kind, out[-1].text + piece.text)
        else:
            out.append(piece)
    return tuple(out)


def _count(pieces: tuple[Piece, ...], kind: str) -> int:
    return sum(len(p.text.split()) for p in pieces if p.kind == kind)
