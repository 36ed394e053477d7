"""Running git for reins: nothing an agent could have written configures, hooks or filters it.

Every git command reins runs goes through :func:`git`, and this module is the one place that
says how git is kept from reading what an agent may have planted:

- the environment (:func:`environment`): none of the caller's ``GIT_*`` variables (a hook's
  ``GIT_DIR``, a ``GIT_INDEX_FILE``, a ``GIT_CONFIG_COUNT`` list of settings); no system or
  global configuration (``GIT_CONFIG_NOSYSTEM``, ``GIT_CONFIG_GLOBAL=/dev/null``, which also
  stands for ``$XDG_CONFIG_HOME/git/config``), no system attributes (``GIT_ATTR_NOSYSTEM``), no
  replacement objects (``GIT_NO_REPLACE_OBJECTS``: a ``refs/replace`` ref cannot make one
  commit read as another), no prompt for a password, and reins as author and committer;
- the settings every command gets (:data:`OPTIONS`): no hooks (``core.hooksPath=/dev/null``),
  no fsmonitor daemon, no attributes or ignore file from the user's home
  (``core.attributesFile``, ``core.excludesFile``), no attributes from a tree (``attr.tree``),
  no untracked cache, split index or sparse checkout, ctime trusted (a file an agent rewrote
  and back-dated still reads as changed), object checking on everything fetched, and no
  automatic gc or maintenance;
- and, by the callers: reins runs git only on git folders of its own (the base store, an
  item's store, the judge's trees), never on the agent's ``.git`` nor by following a
  ``gitdir`` or ``commondir`` an agent could write; diffs are taken with ``--no-ext-diff
  --no-textconv``. A filter or a diff driver exists only where a configuration defines it, and
  the only configuration git reads here is the one reins wrote, so an agent's
  ``.gitattributes`` can name drivers that never run.

The user's own repository is read (``rev-parse``) and written (a fetch onto ``reins/<key>``)
with the same settings, so a hook or fsmonitor an unconfined agent wrote into its
configuration does not run in reins either.
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
ISOLATION = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_NO_REPLACE_OBJECTS": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_LITERAL_PATHSPECS": "1",  # a path is a path: no agent-made name is read as a pattern
}
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's own, in every repository
SETTINGS = {
    "core.hooksPath": os.devnull,
    "core.fsmonitor": "false",
    "core.attributesFile": os.devnull,
    # No tree's .gitattributes either (an agent's `* -diff` would hide its change from every
    # check that reads the patch): newer git reads HEAD's in a bare store; older git ignores it.
    "attr.tree": EMPTY_TREE,
    "core.excludesFile": os.devnull,
    "core.untrackedCache": "false",
    "core.splitIndex": "false",
    "core.sparseCheckout": "false",
    "core.trustctime": "true",
    "core.checkStat": "default",
    "core.symlinks": "true",
    "core.quotePath": "true",
    "core.autocrlf": "false",
    "fetch.fsckObjects": "true",
    "transfer.fsckObjects": "true",
    "receive.fsckObjects": "true",
    "fetch.writeCommitGraph": "false",
    "gc.auto": "0",
    "maintenance.auto": "false",
    "advice.detachedHead": "false",
}
OPTIONS = tuple(arg for name, value in SETTINGS.items() for arg in ("-c", f"{name}={value}"))
"""The ``-c`` settings every command gets, in front of its arguments."""
DIFF_OPTIONS = (
    "--binary",
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--no-renames",
    "--src-prefix=a/",
    "--dst-prefix=b/",
)
"""How reins takes a diff: any bytes (binary files as git's base85 patches), no driver run."""
TIMEOUT = 300.0


def environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a git command: the caller's without any ``GIT_*``, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(IDENTITY)
    env.update(ISOLATION)
    env["LC_ALL"] = "C"
    env.update(extra or {})
    return env


def git(
    args: Sequence[str],
    *,
    cwd: str,
    env: Mapping[str, str] | None = None,
    check: bool = True,
    stdin: bytes | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run ``git ARGS`` in ``cwd``; output as bytes (a diff is any bytes).

    Raises:
        WorkspaceError: git is missing, or (with ``check``) it exited with an error; the
            message quotes the command and git's own last line.
    """
    try:
        done = subprocess.run(
            argv(args),
            cwd=cwd,
            env=environment(env),
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            capture_output=True,
            timeout=TIMEOUT,
        )
    except FileNotFoundError:
        if not os.path.isdir(cwd):
            raise WorkspaceError(f"git {shown(args)}: no folder {cwd}") from None
        raise WorkspaceError("git is not installed (not found on PATH): install git") from None
    except (OSError, subprocess.SubprocessError) as exc:
        raise WorkspaceError(f"git {shown(args)} in {cwd}: {exc}") from None
    if check and done.returncode != 0:
        raise WorkspaceError(f"git {shown(args)} in {cwd} failed: {last_line(done)}")
    return done


def argv(args: Sequence[str]) -> list[str]:
    """The whole argument vector of ``git ARGS`` (for a caller that streams its output)."""
    return ["git", *OPTIONS, *args]


def capped(
    args: Sequence[str], *, cwd: str, env: Mapping[str, str] | None = None, limit: int
) -> tuple[bytes, bool]:
    """The stdout of ``git ARGS``, read up to ``limit`` bytes, and whether it had more: git is
    stopped there, so neither it nor reins ever holds more than that (an agent's 200 MB file).

    Raises:
        WorkspaceError: git is missing or exited with an error before the cap.
    """
    try:
        proc = subprocess.Popen(
            argv(args), cwd=cwd, env=environment(env), stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
    except OSError as exc:
        raise WorkspaceError(f"git {shown(args)} in {cwd}: {exc}") from None
    assert proc.stdout is not None and proc.stderr is not None
    data = bytearray()
    while len(data) <= limit and (chunk := proc.stdout.read1(65536)):  # type: ignore[attr-defined]
        data += chunk
    over = len(data) > limit
    if over:
        proc.kill()
    _, err = proc.communicate(timeout=TIMEOUT)
    if not over and proc.returncode != 0:
        said = subprocess.CompletedProcess(args, proc.returncode, b"", err)
        raise WorkspaceError(f"git {shown(args)} in {cwd} failed: {last_line(said)}")
    return bytes(data[:limit]), over


def text(args: Sequence[str], *, cwd: str, env: Mapping[str, str] | None = None) -> str:
    """The stripped stdout of ``git ARGS`` as text."""
    return git(args, cwd=cwd, env=env).stdout.decode("utf-8", "replace").strip()


def shown(args: Sequence[str]) -> str:
    """The command as an error names it: the subcommand and its first words, not the folders."""
    words = [a for a in args if not a.startswith(("--git-dir=", "--work-tree="))]
    return " ".join(words[:3])


def last_line(done: subprocess.CompletedProcess[bytes]) -> str:
    """git's message: the last line of stderr that says something (else stdout's)."""
    for stream in (done.stderr, done.stdout):
        lines = [ln.strip() for ln in stream.decode("utf-8", "replace").splitlines()]
        said = [ln for ln in lines if ln]
        if said:
            return said[-1][:300]
    return f"exit code {done.returncode}"
