"""The project's own environment: what its tests run with, built by its setup, never reins'.

``[workspace] setup`` is shell command lines that build the environment into ``$REINS_ENV``
(a virtual environment, say: ``python -m venv $REINS_ENV``, ``$REINS_ENV/bin/pip install -r
requirements-test.txt``). They run once per base and per content of ``setup_files`` (the
files that declare the dependencies), in a tree of the base, in reins' sandbox: the tree and
the environment writable, the toolchain read-only, no network but the hosts the quest allows
(``[workspace] network``: its package registries) through an egress proxy of their own.

What the setup made in the tree that git does not track (a generated ``_version.py``, compiled
translations) is kept beside the environment and put in every judge's tree and every agent's
workspace, as the project's build would have it. The environment lies in reins' folder;
agents see it read-only, its interpreter first on their ``PATH`` (their own test runs mean what
the judge's do), and nothing but its setup writes it; a digest of every file is written when
it is built and checked before a run uses it, so an environment changed since is built again,
never trusted.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from reins.errors import WorkspaceError
from reins.sandbox import Policy, confine, interpreter, launched, needed, reins_package
from reins.sandbox.allow import Allowance
from reins.sandbox.egress import Egress
from reins.workspace.git import git
from reins.workspace.globs import Globs
from reins.workspace.spec import Workspace

ENV_VARIABLE = "$REINS_ENV"
GENERATED = "generated"  # beside the environment: the files setup made in the tree
SKIPPED = ("__pycache__", ".pytest_cache", ".git")
SETUP_SECONDS = 1800.0
PASSED_THROUGH = ("PIP_", "UV_", "PYTHONHTTPSVERIFY")
"""Variables of yours a setup sees besides its own: how your package installer is configured."""


@dataclass(frozen=True, slots=True)
class Environment:
    """A built environment: ``python``, the interpreter tests run with; ``folder``, what setup
    built (None: an interpreter of yours, used as it is); ``generated``, the folder holding the
    files setup made in the tree (None: none)."""

    python: str
    folder: str | None = None
    generated: str | None = None

    @classmethod
    def of(cls, python: str, folder: str, generated: str) -> Environment | None:
        """The environment a judge's tree names (its fields; "" for none)."""
        return cls(python, folder or None, generated or None) if python else None

    @property
    def readable(self) -> tuple[str, ...]:
        """What a run with this environment must see: the environment and the interpreter's
        installation."""
        return tuple(dict.fromkeys([*([self.folder] if self.folder else []),
                                    *needed([self.python], path=False)]))  # fmt: skip

    def place(self, tree: str, *, prove: bool = False) -> None:
        """Put the files setup made into ``tree`` (a judge's tree, a workspace), as setup made
        them; a path the tree already holds is left as it is. With ``prove`` (agents run
        unconfined, and could have written the environment since), first check it is as its
        setup sealed it.

        Raises:
            WorkspaceError: ``prove``, and the environment changed since it was built.
        """
        if prove and self.folder is not None and not _sealed_as(self.folder):
            raise WorkspaceError(
                f"the project's environment {self.folder} changed since its setup built it (an "
                "agent run with --sandbox none can write it): the judge will not run with it; "
                "the next run builds it again"
            )
        if self.generated is None:
            return
        for folder, _, files in os.walk(self.generated):
            for name in files:
                source = os.path.join(folder, name)
                target = os.path.join(tree, os.path.relpath(source, self.generated))
                if os.path.lexists(target) or _through_link(tree, target):
                    continue
                os.makedirs(os.path.dirname(target), exist_ok=True)
                shutil.copy2(source, target, follow_symlinks=False)


