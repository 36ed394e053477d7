"""A confinement as a value: what a program reins did not write may read, write and reach.

Every caller (the coding agent, the judge's test runs, the HumanEval harness) describes its run
as one :class:`Policy`; :mod:`reins.sandbox.bwrap` is the only code that turns a policy into a
sandbox. Tests assert the policy a caller asks for, not the command line it becomes.
"""

from __future__ import annotations

import functools
import os
import sys
from dataclasses import dataclass
from typing import Literal

View = Literal["host", "toolchain"]
"""What the program sees before anything else is added: ``host``, the whole file system
read-only; ``toolchain``, only the system folders (programs, libraries, the few files of ``/etc``
they read) and, read-only, what the policy names."""

SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
"""The system folders a toolchain view shows (as links where the host has links)."""

ETC = (
    "alternatives", "ca-certificates", "debian_version", "group", "hosts", "ld.so.cache",
    "ld.so.conf", "ld.so.conf.d", "localtime", "mime.types", "nsswitch.conf", "os-release",
    "passwd", "ssl", "timezone",
)  # fmt: skip
"""What of ``/etc`` a toolchain view shows: what the dynamic loader, locales, TLS and user look
ups read; nothing secret (no ``shadow``, no credentials)."""


@dataclass(frozen=True, slots=True)
class Policy:
    """What a confined program may see and do.

    Mounts are made in the order of the fields: the view, ``/dev``, ``/proc``, the scratch
    folders, ``readable``, then ``hidden`` over all of these (so nothing shown before reveals
    a hidden place), then ``shown`` (read-only even inside a hidden folder), ``writable`` and
    ``placed`` last.
    """

    view: View = "toolchain"
    readable: tuple[str, ...] = ()
    """folders and files shown read-only at their own path (a hidden folder covers them)"""
    hidden: tuple[str, ...] = ()
    """folders shown empty and files shown as an empty file"""
    shown: tuple[str, ...] = ()
    """folders and files shown read-only even inside a hidden folder"""
    writable: tuple[str, ...] = ()
    """folders the program may write, at their own path"""
    placed: tuple[tuple[str, str], ...] = ()
    """(source, target): a file or folder of the host shown read-only at another path"""
    scratch: tuple[tuple[str, int], ...] = (("/tmp", 0),)
    """private writable folders, empty at the start and gone at the end: (path, bytes; 0: no
    cap of the sandbox's own)"""
    network: bool = False
    """the host's network; without it the program has a network namespace of its own, with
    only its own loopback"""
    proc: bool = True
    """a ``/proc`` of the program's own process namespace"""
    cwd: str = "/"
    """the working folder inside"""

    def sees(self, path: str) -> bool:
        """Whether the program can read ``path`` (a fact about the policy, for tests and the
        person: a file under a readable folder and not under a hidden one)."""
        path = os.path.abspath(path)
        visible = (
            self.view == "host"
            or any(below(path, p) for p in (*SYSTEM, *self.readable))
            or (self.view == "toolchain" and any(below(path, "/etc/" + e) for e in ETC))
        )
        if any(below(path, p) for p in (*self.shown, *self.writable)):
            return True
        if any(below(path, t) for _, t in self.placed):
            return True
        if any(below(path, s) for s, _ in self.scratch):
            return False  # a scratch folder starts empty
        return visible and not any(below(path, h) for h in self.hidden)

    def may_write(self, path: str) -> bool:
        """Whether the program can write ``path`` on the host (scratch folders are its own)."""
        path = os.path.abspath(path)
        return any(below(path, w) for w in self.writable)


def below(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or inside it (by name, links not followed)."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


@functools.cache
def interpreter() -> tuple[str, ...]:
    """The folders of the Python reins runs on that lie outside the system folders (a virtual
    environment and the installation it is made from), outermost only: what a toolchain view
    must show for ``sys.executable`` to run."""
    found = {
        os.path.realpath(p)
        for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)
    }
    found.add(os.path.dirname(os.path.dirname(os.path.realpath(sys.executable))))
    found.add(os.path.dirname(os.path.abspath(sys.executable)))
    kept = sorted(p for p in found if p != "/" and not any(below(p, s) for s in SYSTEM))
    return tuple(p for p in kept if not any(q != p and below(p, q) for q in kept))


def reins_package() -> str:
    """The folder of reins' own package: hidden from judged code, which must not import reins
    (it would reach the ledger through reins' own API)."""
    # this file is reins/sandbox/policy.py: two folders up is the package
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
