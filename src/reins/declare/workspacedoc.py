"""quest.toml's ``[workspace]`` table → a :class:`~reins.workspace.spec.Workspace`.

Each value is checked where it is written: a bad one is a DocumentError at its line. Folders
(``repo``, ``worktrees``, ``hidden``, each of ``read``) are relative to the quest folder (``~``
is the HOME in ``read``), and made absolute here (a ``hidden`` naming a folder of a git ref,
``refs/…:FOLDER``, is kept as written),
so the quest means the same repository from whatever folder a command runs.
"""

from __future__ import annotations

import os
from dataclasses import fields
from pathlib import Path
from typing import Any, Protocol

from reins.errors import DocumentError
from reins.workspace.spec import HiddenRef, Workspace, WorkspaceValueError, check_field

TABLE = "workspace"
KEYS = tuple(f.name for f in fields(Workspace))
KINDS: dict[str, type] = {"judge": list, "read": list, "network": list, "setup": list,
                          "setup_files": list, "plugins": list, "max_files": int,
                          "max_bytes": int}  # fmt: skip


class Doc(Protocol):
    """What the table is read from (:class:`reins.declare.questdoc.Doc` is one)."""

    data: dict[str, Any]

    def get(self, table: str, key: str, kind: type, default: Any) -> Any: ...

    def error(self, table: str, key: str, message: str) -> DocumentError: ...


def read_workspace(doc: Doc, folder: Path) -> Workspace | None:
    """The quest's workspace, or None when quest.toml has no ``[workspace]`` table."""
    if TABLE not in doc.data:
        return None
    values: dict[str, Any] = {}
    for key in KEYS:
        value = doc.get(TABLE, key, KINDS.get(key, str), None)
        if value is None:
            continue
        try:
            check_field(key, value)
        except WorkspaceValueError as exc:
            raise doc.error(TABLE, key, f"{key}: {exc.message}") from None
        values[key] = value
    remote = values.get("remote")
    if remote is not None and not _is_url(remote):  # a path: from the quest folder
        values["remote"] = str((folder / Path(remote).expanduser()).resolve())
    for key in ("repo", "worktrees", "hidden"):
        if key in values and not (key == "hidden" and HiddenRef.parse(values[key])):
            values[key] = str((folder / values[key]).resolve())
    if "read" in values:
        values["read"] = [str((folder / Path(p).expanduser()).resolve()) for p in values["read"]]
    python = values.get("python")
    if python is not None and not python.startswith("$REINS_ENV"):
        # not resolved: a virtual environment's python is a link its pyvenv.cfg gives meaning
        values["python"] = os.path.normpath(folder / Path(python).expanduser())
    values.setdefault("repo", str(folder))
    return Workspace(**values)


def _is_url(text: str) -> bool:
    """Whether a remote is written as a URL (``scheme://``, or ssh's ``[user@]host:path``)
    rather than a path."""
    if "://" in text:
        return True
    head, sep, _ = text.partition(":")
    return bool(sep) and "/" not in head and len(head) > 1
