"""The submission of a coding agent's turn: its final message, then the diff, as one text.

It is what the ledger records, ``reins log`` prints, the dashboard shows and the export
carries::

    <the agent's final message>

    ## Changes: 2 file(s), git diff --binary 1a2b3c4d5e6f..7a8b9c0d1e2f (branch reins/slugify)

    ```diff
    diff --git a/textkit/__init__.py b/textkit/__init__.py
    …
    ```

The fence is longer than any run of backticks in the diff, so the diff cannot end it early.
The message is cut at :data:`MESSAGE_CAP` characters (saying so); the patch is never cut: it
is the change that is judged, recorded whole (:mod:`reins.workspace.change` bounds it by
``[workspace] max_bytes`` and keeps it UTF-8, so the patch read back is its exact bytes).
A change refused for its size has no patch here, only the header saying why.

Where the patch lies is not read back from the text: :func:`compose` returns it with the text
(:class:`Submission`, character offsets), the attempt's notes record it, and every reader
takes the patch at that span (:func:`patch_at`), so nothing the agent writes in its message
decides what is judged, exported or retried. :func:`patch_of`, which parses the text, is kept
for attempts recorded before the span was.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MESSAGE_CAP = 16_000
HEADER = "## Changes: "
_FENCE = re.compile(r"^(`{3,})diff\n", re.M)


@dataclass(frozen=True, slots=True)
class Submission:
    """A coding turn's submission: its ``text``, and where its patch lies in it
    (``text[start:end]``, character offsets; an empty span when the turn has no patch)."""

    text: str
    start: int
    end: int

    @property
    def patch(self) -> str | None:
        return self.text[self.start : self.end] or None

    def span_in(self, recorded: str) -> tuple[int, int]:
        """The patch's span in ``recorded``, this submission as the ledger keeps it.

        Recording may escape what the message holds (a lone surrogate), which moves the patch
        but leaves the rest as it is; a text cut short has lost the patch's end, so its span
        is empty."""
        tail = self.text[self.start :]
        if not recorded.endswith(tail):
            return 0, 0
        moved = len(recorded) - len(self.text)
        return self.start + moved, self.end + moved


def compose(
    message: str,
    diff: bytes,
    *,
    files: int,
    base: str,
    commit: str | None,
    branch: str,
    refused: str | None = None,
) -> Submission:
    """The submission of one turn (``refused``: why the change was not taken)."""
    message = message.strip()
    if len(message) > MESSAGE_CAP:
        left = len(message) - MESSAGE_CAP
        message = message[:MESSAGE_CAP] + f"\n… ({left} more characters of the final message)"
    said = message or "(the agent's final message was empty)"
    if refused is not None:
        return _without(f"{said}\n\n{HEADER}refused, {refused}: not recorded, not judged\n")
    if not diff or commit is None:
        return _without(
            f"{said}\n\n{HEADER}none: the workspace holds the base revision {base[:12]}\n"
        )
    patch = diff.decode("utf-8", "replace")
    longest = max((len(run) for run in re.findall(r"`+", patch)), default=0)
    fence = "`" * max(3, longest + 1)
    head = (
        f"{HEADER}{files} file(s), git diff --binary {base[:12]}..{commit[:12]} (branch {branch})"
    )
    body = patch if patch.endswith("\n") else patch + "\n"
    before = f"{said}\n\n{head}\n\n{fence}diff\n"
    start = len(before)
    # The span holds the patch as taken; a newline added to close the fence is not in it.
    return Submission(f"{before}{body}{fence}\n", start, start + len(patch))


def _without(text: str) -> Submission:
    return Submission(text, len(text), len(text))


def patch_at(submission: str | None, start: int | None, end: int | None) -> str | None:
    """The patch of a recorded submission, at the span its attempt notes (None: it has none).

    An attempt recorded before the span was noted has none: its patch is read back from the
    text by :func:`patch_of` (which reads from the last header, so a header in the message
    does not fool it either; the span needs no such care). A span outside the text gives no
    patch, never a parse."""
    if start is None or end is None:
        return patch_of(submission)  # recorded before the span was: parse the text
    if submission is None or not 0 <= start <= end <= len(submission):
        return None
    return submission[start:end] or None


def patch_of(submission: str | None) -> str | None:
    """The diff part of a submission :func:`compose` wrote, parsed back from its text (None
    when it has none): for attempts recorded without the span (see :func:`patch_at`)."""
    if not submission:
        return None
    at = submission.rfind("\n" + HEADER)
    if at < 0:
        return None
    rest = submission[at + 1 :]
    opened = _FENCE.search(rest)
    if opened is None:
        return None
    fence = opened.group(1)
    start = opened.end()
    end = rest.find(f"\n{fence}\n", start - 1)
    return rest[start : end + 1] if end >= start - 1 else None
