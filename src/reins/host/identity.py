"""Who an agent is: a driver name per MCP session, and the link from a stop hook to it.

An MCP session is one driver: the server names it ``mcp-<6 hex>`` unless told a name, so two
agents on two sessions never share an item. The stop hook runs in another process, started by
the same agent (Claude Code starts both), and must know which driver is its agent's: the
server writes its name into the ledger's meta under the agent's process id (its parent), and
the hook looks up its own ancestors. No client passes a session id to an MCP server, so the
process tree is the one thing both sides share.
"""

from __future__ import annotations

import os
from pathlib import Path

from reins.store.protocol import Store

PREFIX = "agents.agent."
# The hook's ancestors worth looking at: its shell, the agent, the agent's own launcher.
DEPTH = 4


def session_driver(explicit: str | None = None) -> str:
    """``explicit``, else a new name for this session."""
    return explicit or f"mcp-{os.urandom(3).hex()}"


def register(store: Store, driver: str) -> int:
    """Note ``driver`` as the MCP driver of the agent process that started this one."""
    agent = os.getppid()
    store.set_meta(f"{PREFIX}{agent}", driver)
    return agent


def unregister(store: Store, driver: str, agent: int) -> None:
    """Forget the note, unless a newer session of the same agent wrote its own since."""
    key = f"{PREFIX}{agent}"
    if store.meta(key) == driver:
        store.set_meta(key, "")


def parent_of(pid: int) -> int | None:
    """The parent of ``pid`` (Linux's /proc; None where there is none or no /proc)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # "pid (comm) state ppid …": comm may hold spaces and parentheses, so split after the last.
    fields = stat.rpartition(")")[2].split()
    return int(fields[1]) if len(fields) > 1 and fields[1].isdigit() else None


def ancestors(depth: int = DEPTH) -> list[int]:
    """This process's parent, grandparent, …, nearest first."""
    found = [os.getppid()]
    while len(found) < depth:
        parent = parent_of(found[-1])
        if parent is None or parent <= 1:
            break
        found.append(parent)
    return found


def agent_driver(store: Store) -> str | None:
    """The driver of the MCP session started by the agent that started this process, if any."""
    for pid in ancestors():
        name = store.meta(f"{PREFIX}{pid}")
        if name:
            return name
    return None