def prepared(
    spec: Workspace,
    *,
    own: str,
    store: str,
    base: str,
    base_tree: Callable[[], contextlib.AbstractContextManager[str]],
    say: Callable[[str], None] = lambda _: None,
) -> Environment | None:
    """The quest's environment for ``base``: built by its setup (in a tree ``base_tree``
    gives) unless one built before is there and unchanged; the interpreter the quest names
    when it has no setup; None when it declares neither (reins' own interpreter).

    Raises:
        WorkspaceError: the setup failed, or the interpreter is not there.
    """
    if not spec.setup:
        if spec.python is None:
            return None
        if not os.path.isfile(spec.python) or not os.access(spec.python, os.X_OK):
            raise WorkspaceError(f"[workspace] python: {spec.python} is not a program")
        return Environment(spec.python)
    key = _key(spec, store, base)
    folder = os.path.join(own, "envs", key)
    python = (spec.python or f"{ENV_VARIABLE}/bin/python").replace(ENV_VARIABLE, folder)
    made = Environment(python, folder, os.path.join(folder + ".files", GENERATED))
    os.makedirs(os.path.dirname(folder), exist_ok=True)
    with _locked(folder + ".lock"):
        if _intact(folder):
            return _checked(made)
        say(f"building the project's environment (setup: {len(spec.setup)} command(s))")
        started = time.monotonic()
        for stale in (folder, folder + ".files"):
            shutil.rmtree(stale, ignore_errors=True)
        os.makedirs(folder)
        with base_tree() as tree:
            with _checked_out(tree, store, base):
                for line in spec.setup:
                    _run(line, tree, folder, spec)
            _keep_generated(tree, store, base, made.generated or "")
        _seal(folder)
        say(f"built the project's environment in {time.monotonic() - started:.0f} s")
    return _checked(made)


def _key(spec: Workspace, store: str, base: str) -> str:
    """What the environment is a function of: the setup, the interpreter, the base, and the
    content of the files that declare the dependencies."""
    listed = git([f"--git-dir={store}", "ls-tree", "-r", "-z", base], cwd=store).stdout
    wanted = Globs.of(spec.setup_files)
    files = sorted(
        (path, meta.split()[-1])
        for meta, path in (e.split("\t", 1) for e in listed.decode().split("\0") if "\t" in e)
        if wanted.match(path)
    )
    said = json.dumps([list(spec.setup), spec.python, base, files])
    return hashlib.sha256(said.encode()).hexdigest()[:24]


def _run(line: str, tree: str, folder: str, spec: Workspace) -> None:
    """One setup command line, confined: ``tree`` and ``folder`` writable, the toolchain and
    ``[workspace] read`` readable, the network only through a proxy to the allowed hosts."""
    argv = ["/bin/sh", "-c", line]
    policy = Policy(view="toolchain", readable=(*interpreter(), *spec.read),
                    hidden=(reins_package(),), writable=(tree, folder), cwd=tree)  # fmt: skip
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": "/tmp", "LANG": "C.UTF-8",
           "REINS_ENV": folder, "PYTHONDONTWRITEBYTECODE": "1"}  # fmt: skip
    env.update({k: v for k, v in os.environ.items() if k.startswith(PASSED_THROUGH)})
    code, said = _confined(argv, launched(argv, policy), Allowance.of(spec.network), env, tree)
    if code != 0:
        tail = said.strip().splitlines()[-5:]
        raise WorkspaceError(
            f"[workspace] setup: `{line}` failed (exit code {code})"
            + (": " + " | ".join(tail) if tail else "")
            + ("" if spec.network else " (it reaches no network: a registry it needs goes in "
               '[workspace] network, as ["pypi.org", "files.pythonhosted.org"])')
        )  # fmt: skip


def _confined(
    argv: list[str], policy: Policy, allowed: Allowance, env: dict[str, str], cwd: str
) -> tuple[int, str]:
    """Run ``argv`` under ``policy`` behind an egress proxy of its own (in a thread of its own,
    whatever the caller runs): its exit code and the end of what it printed."""
    found: list[tuple[int, str]] = []

    async def go() -> None:
        async with Egress(allowed) as egress:
            inner, walled = egress.behind(argv, policy)
            proc = await asyncio.create_subprocess_exec(
                *confine(inner, launched(inner[:1], walled)), cwd=cwd, env=env,
                stdin=subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
            )  # fmt: skip
            try:
                out, _ = await asyncio.wait_for(proc.communicate(), SETUP_SECONDS)
            except TimeoutError:
                proc.kill()
                await proc.wait()
                out = f"killed after {SETUP_SECONDS:g} s".encode()
            found.append((proc.returncode or 0, out.decode("utf-8", "replace")[-4000:]))

    thread = threading.Thread(target=lambda: asyncio.run(go()), name="reins-setup")
    thread.start()
    thread.join()
    if not found:
        raise WorkspaceError("[workspace] setup: its sandbox could not start")
    return found[0]


