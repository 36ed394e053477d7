"""Who holds a lease: the process behind an owner's name, so a lease can outlive no process.

A lease owner is a plain name (``ann``, ``batch:3``). A driver of this module's making also
writes into it the process that holds the lease, precisely enough to tell, from the same host,
whether that process still runs::

    loop@build-7:4242:167641:72b013912d91.1f2e#0
         host   pid  start  boot           token slot

``start`` is the process's start time (clock ticks since boot) and ``boot`` the first 12 hex
digits of the kernel's boot id, then ``-`` and the pid namespace's inode when it is not the
machine's own (a container's): a pid means the same process only within one boot and one pid
namespace, and (pid, start time) is never reused within them. :func:`gone` reads ``/proc``: a
holder on this host whose process no longer runs (killed, exited, a zombie, its pid reused)
holds nothing, and the store ends its leases at once (:meth:`reins.store.ledger.Ledger.lease`).
Any other owner's lease runs out as it always did: a person's or an agent's name, a holder on
another host or in another boot or container, and every owner written before holders were
(``loop@build-7:4242.1f2e#0``), because nothing here can tell whether it is gone.
"""

from __future__ import annotations

import os
import re
import secrets
import socket

# The holder in an owner's name; the last match counts (a driver's own name may hold an "@").
_MARK = re.compile(
    r"@(?P<host>[A-Za-z0-9._-]+):(?P<pid>[0-9]+):(?P<start>[0-9]+)"
    r":(?P<boot>[0-9a-f]{12}(?:-[0-9]+)?)(?=[.#]|\Z)"
)
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
INIT_NAMESPACE = "4026531836"  # the inode of the machine's own pid namespace (PROC_PID_INIT_INO)
_here: tuple[str, str | None] | None = None


def host() -> str:
    """This host's name as a holder writes it (characters outside ``[A-Za-z0-9._-]`` as ``_``)."""
    return _UNSAFE.sub("_", socket.gethostname()) or "localhost"


def boot() -> str | None:
    """Where this process's pids mean what they say: the boot, and the pid namespace if it is
    not the machine's own; None when ``/proc`` does not tell."""
    global _here
    if _here is None:
        from reins.workspace.processes import boot_id, pid_namespace

        found, namespace = boot_id(), pid_namespace()
        digits = found.replace("-", "").lower()[:12] if found else ""
        if len(digits) != 12 or not all(c in "0123456789abcdef" for c in digits):
            here = None
        elif namespace is None or namespace == INIT_NAMESPACE:
            here = digits
        else:
            here = f"{digits}-{namespace}"
        _here = (host(), here)
    return _here[1]


def mark(pid: int | None = None) -> str:
    """``host:pid:start:boot`` of process ``pid`` (this one by default), or ``host:pid`` alone
    when ``/proc`` cannot say when it started or which boot this is."""
    from reins.workspace.processes import start_time

    pid = os.getpid() if pid is None else pid
    started, where = start_time(pid), boot()
    if started is None or where is None:
        return f"{host()}:{pid}"
    return f"{host()}:{pid}:{started}:{where}"


def holder_name(driver: str, *, pid: int | None = None) -> str:
    """A lease owner name for ``driver`` run by process ``pid`` (this one): the driver, the
    holder's :func:`mark` and a random token (two runs of one process are two holders)."""
    return f"{driver}@{mark(pid)}.{secrets.token_hex(2)}"


def gone(owner: str) -> bool:
    """Whether ``owner`` names a holder of this host that no longer runs.

    False whenever that cannot be known: no holder in the name, another host, another boot
    or pid namespace, a process ``/proc`` hides (another user's, under ``hidepid``). True when
    no process of its pid runs any more (or only its zombie), or one does that started at
    another time (its pid was reused).
    """
    matches = list(_MARK.finditer(owner))
    found = matches[-1] if matches else None
    if found is None or found["host"] != host():
        return False
    where = boot()
    if where is None or found["boot"] != where:
        return False
    from reins.workspace.processes import start_time

    pid = int(found["pid"])
    started = start_time(pid)
    if started is not None:
        return started != int(found["start"])  # another process has the pid now: gone
    try:  # no start time: no such process, a zombie, or one /proc hides from this user
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False  # it runs, as another user's process this one may not look at
    return True  # it exists, it is this user's, and it has no start time: a zombie
