"""Simulated hosts for the many-hosts tests and bench (issue 42): each a folder holding only a
quest's documents (its workspaces and its copy of the remote beside them), and, where the
machine allows namespaces, a host name and a pid namespace of its own, so that it sees only its
own processes, as another machine would; one bare remote served on 127.0.0.1 by ``git daemon``.

A host with namespaces is a small init process (``unshare --uts --pid --fork --mount-proc``,
reaping what is orphaned in it); each command on it runs through ``nsenter`` into its
namespaces, so every ``reins`` of one host shares that host's name and pids, as the processes
of one machine do. :func:`namespaces` says whether this machine allows it (as root, or through
a user namespace); without it a host is its folder alone (one host name for all).
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO

INIT = """
import os, socket, sys, time
socket.sethostname(sys.argv[1])
print("ready", flush=True)
while True:  # pid 1 of the host: reap what is orphaned here
    try:
        os.wait()
    except ChildProcessError:
        time.sleep(0.2)
"""
QUEST_DOCUMENTS = ("quest.toml", "gate.md", "land.md", "items.jsonl")


def _unshare() -> list[str]:
    user = [] if os.geteuid() == 0 else ["--user", "--map-root-user"]
    return ["unshare", *user, "--uts", "--pid", "--fork", "--mount-proc", "--kill-child"]


@functools.cache
def namespaces() -> bool:
    """Whether a host of its own name and pids can be made here (and entered)."""
    try:
        probe = Host.start_init("probe-host")
    except (OSError, RuntimeError):
        return False
    try:
        argv = [*_enter(probe[1]), "hostname"]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        return done.returncode == 0 and done.stdout.strip() == "probe-host"
    except (OSError, subprocess.TimeoutExpired):
        return False
    finally:
        _end(probe[0])


def _enter(init: int) -> list[str]:
    user = [] if os.geteuid() == 0 else ["--user", "--preserve-credentials"]
    return ["nsenter", f"--target={init}", *user, "--uts", "--pid", "--mount"]


def _end(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGKILL)  # --kill-child takes the host's init, and so all of it
    proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()


def children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


class Host:
    """One simulated host: ``folder`` (its working folder), ``name``, and its namespaces when
    ``isolated`` (else a plain folder of this machine)."""

    def __init__(self, folder: Path, name: str, *, isolated: bool) -> None:
        self.folder, self.name = folder, name
        self._init: subprocess.Popen[bytes] | None = None
        self._prefix: list[str] = []
        if isolated:
            self._init, inner = self.start_init(name)
            self._prefix = [*_enter(inner), f"--wd={folder}"]

    @staticmethod
    def start_init(name: str) -> tuple[subprocess.Popen[bytes], int]:
        """The host's init process (``unshare``) and its own pid as this machine sees it."""
        proc = subprocess.Popen([*_unshare(), sys.executable, "-c", INIT, name],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)  # fmt: skip
        assert proc.stdout is not None
        if proc.stdout.readline().strip() != b"ready":
            proc.wait()
            raise RuntimeError(f"unshare: no host {name} (exit {proc.returncode})")
        inner = children(proc.pid)
        if len(inner) != 1:
            _end(proc)
            raise RuntimeError("unshare: the host's init is not its one child")
        return proc, inner[0]

    def argv(self, ledger: str, *args: str) -> list[str]:
        reins = [sys.executable, "-m", "reins.cli", "--ledger", ledger, "-q", "q", *args]
        return [*self._prefix, *reins]

    def run(self, ledger: str, *args: str, env: dict[str, str] | None = None,
            timeout: float = 600) -> subprocess.CompletedProcess[str]:  # fmt: skip
        """``reins ARGS`` on this host, to its end."""
        return subprocess.run(self.argv(ledger, *args), cwd=self.folder, env=env,
                              capture_output=True, text=True, timeout=timeout)  # fmt: skip

    def start(self, ledger: str, *args: str, log: IO[str]) -> subprocess.Popen[str]:
        """``reins ARGS`` on this host, started; its output appended to ``log``."""
        return subprocess.Popen(self.argv(ledger, *args), cwd=self.folder, stdout=log,
                                stderr=subprocess.STDOUT, text=True)  # fmt: skip

    def kill(self, proc: subprocess.Popen[str]) -> None:
        """SIGKILL the ``reins`` that ``proc`` runs (inside the host: nsenter's child)."""
        if not self._prefix:
            proc.send_signal(signal.SIGKILL)
            return
        for _ in range(200):
            inner = children(proc.pid)
            if inner or proc.poll() is not None:
                break
            time.sleep(0.01)
        for pid in inner:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def close(self) -> None:
        if self._init is not None:
            _end(self._init)
            self._init = None


def make_host(tmp: Path, name: str, source: Path, remote: str, *, isolated: bool) -> Host:
    """A host's folder holding only the quest's documents of ``source`` (its ``quest.toml``
    naming ``remote``), workspaces beside them."""
    quest = tmp / name / "q"
    quest.mkdir(parents=True)
    for document in QUEST_DOCUMENTS:
        (quest / document).write_bytes((source / document).read_bytes())
    toml = (quest / "quest.toml").read_text()
    here = f'[workspace]\nremote = "{remote}"\nworktrees = "../worktrees"\n'
    (quest / "quest.toml").write_text(toml.replace("[workspace]\n", here))
    return Host(tmp / name, name, isolated=isolated)


class GitDaemon:
    """``git daemon`` serving the bare repositories of ``base`` on 127.0.0.1, pushes allowed:
    ``url(name)`` is ``git://127.0.0.1:PORT/NAME``."""

    def __init__(self, base: Path) -> None:
        self.base = base
        for _ in range(5):  # a free port, then git daemon on it; another may take it first
            self.port = _free_port()
            argv = ["git", "daemon", "--reuseaddr", "--listen=127.0.0.1", f"--port={self.port}",
                    f"--base-path={base}", "--export-all", "--enable=receive-pack",
                    str(base)]  # fmt: skip
            self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL)  # fmt: skip
            if self._serving():
                return
            self.close()
        raise RuntimeError("git daemon did not start")

    def _serving(self) -> bool:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return True
            except OSError:
                time.sleep(0.05)
        return False

    def url(self, name: str) -> str:
        return f"git://127.0.0.1:{self.port}/{name}"

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def loop_args(model: str, *more: str) -> Sequence[str]:
    return ("loop", "--model", model, *more)