@contextlib.contextmanager
def _checked_out(tree: str, store: str, base: str) -> Iterator[None]:
    """``tree`` as a checkout of the base while the setup runs: a ``.git`` holding the base
    commit alone (a shallow fetch from reins' store), its index matching the files, so that a
    build reading its version from git (setuptools-scm, hatch-vcs) finds one as in a clone of
    yours, with nothing of your repository's in it (no other commit, no tag, no remote). Gone
    once the setup ends: no judged tree holds it."""
    dot = os.path.join(tree, ".git")
    try:
        git(["init", "--quiet", tree], cwd=tree)
        git(["fetch", "--quiet", "--depth=1", "--no-tags", store, base], cwd=tree)
        git(["update-ref", "HEAD", base], cwd=tree)
        git(["read-tree", base], cwd=tree)
        yield
    finally:
        shutil.rmtree(dot, ignore_errors=True)


def _keep_generated(tree: str, store: str, base: str, into: str) -> None:
    """Copy what setup made in ``tree`` that the base does not hold (links as links) to
    ``into``."""
    listed = git([f"--git-dir={store}", "ls-tree", "-r", "-z", "--name-only", base], cwd=store)
    tracked = set(listed.stdout.decode().split("\0"))
    for folder, dirs, files in os.walk(tree):
        dirs[:] = [d for d in dirs if d not in SKIPPED]
        for name in files:
            source = os.path.join(folder, name)
            path = os.path.relpath(source, tree)
            if path in tracked or name.endswith((".pyc", ".pyo")):
                continue
            target = os.path.join(into, path)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy2(source, target, follow_symlinks=False)


def _digest(folder: str) -> str:
    """Every file under ``folder`` (and the generated files beside it): path, kind, content."""
    sha = hashlib.sha256()
    for top in (folder, folder + ".files"):
        for path in sorted(_files(top)):
            rel = os.path.relpath(path, top)
            if os.path.islink(path):
                sha.update(f"L {rel}\0{os.readlink(path)}\0".encode())
                continue
            with open(path, "rb") as f:
                sha.update(f"F {rel}\0".encode() + hashlib.file_digest(f, "sha256").digest())
    return sha.hexdigest()


def _files(top: str) -> Iterator[str]:
    for folder, dirs, files in os.walk(top):
        links = [d for d in dirs if os.path.islink(os.path.join(folder, d))]
        yield from (os.path.join(folder, name) for name in [*files, *links])


def _seal(folder: str) -> None:
    with open(folder + ".sealed", "w", encoding="utf-8") as f:
        f.write(_digest(folder))


_CHECKED: set[str] = set()  # environments this process proved, each once


def _intact(folder: str) -> bool:
    """Whether ``folder`` is an environment setup finished, unchanged since (proven once per
    process: a confined agent cannot write it)."""
    if folder in _CHECKED:
        return True
    if not _sealed_as(folder):
        return False
    _CHECKED.add(folder)
    return True


def _sealed_as(folder: str) -> bool:
    """Whether ``folder`` holds what its seal says: each file as its setup left it."""
    try:
        with open(folder + ".sealed", encoding="utf-8") as f:
            sealed = f.read().strip()
    except OSError:
        return False
    return os.path.isdir(folder) and _digest(folder) == sealed


def _checked(made: Environment) -> Environment:
    if not os.path.isfile(made.python):
        raise WorkspaceError(f"[workspace] python: the setup made no {made.python}")
    if made.generated is not None and not os.path.isdir(made.generated):
        made = Environment(made.python, made.folder, None)
    return made


@contextlib.contextmanager
def _locked(path: str) -> Iterator[None]:
    """One builder at a time, across processes."""
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _through_link(tree: str, target: str) -> bool:
    """Whether a folder on the way from ``tree`` to ``target`` is a link (a file put there
    would land outside the tree)."""
    folder = os.path.dirname(target)
    while len(folder) > len(tree):
        if os.path.islink(folder):
            return True
        folder = os.path.dirname(folder)
    return False
