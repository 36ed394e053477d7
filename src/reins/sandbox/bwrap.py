"""The one place a :class:`~reins.sandbox.policy.Policy` becomes a sandbox: bubblewrap's
command line, and whether bubblewrap can make a sandbox on this host at all."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Sequence

from reins.errors import ConfigError
from reins.sandbox.policy import ETC, SYSTEM, Policy, below

BWRAP = "bwrap"


def require() -> str:
    """The bubblewrap program, checked to work here.

    Raises:
        ConfigError: it is not installed, or cannot make a sandbox on this host.
    """
    found = shutil.which(BWRAP)
    if found is None:
        raise ConfigError(
            "coding agents and the judge run under bubblewrap by default (--sandbox bwrap), "
            "and it is not installed: apt-get install bubblewrap (Debian, Ubuntu), dnf install "
            "bubblewrap (Fedora); or run them unconfined, which you must say: --sandbox none"
        )
    said = _probe(found)
    if said:
        raise ConfigError(
            f"coding agents and the judge run under bubblewrap by default, and it cannot make "
            f"a sandbox here ({said}): allow unprivileged user namespaces (sysctl "
            "kernel.unprivileged_userns_clone=1), or run them unconfined: --sandbox none"
        )
    return found


def why_not() -> str:
    """Why bubblewrap cannot make a sandbox here ("" when it can)."""
    found = shutil.which(BWRAP)
    return "bwrap is not installed" if found is None else _probe(found)


@functools.cache
def _probe(program: str) -> str:
    probe = Policy(view="toolchain", network=False)
    argv = [*arguments(program, probe), "true"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        return str(exc)
    lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return "" if done.returncode == 0 else (lines[-1] if lines else f"exit {done.returncode}")


def confine(argv: Sequence[str], policy: Policy) -> list[str]:
    """``argv`` run under bubblewrap by ``policy``.

    Raises:
        ConfigError: bubblewrap cannot run here.
    """
    return [*arguments(require(), policy), *argv]


def arguments(program: str, policy: Policy) -> list[str]:
    """bubblewrap's options for ``policy``, up to and including ``--``."""
    out = [program]
    if policy.view == "host":
        out += ["--ro-bind", "/", "/"]
    else:
        out += _toolchain()
    out += ["--dev", "/dev"]
    if policy.proc:
        out += ["--proc", "/proc"]
    for path, size in policy.scratch:
        out += [*(["--size", str(size)] if size else []), "--tmpfs", path]
    for path in dict.fromkeys(policy.readable):
        if os.path.exists(path):
            out += ["--ro-bind", path, path]
    hidden = [h for h in dict.fromkeys(policy.hidden) if h != "/"]
    for path in sorted((h for h in hidden if os.path.isdir(h)), key=lambda p: p.count(os.sep)):
        out += ["--tmpfs", path]  # outer folders first
    for path in hidden:
        if os.path.isfile(path):
            out += ["--ro-bind", os.devnull, path]
    for path in dict.fromkeys(policy.shown):
        if os.path.exists(path) and (policy.view != "host" or any(below(path, h) for h in hidden)):
            out += ["--ro-bind", path, path]
    for path in dict.fromkeys(policy.writable):
        out += ["--bind", path, path]
    for source, target in policy.placed:
        out += ["--ro-bind", source, target]
    out += ["--unshare-all", *([] if not policy.network else ["--share-net"])]
    out += ["--die-with-parent", "--new-session"]
    if os.geteuid() == 0:
        out += ["--cap-drop", "ALL"]
    if policy.view == "toolchain":
        out += ["--remount-ro", "/"]  # the new root itself: nothing but the mounts is there
    out += ["--chdir", policy.cwd, "--"]
    return out


@functools.cache
def _toolchain() -> tuple[str, ...]:
    """The mounts of a toolchain view: the system folders as the host has them (a link stays a
    link: ``/bin`` → ``usr/bin``) and the files of ``/etc`` that programs read to start."""
    out: list[str] = []
    for path in SYSTEM:
        if os.path.islink(path):
            out += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            out += ["--ro-bind", path, path]
    for name in ETC:
        path = os.path.join("/etc", name)
        if os.path.lexists(path):
            out += ["--ro-bind", path, path]
    return tuple(out)
