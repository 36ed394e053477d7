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
``[workspace] max_bytes`` and keeps it UTF-8, so :func:`patch_of` gives back its exact bytes).
A change refused for its size has no patch here, only the header saying why.
"""

from __future__ import annotations

import re

MESSAGE_CAP = 16_000
HEADER = "## Changes: "
_FENCE = re.compile(r"^(`{3,})diff\n", re.M)


def compose(
    message: str,
    diff: bytes,
    *,
    files: int,
    base: str,
    commit: str | None,
    branch: str,
    refused: str | None = None,
) -> str:
    """The submission text of one turn (``refused``: why the change was not taken)."""
    message = message.strip()
    if len(message) > MESSAGE_CAP:
        left = len(message) - MESSAGE_CAP
        message = message[:MESSAGE_CAP] + f"\n… ({left} more characters of the final message)"
    said = message or "(the agent's final message was empty)"
    if refused is not None:
        return f"{said}\n\n{HEADER}refused, {refused}: not recorded, not judged\n"
    if not diff or commit is None:
        return f"{said}\n\n{HEADER}none: the workspace holds the base revision {base[:12]}\n"
    patch = diff.decode("utf-8", "replace")
    longest = max((len(run) for run in re.findall(r"`+", patch)), default=0)
    fence = "`" * max(3, longest + 1)
    head = (
        f"{HEADER}{files} file(s), git diff --binary {base[:12]}..{commit[:12]} (branch {branch})"
    )
    body = patch if patch.endswith("\n") else patch + "\n"
    return f"{said}\n\n{head}\n\n{fence}diff\n{body}{fence}\n"


def patch_of(submission: str | None) -> str | None:
    """The diff part of a submission :func:`compose` wrote (None when it has none)."""
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
