"""An agent's whole process tree, found through ``/proc`` and killed, so that nothing survives it.

Killing the agent's process group is not enough: some CLIs start each tool command in a session
of its own (Claude Code does), and a tool may double-fork a daemon that is reparented to init
once its parent exits. So every run carries a marker in its environment
(``REINS_AGENT_RUN=<worktree>#<token>``), which its descendants inherit, and a kill takes the
union of the run's descendants (a snapshot taken before any signal, since an exiting parent
orphans its children) and every process carrying the marker: SIGTERM to each one's process
group and to itself, a grace period, then SIGKILL to whatever is left. A run's marker starts
with its worktree, so the next run on a worktree can first end what a crashed reins left there.
Linux only (``/proc``); elsewhere only the process group is signalled.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterable

MARKER = "REINS_AGENT_RUN"
PROC = "/proc"


def _stat(pid: int) -> tuple[int, int, str] | None:
    """(parent pid, process group, state) of ``pid``, or None when it is gone."""
    try:
        with open(f"{PROC}/{pid}/stat", "rb") as f:
            data = f.read().decode("ascii", "replace")
    except OSError:
        return None
    rest = data[data.rindex(")") + 2 :].split()
    return int(rest[1]), int(rest[2]), rest[0]


def _pids() -> list[int]:
    try:
        return [int(n) for n in os.listdir(PROC) if n.isdigit()]
    except OSError:
        return []


def descendants(pid: int) -> set[int]:
    """Every live descendant of ``pid`` (not ``pid`` itself)."""
    children: dict[int, list[int]] = {}
    for p in _pids():
        st = _stat(p)
        if st is not None:
            children.setdefault(st[0], []).append(p)
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def marked(prefix: str) -> set[int]:
    """Every process whose environment carries a marker starting with ``prefix``."""
    wanted = f"{MARKER}={prefix}".encode()
    found = set()
    for p in _pids():
        if p == os.getpid():
            continue
        try:
            with open(f"{PROC}/{p}/environ", "rb") as f:
                env = f.read()
        except OSError:
            continue
        if any(entry.startswith(wanted) for entry in env.split(b"\0")):
            found.add(p)
    return found


def alive(pid: int) -> bool:
    st = _stat(pid)
    return st is not None and st[2] not in ("Z", "X")


def kill_tree(pid: int | None, marker: str, *, grace: float = 3.0) -> set[int]:
    """End the run rooted at ``pid`` and every process carrying ``marker`` (a prefix of it).

    Returns the processes signalled. Blocks for up to ``grace`` seconds.
    """
    targets = marked(marker)
    if pid is not None:
        targets |= descendants(pid) | {pid}
    _signal(targets, signal.SIGTERM, pid)
    end = time.monotonic() + grace
    while time.monotonic() < end:
        more = marked(marker) | (descendants(pid) if pid is not None else set())
        targets |= more
        if not any(alive(p) for p in targets):
            break
        time.sleep(0.05)
    targets |= marked(marker) | (descendants(pid) if pid is not None else set())
    _signal(targets, signal.SIGKILL, pid)
    return targets


def _signal(pids: Iterable[int], sig: signal.Signals, root: int | None) -> None:
    mine = os.getpgrp()
    groups = {root} if root is not None else set()
    for p in pids:
        st = _stat(p)
        if st is not None and st[2] not in ("Z", "X"):
            groups.add(st[1])
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(p, sig)
    for group in groups:
        if group is not None and group != mine and group > 1:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, sig)
