"""How the judge runs code it did not write: in reins' one sandbox (:mod:`reins.sandbox`).

The judged program sees the toolchain (the system folders and the interpreter's own) read-only,
writes only the folder it judges (a tree reins resets and proves before every judgment) and a
private ``/tmp`` that is its HOME; reins' own package, reins' folder, the user's repository and
checkout, the ledger, every export and report and the real HOME are out of sight. It has no
network (a namespace of its own, with only its own loopback), a process namespace of its own
whose processes all end with it, and it dies with reins.

Where bubblewrap cannot run at all, the judge runs unconfined (a network and process namespace
of its own where ``unshare`` works, on the host's file system, in a temporary HOME) only where
the run said so (``--sandbox none``), or for a check with no coding item (a file's check, whose
quest has no sandbox to say); otherwise it is the judge's error, never a verdict.
"""

from __future__ import annotations

import dataclasses
import os
import secrets
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from reins import sandbox
from reins.checks._running import Ran, clean_environment, execute
from reins.errors import JudgeError
from reins.sandbox.policy import below
from reins.values import Fact
from reins.workspace import scratch


@dataclass(frozen=True, slots=True)
class Judged:
    """How to run one judged program: in ``folder`` (written by it), seeing ``readable`` too,
    with the network or not; ``unconfined`` allows the fallback where bubblewrap cannot run."""

    folder: str
    readable: tuple[str, ...] = ()
    network: bool = False
    unconfined: bool = False
    require_isolation: bool = False
    python: str = ""
    """the interpreter the run's tests use ("": reins' own); its installation is in
    ``readable``"""
    plugins: tuple[str, ...] = ()
    """the pytest plugins a pytest run loads (``-p`` each)"""


def policy(run: Judged) -> sandbox.Policy:
    """The sandbox of a judged run (a value tests read, not a command line)."""
    shown = (*sandbox.interpreter(), *run.readable)
    own = sandbox.reins_package()
    hidden = (own,) if any(below(own, p) for p in shown) else ()
    return sandbox.Policy(view="toolchain", readable=shown, hidden=hidden, writable=(run.folder,),
                          network=run.network, cwd=run.folder)  # fmt: skip


def run_judged(
    argv: Sequence[str],
    run: Judged,
    *,
    timeout: float,
    keep: int,
    check: str,
    env: dict[str, str] | None = None,
    pass_fds: tuple[int, ...] = (),
) -> Ran:
    """Run ``argv`` as ``run`` says, confined.

    Raises:
        JudgeError: the program cannot start, or cannot be confined where it must be.
    """
    more = env or {}
    reason = sandbox.why_not()
    if not reason:
        argv = sandbox.confine(argv, policy(run))
        return execute(argv, cwd=run.folder, env=clean_environment("/tmp", **more),
                       timeout=timeout, keep=keep, check=check, pass_fds=pass_fds)  # fmt: skip
    if not run.unconfined:
        raise JudgeError(
            check,
            f"the judge runs the code under test under bubblewrap, which cannot run here "
            f"({reason}): install it (apt-get install bubblewrap), or say --sandbox none to "
            "judge unconfined",
        )
    prefix: tuple[str, ...] = ()
    if not run.network:
        prefix = sandbox.isolation() or ()
        if not prefix and run.require_isolation:
            raise JudgeError(check, "cannot run without network on this host (no unshare)")
    with scratch.folder("judged") as home:
        return execute([*prefix, *argv], cwd=run.folder, env=clean_environment(home, **more),
                       timeout=timeout, keep=keep, check=check, pass_fds=pass_fds)  # fmt: skip


@dataclass(slots=True)
class Channel:
    """The verdict's way out of a judged run: a pipe the run writes its report to, behind a
    nonce it reads from another pipe at its start. Neither is a file: nothing the judged code
    writes on disk can stand in for the report, and a report without the nonce is none."""

    nonce: str
    nonce_fd: int
    report_fd: int
    received: bytearray


MAX_REPORT = 16 * 1024 * 1024


@contextmanager
def channel() -> Iterator[Channel]:
    """A channel for one run: pass ``nonce_fd`` and ``report_fd`` to it; once the block ends
    (the run has ended), ``received`` holds what it wrote (at most :data:`MAX_REPORT` bytes,
    more is dropped and the report is then none)."""
    nonce = secrets.token_hex(16)
    nonce_r, nonce_w = os.pipe()
    os.write(nonce_w, nonce.encode("ascii"))
    os.close(nonce_w)
    report_r, report_w = os.pipe()
    received = bytearray()

    def drain() -> None:
        with os.fdopen(report_r, "rb") as f:
            while chunk := f.read(65536):
                if len(received) <= MAX_REPORT:
                    received.extend(chunk)

    reader = threading.Thread(target=drain, daemon=True, name="reins-judged-report")
    reader.start()
    try:
        yield Channel(nonce, nonce_r, report_w, received)
    finally:
        os.close(nonce_r)
        os.close(report_w)
        reader.join(timeout=30)
        if len(received) > MAX_REPORT:
            received.clear()


def within(facts: list[Fact], tree: str) -> list[Fact]:
    """``facts`` with the judge's tree's own path taken out of their text: paths read from
    the tree's top, as the agent knows them (it never sees reins' folders)."""
    prefix = tree.rstrip(os.sep) + os.sep

    def cut(text: str) -> str:
        return text.replace(prefix, "")

    return [dataclasses.replace(f, where=cut(f.where), expected=cut(f.expected),
                                actual=cut(f.actual)) for f in facts]  # fmt: skip
