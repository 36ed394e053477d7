"""Whether a judge's tree's index is reins' own: its bytes are what this process last wrote.

git proves a tree against its index (a file whose state on disk differs from what the index
recorded is written again), so the index must be trusted first. An index whose bytes differ
from what this process last wrote (a crash, another run, an agent run unconfined that forged
one to vouch for a forged file) is not used: the tree is then checked out whole.
"""

from __future__ import annotations

import hashlib
import threading

_INDEXES: dict[str, str] = {}
_LOCK = threading.Lock()


def _digest(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def remember(index: str) -> None:
    """Note what reins just wrote to ``index``."""
    digest = _digest(index)
    with _LOCK:
        if digest is None:
            _INDEXES.pop(index, None)
        else:
            _INDEXES[index] = digest


def trusted(index: str) -> bool:
    """Whether ``index`` holds what this process last wrote there."""
    with _LOCK:
        known = _INDEXES.get(index)
    return known is not None and known == _digest(index)
