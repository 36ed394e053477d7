"""An item's key made safe for git and the file system: its branch and its workspace's folder.

A key may be any text (``tests/test_slug.py::test_unicode``). Its slug keeps letters, digits,
``.``, ``_`` and ``-``, turns every other run into one ``-``, and, when that changed anything or
cut it short, ends with a short hash of the whole key, so two keys never share a slug. A
branch template's ``{quest}`` is the quest's name made safe the same way (:func:`for_quest`).
"""

from __future__ import annotations

import hashlib
import re

from reins.workspace.spec import KEY, QUEST

MAX_SLUG = 60
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def slug(key: str) -> str:
    """``key`` as one safe path component and branch component (never ``.`` or ``..``)."""
    text = _UNSAFE.sub("-", key).strip("-.")
    text = re.sub(r"\.{2,}", ".", text)
    if text.endswith(".lock"):
        text = text[: -len(".lock")]
    if text == key and 0 < len(text) <= MAX_SLUG:
        return text
    digest = hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=4).hexdigest()
    return f"{text[:MAX_SLUG].rstrip('-.')}-{digest}".lstrip("-")


def for_quest(template: str, quest: str) -> str:
    """``template`` with ``{quest}`` the quest's name made safe (``reins/{quest}/{key}`` →
    ``reins/fix-tests/{key}``); a template without it is returned as it is."""
    return template.replace(QUEST, slug(quest))


def branch_of(template: str, key: str) -> str:
    """The branch of item ``key`` under ``template`` (``reins/fix/{key}`` → ``reins/fix/<slug>``).
    A ``{quest}`` no quest filled (:func:`for_quest`: a library's own workspaces, outside any
    ledger) is left out with its folder: ``reins/{quest}/{key}`` → ``reins/<slug>``."""
    folders = [name for name in template.split("/") if name != QUEST]
    return "/".join(folders).replace(KEY, slug(key))
