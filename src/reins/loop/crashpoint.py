"""Crash points: where a test makes a batch round or a landing die as SIGKILL would,
deterministically.

``REINS_CRASH_AT=STEP`` (or ``STEP:N``, the N-th time) kills the process at the named step of
a batch round (see :mod:`reins.loop.batchjob`) or of ``reins land`` (see
:mod:`reins.land.integrate`): nothing is flushed, nothing is cleaned up, exactly as a ``kill
-9`` at that moment. Unset, a crash point costs one dictionary lookup.
"""

from __future__ import annotations

import os
import signal
from collections import Counter

ENV = "REINS_CRASH_AT"
STEPS = (
    "leased",  # a job's items are leased to it; its requests are not recorded
    "composed",  # its requests are recorded; nothing was sent
    "uploaded",  # the provider holds the requests file; its id is not recorded
    "upload-recorded",  # the file's id is recorded; no batch was made
    "created",  # the provider batch exists; its id is not recorded
    "sent",  # the batch's id is recorded
    "downloaded",  # its results are read; none is recorded
    "result",  # one more result is recorded (``result:N``: the N-th)
    "collected",  # every result is recorded; the job is not closed
    # reins land
    "land-merged",  # a change's merge commit is made; the integration's ref has not moved
    "land-ref",  # the integration's ref moved onto it; the user's branch has not
    "land-branch",  # the user's branch moved too; the next change is not merged yet
    "land-item",  # a change that did not land was added as a land item; nothing after it
)
_seen: Counter[str] = Counter()


def crash_point(step: str) -> None:
    """Die here if ``$REINS_CRASH_AT`` names ``step`` (and this is its N-th time)."""
    target = os.environ.get(ENV)
    if not target:
        return
    name, _, nth = target.partition(":")
    if name != step:
        return
    _seen[step] += 1
    if _seen[step] >= int(nth or 1):
        os.kill(os.getpid(), signal.SIGKILL)
