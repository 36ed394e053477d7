"""A run's whole process tree, found through ``/proc`` and killed, so that nothing survives it.

Killing the agent's process group is not enough: some CLIs start each tool command in a session
of its own (Claude Code does), and a tool may double-fork a daemon that is reparented to init
once its parent exits. So every run carries a marker in its environment
(``REINS_AGENT_RUN=<folder>#<pid>:<start>#<token>``: the folder it works in, the reins process
that started it and a token of the run), which its descendants inherit, and a kill takes the
union of the run's descendants (a snapshot taken before any signal, since an exiting parent
orphans its children) and every process carrying the marker: SIGTERM to each one's process
group and to itself, a grace period, then SIGKILL to whatever is left. A marker starts with
its folder, so a run of reins can end, when it starts, what a crashed reins left in any folder
of the quest (:func:`end_leftovers`), sparing what a live reins process started.
It also says when a process started and which boot it runs in: a process id alone does not
name a process (ids are reused once one is gone), but (boot, pid namespace, pid, start time)
does; where ``/proc`` does not tell, those functions answer None. Linux only (``/proc``);
elsewhere only the process group is signalled.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time
from collections.abc import Iterable

MARKER = "REINS_AGENT_RUN"
PROC = "/proc"
BOOT_ID = "/proc/sys/kernel/random/boot_id"


def start_time(pid: int) -> int | None:
    """When process ``pid`` started, in clock ticks since boot (``/proc/<pid>/stat``'s 22nd
    field); None when no such process is running: none has that id, it has exited and only
    its zombie waits to be reaped, or ``/proc`` cannot be read."""
    if pid <= 0:
        return None
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces and parentheses itself:
    # the fields that follow start after the last ")".
    fields = stat[stat.rfind(b")") + 2 :].split()
    if len(fields) < 20 or fields[0] in (b"Z", b"X"):  # field 3, the state: a zombie, or dead
        return None
    try:
        return int(fields[19])
    except ValueError:
        return None


def boot_id() -> str | None:
    """The kernel's random id of the current boot (a new one each time the machine starts)."""
    try:
        with open(BOOT_ID, encoding="ascii") as f:
            found = f.read().strip()
    except (OSError, UnicodeDecodeError):
        return None
    return found or None


def pid_namespace() -> str | None:
    """The pid namespace this process sees ``/proc`` through, by its inode number: two
    containers on one kernel share the boot id, not their process ids."""
    try:
        link = os.readlink("/proc/self/ns/pid")  # "pid:[4026531836]"
    except OSError:
        return None
    number = link.partition("[")[2].rstrip("]")
    return number if number.isdigit() else None


def runner() -> str:
    """This process as a marker names it: ``<pid>:<start time>``."""
    return f"{os.getpid()}:{start_time(os.getpid()) or 0}"


def marker(folder: str, token: str) -> str:
    """The marker of a run working in ``folder``, started by this process."""
    return f"{folder}#{runner()}#{token}"


def _runner_alive(value: str) -> bool:
    """Whether the reins process a marker's value names is still running."""
    try:
        pid_text, start_text = value.split("#")[1].split(":")
        pid, start = int(pid_text), int(start_text)
    except (IndexError, ValueError):
        return False
    return start_time(pid) == start and alive(pid)


def end_leftovers(prefix: str, *, grace: float = 1.0) -> set[int]:
    """End every marked process under ``prefix`` whose reins process is gone (a crashed run's
    agents and tests); what live reins processes started is left alone. Returns those ended."""
    orphans = {pid for pid, value in _markers(prefix).items() if not _runner_alive(value)}
    for pid in list(orphans):
        orphans |= descendants(pid)
    if orphans:
        _signal(orphans, signal.SIGTERM, None)
        end = time.monotonic() + grace
        while time.monotonic() < end and any(alive(p) for p in orphans):
            time.sleep(0.05)
        _signal(orphans, signal.SIGKILL, None)
    return orphans


def _markers(prefix: str) -> dict[int, str]:
    """Every process whose marker starts with ``prefix``: pid → the marker's value."""
    wanted = f"{MARKER}={prefix}".encode()
    found = {}
    for p in _pids():
        if p == os.getpid():
            continue
        try:
            with open(f"{PROC}/{p}/environ", "rb") as f:
                env = f.read()
        except OSError:
            continue
        for entry in env.split(b"\0"):
            if entry.startswith(wanted):
                found[p] = entry.split(b"=", 1)[1].decode("utf-8", "replace")
    return found


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
    return set(_markers(prefix))


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


_forker = 0  # the process that forked last, as the child sees it: set just before each fork


def _forking() -> None:
    global _forker
    _forker = os.getpid()


os.register_at_fork(before=_forking)  # subprocess runs it too when it calls a preexec_fn


def die_with_parent() -> None:  # pragma: no cover - runs in the child, before exec
    """Linux: the child gets SIGKILL when the reins thread that started it dies (a crash must
    leave nothing working). For ``preexec_fn``.

    A parent killed after the fork but before the signal was armed sends none: the child,
    already adopted by another, would run on. So it checks, once armed, that its parent is
    still the process that forked it, and exits when not."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
        if _forker and os.getppid() != _forker:
            os._exit(1)
