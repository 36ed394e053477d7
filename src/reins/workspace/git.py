"""Running git for reins: a clean environment, no hooks, no pager, and errors that say what failed.

Every command reins runs on a repository goes through :func:`git`. The caller's ``GIT_*``
variables (a hook's ``GIT_DIR``, an ``GIT_INDEX_FILE``) are dropped, so a command acts on the
repository it names and nothing else; the repository's hooks do not run (``git worktree add``
would run ``post-checkout``); reins' own commits carry reins as author and committer, so no
user configuration is needed or read for them.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence

from reins.errors import WorkspaceError

IDENTITY = {
    "GIT_AUTHOR_NAME": "reins",
    "GIT_AUTHOR_EMAIL": "reins@localhost",
    "GIT_COMMITTER_NAME": "reins",
    "GIT_COMMITTER_EMAIL": "reins@localhost",
}
# Options every command gets: no hooks, no fsmonitor daemon, no auto gc while items run.
OPTIONS = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "gc.auto=0")
TIMEOUT = 300.0


def environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a git command: the caller's without any ``GIT_*``, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(IDENTITY)
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    env["LC_ALL"] = "C"
    env.update(extra or {})
    return env


def git(
    args: Sequence[str],
    *,
    cwd: str,
    env: Mapping[str, str] | None = None,
    check: bool = True,
) -> subprocess.CompletedProcess[bytes]:
    """Run ``git ARGS`` in ``cwd``; output as bytes (a diff is any bytes).

    Raises:
        WorkspaceError: git is missing, or (with ``check``) it exited with an error; the
            message quotes the command and git's own last line.
    """
    argv = ["git", *OPTIONS, *args]
    try:
        done = subprocess.run(
            argv,
            cwd=cwd,
            env=environment(env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=TIMEOUT,
        )
    except FileNotFoundError:
        raise WorkspaceError("git is not installed (not found on PATH): install git") from None
    except (OSError, subprocess.SubprocessError) as exc:
        raise WorkspaceError(f"git {' '.join(args[:2])} in {cwd}: {exc}") from None
    if check and done.returncode != 0:
        raise WorkspaceError(f"git {' '.join(args[:3])} in {cwd} failed: {last_line(done)}")
    return done


def text(args: Sequence[str], *, cwd: str, env: Mapping[str, str] | None = None) -> str:
    """The stripped stdout of ``git ARGS`` as text."""
    return git(args, cwd=cwd, env=env).stdout.decode("utf-8", "replace").strip()


def last_line(done: subprocess.CompletedProcess[bytes]) -> str:
    """git's message: the last line of stderr that says something (else stdout's)."""
    for stream in (done.stderr, done.stdout):
        lines = [ln.strip() for ln in stream.decode("utf-8", "replace").splitlines()]
        said = [ln for ln in lines if ln]
        if said:
            return said[-1][:300]
    return f"exit code {done.returncode}"
