"""Path patterns of ``[workspace] judge``: which files of a change are the judge's.

A pattern without a ``/`` matches a file's name in any folder (``conftest.py``, ``*.pth``); one
with a ``/`` matches the path from the repository's top (``tests/**``, ``/setup.cfg``), where
``**`` is any number of folders (none too) and a trailing ``/`` means everything below. ``*``
and ``?`` stay within one name, ``[abc]`` is a set of characters, as in a shell.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

DEFAULT_JUDGE = (
    "conftest.py",
    "pytest.toml",
    ".pytest.toml",
    "pytest.ini",
    ".pytest.ini",
    "tox.ini",
    "setup.cfg",
    "pyproject.toml",
    "sitecustomize.py",
    "usercustomize.py",
    "*.pth",
)
"""The judge's files when a quest names none: every file that configures pytest or runs code
when Python starts. A quest that lists its own replaces these (list them too to keep them)."""
ALWAYS = ("*.pyc", "*.pyo")
"""Compiled Python is never part of a change: the judge runs the sources (a ``.pyc`` that
claims to be a stub's would run code nobody can read in the patch)."""


@dataclass(frozen=True, slots=True)
class Globs:
    """A compiled list of patterns."""

    patterns: tuple[str, ...]
    _regex: re.Pattern[str]

    @classmethod
    def of(cls, patterns: Iterable[str]) -> Globs:
        listed = tuple(patterns)
        parts = [_translate(p) for p in listed] or ["(?!)"]
        return cls(listed, re.compile("|".join(f"(?:{p})" for p in parts), re.S))

    def match(self, path: str) -> bool:
        """Whether the repository path ``path`` (``a/b.py``, no leading ``/``) is matched."""
        return self._regex.fullmatch(path) is not None


def escape(text: str) -> str:
    """``text`` as a pattern that matches itself alone: each ``*``, ``?`` and ``[`` in a set of
    its own (an item's path, written into a pattern, is no pattern of the item's making)."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in text)


def check(pattern: str) -> str | None:
    """Why ``pattern`` is not usable, or None."""
    if not pattern.strip() or pattern.strip("/") == "":
        return "expected a path pattern, such as tests/** or conftest.py"
    if "\0" in pattern or "\\" in pattern:
        return f"{pattern!r:.60} holds a backslash or NUL: write paths with /"
    if any(part in (".", "..") for part in pattern.strip("/").split("/")):
        return f"{pattern!r:.60}: . and .. have no meaning in a pattern"
    return None


def _translate(pattern: str) -> str:
    if "/" not in pattern.rstrip("/") and not pattern.endswith("/"):
        return r"(?:.*/)?" + _name(pattern)
    body = pattern.lstrip("/")
    below = body.endswith("/")
    segments = body.rstrip("/").split("/")
    out = ""
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        if segment == "**":
            out += r".*" if last else r"(?:[^/]*/)*"
        else:
            out += _name(segment) + ("" if last else "/")
    return out + (r"/.*" if below else "")


def _name(segment: str) -> str:
    """One path component's pattern as a regex that never crosses a ``/``."""
    out, i = "", 0
    while i < len(segment):
        c = segment[i]
        i += 1
        if c == "*":
            out += "[^/]*"
        elif c == "?":
            out += "[^/]"
        elif c == "[" and (end := _class_end(segment, i)) > 0:
            chars, i = segment[i:end], end + 1
            negate = chars.startswith("!")
            body = chars[1:] if negate else chars
            body = body.replace("\\", "\\\\").replace("^", "\\^").replace("[", "\\[")
            out += f"[^/{body}]" if negate else f"[{body}]"
        else:
            out += re.escape(c)
    return out


def _class_end(segment: str, start: int) -> int:
    """Where the ``]`` closing a ``[`` set that opens before ``start`` is, or -1."""
    j = start + (segment[start : start + 1] == "!")
    j += segment[j : j + 1] == "]"
    return segment.find("]", j)
