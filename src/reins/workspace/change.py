"""What an agent changed, read by reins itself: its workspace staged with reins' own index,
committed in reins' own store, and the patch from the base.

Nothing the agent can write decides what is read: not its index (a ``--skip-worktree`` or
``--assume-unchanged`` flag on a file it then edited counts for nothing), not its commits, refs
or config (reins reads the work tree's files, with its own index and store, under the settings
of :mod:`reins.workspace.git`). Ignored files (the agent's ``.gitignore`` included) and
untracked-but-excluded ones are not part of the change, so they are not part of what is judged
either (:mod:`reins.workspace.judgetree` judges the patch alone).

A change is measured before it is read: the files it touches are listed from their metadata
(no file is read) and their sizes added up; over ``max_files`` or ``max_bytes`` it is refused
(a located FAIL fact, nothing staged, nothing stored). The patch is read up to ``max_bytes``
and refused past it too (a deleted file's lines count). So reins' memory, and its stores,
stay bounded whatever the agent writes. An item that starts from a commit of reins' own
beyond the base (a land item, from its integration commit) carries that commit's patch: the
cap is on what the agent brings, so the patch may be larger by what it carried.

The patch is ``git diff --binary`` from the base, recorded whole as text: a file whose content
is not UTF-8 (a Latin-1 text, which git would show as raw bytes) is shown as binary, as git's
base85 patch, so the recorded text is the exact patch and applies byte for byte.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from reins.values import Fact
from reins.workspace.git import DIFF_OPTIONS, capped
from reins.workspace.workspaces import Workspaces

CHANGE_RULE = "reins:change"
"""The rule id of the facts reins itself raises about a change (too large)."""


@dataclass(frozen=True, slots=True)
class Change:
    """One turn's change: the commit in the item's store and its patch from the base, or why
    it was refused (``refused``: a fact; then ``commit`` is None and the patch empty)."""

    commit: str | None
    patch: bytes
    files: int
    refused: Fact | None = None
    carried: int = 0  # bytes of the patch that were the origin's, not the agent's

    @property
    def changed(self) -> bool:
        return bool(self.patch)


def take(
    ws: Workspaces, key: str, start: str, *, message: str, origin: str | None = None
) -> Change:
    """Stage item ``key``'s workspace as it stands, commit it on top of ``start`` in the
    item's store, and return the change from the base. ``origin`` is the commit of reins' own
    the item started from, when it is not the base (a land item's integration commit).

    Raises:
        WorkspaceError: git failed (the workspace is gone, the disk is full).
    """
    spec = ws.workspace
    ws.seal(key)
    carried = 0 if origin in (None, ws.base) else _carried(ws, key, origin)
    listed = _listed(ws, key, spec.max_files)
    if listed is None:
        return _refused(f"more than {spec.max_files} files", "", spec.max_files, spec.max_bytes)
    size = _size(ws.path_of(key), listed)
    if len(listed) > spec.max_files or size > spec.max_bytes:
        shown = f"{len(listed)} files, {size} bytes"
        return _refused(shown, "", spec.max_files, spec.max_bytes)
    # a file under a folder the agent replaced by a link (or a file) is gone: git add would
    # refuse the whole change ("beyond a symbolic link"), so its entry is dropped first
    gone = [p for p in listed if _beyond_link(ws.path_of(key), p)]
    if gone:
        names = "".join(f"{p}\0" for p in gone).encode("utf-8", "surrogateescape")
        ws.run(key, ["update-index", "--force-remove", "-z", "--stdin"], stdin=names)
    kept = [p for p in listed if p not in set(gone)]
    if kept:  # only the paths listed: git walks the workspace once, not twice
        paths = "".join(f"{p}\0" for p in kept).encode("utf-8", "surrogateescape")
        # --ignore-errors: a file the agent made unreadable is left out, not the whole change
        add = ["add", "--all", "--ignore-errors", "--pathspec-from-file=-", "--pathspec-file-nul"]
        ws.run(key, add, stdin=paths)
    tree = ws.run(key, ["write-tree"]).decode().strip()
    commit = start
    if listed:  # something was listed; if it came to nothing, the patch says so (empty)
        made = ["commit-tree", tree, "-p", start, "-m", message]
        commit = ws.run(key, made).decode().strip()
    ws.run(key, ["update-ref", f"refs/heads/{ws.branch_of(key)}", commit], tree=False)
    ws.holds(key, commit)  # the workspace is that commit now (and its ignored files)
    patch, over = _patch(ws, key, commit, spec.max_bytes + carried)
    if over:
        brought = f"more than {spec.max_bytes} bytes" + (
            f" beyond the {carried} of its start" if carried else ""
        )
        return _refused(f"a patch of {brought}", commit, spec.max_files, spec.max_bytes)
    return Change(commit, patch, _files(patch), carried=carried)


CARRIED_CEILING = 1 << 30
"""The most bytes of an origin's patch taken as carried: reins' own commits, but bounded all
the same."""


def _carried(ws: Workspaces, key: str, origin: str) -> int:
    """The size of the patch from the base to ``origin`` (a commit of reins' own)."""
    store = ws.places.item_store(key)
    args = [f"--git-dir={store}", "diff", *DIFF_OPTIONS, ws.base, origin, "--"]
    patch, _ = capped(args, cwd=ws.places.own, limit=CARRIED_CEILING)
    return len(patch)


def _listed(ws: Workspaces, key: str, most: int) -> list[str] | None:
    """The paths the change touches (changed, deleted, new and not ignored), from their
    metadata alone; None when there are more than ``most``."""
    args = ["ls-files", "-z", "--modified", "--deleted", "--others", "--exclude-standard"]
    store = ws.places.item_store(key)
    env = {"GIT_INDEX_FILE": ws.places.index(key)}
    head = [f"--git-dir={store}", f"--work-tree={ws.path_of(key)}"]
    # a path is at most 4096 bytes: this reads no more than the cap allows
    out, over = capped([*head, *args], cwd=ws.path_of(key), env=env, limit=(most + 1) * 4097)
    paths = list(dict.fromkeys(p for p in out.decode("utf-8", "surrogateescape").split("\0") if p))
    return None if over or len(paths) > most else paths


def _beyond_link(folder: str, path: str) -> bool:
    """Whether a folder on the way to ``path`` is a link or a file in ``folder`` now."""
    parts = path.split("/")[:-1]
    for n in range(1, len(parts) + 1):
        step = os.path.join(folder, *parts[:n])
        if os.path.islink(step) or not os.path.isdir(step):
            return os.path.lexists(step)
    return False


def _size(folder: str, paths: list[str]) -> int:
    """The bytes the change brings: each listed file's size as it stands (0 when deleted)."""
    total = 0
    for path in paths:
        try:
            st = os.lstat(os.path.join(folder, path))
        except OSError:
            continue
        total += st.st_size
    return total


def _patch(ws: Workspaces, key: str, commit: str, limit: int) -> tuple[bytes, bool]:
    """The patch from the base to ``commit``, UTF-8 throughout, and whether it is over
    ``limit`` bytes."""
    store = ws.places.item_store(key)
    args = [f"--git-dir={store}", "diff", *DIFF_OPTIONS, ws.base, commit, "--"]
    attributes = os.path.join(store, "info", "attributes")
    if os.path.exists(attributes):
        os.unlink(attributes)
    patch, over = capped(args, cwd=ws.places.own, limit=limit)
    if over or _utf8(patch):
        return patch, over
    # Mark the files whose sections are not UTF-8 as binary, in the store's own attributes
    # (which come before any .gitattributes of the agent's), and take the patch again.
    names = ws.run(key, ["diff", "--name-only", "-z", "--no-renames", ws.base, commit], tree=False)
    paths = [p for p in names.split(b"\0") if p]
    sections = _sections(patch)
    odd = [p for p, sec in zip(paths, sections, strict=False) if not _utf8(sec)]
    os.makedirs(os.path.dirname(attributes), exist_ok=True)
    with open(attributes, "wb") as f:
        for path in odd:
            f.write(b'"/' + _quoted(path) + b'" -diff\n')
    return capped(args, cwd=ws.places.own, limit=limit)


def _sections(patch: bytes) -> list[bytes]:
    """The patch cut into one section per file (each starts with ``diff --git``)."""
    parts = patch.split(b"\ndiff --git ")
    return [parts[0], *(b"diff --git " + p for p in parts[1:])] if parts[0] else parts[1:]


def _quoted(path: bytes) -> bytes:
    """``path`` for a C-quoted attributes pattern: every byte that is not plain ASCII escaped,
    and the pattern characters too, so it names that one file."""
    out = bytearray()
    for byte in path:
        char = chr(byte)
        if byte < 0x20 or byte >= 0x7F or char in '"\\':
            out += f"\\{byte:03o}".encode()
        elif char in "*?[":
            out += b"\\\\" + bytes([byte])
        else:
            out.append(byte)
    return bytes(out)


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _refused(actual: str, commit: str, files: int, size: int) -> Change:
    fact = Fact(
        rule=CHANGE_RULE,
        where="the change",
        expected=f"at most {files} files and {size} bytes ([workspace] max_files, max_bytes)",
        actual=actual,
    )
    return Change(commit or None, b"", 0, fact)


def _files(patch: bytes) -> int:
    """How many files a ``git diff`` touches: one ``diff --git`` header each."""
    return patch.count(b"\ndiff --git ") + patch.startswith(b"diff --git ")
