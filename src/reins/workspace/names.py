"""An item's key made safe for git and the file system: its branch and its workspace's folder.

A key may be any text (``tests/test_slug.py::test_unicode``). Its slug keeps letters, digits,
``.``, ``_`` and ``-``, turns every other run into one ``-``, and, when that changed anything or
cut it short, ends with a short hash of the whole key, so two keys never share a slug.
"""

from __future__ import annotations

import hashlib
import re

from reins.workspace.spec import KEY

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


def branch_of(template: str, key: str) -> str:
    """The branch of item ``key`` under ``template`` (``reins/{key}`` → ``reins/<slug>``)."""
    return template.replace(KEY, slug(key))
