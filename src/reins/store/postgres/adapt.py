"""Text that PostgreSQL cannot hold, kept losslessly: a NUL character.

PostgreSQL's ``text`` refuses U+0000, which SQLite stores and a generator may produce. A string
that holds a NUL (or that starts with the escape mark, U+FFFF) is stored as the mark followed by
the string with ``\\`` doubled and NUL written ``\\0``; every other string is stored as it is,
so SQL written by hand sees ordinary text unchanged. Every connection of the engine dumps and
loads ``text`` through these adapters.
"""

from __future__ import annotations

import re

from psycopg import Connection
from psycopg.adapt import Buffer
from psycopg.types.string import StrDumper, TextLoader

MARK = "\uffff"
_ESCAPED = re.compile(r"\\(.)", re.DOTALL)


def encode(text: str) -> str:
    """``text`` as PostgreSQL can store it."""
    if "\x00" in text or text.startswith(MARK):
        return MARK + text.replace("\\", "\\\\").replace("\x00", "\\0")
    return text


def decode(stored: str) -> str:
    """The string :func:`encode` was given."""
    if not stored.startswith(MARK):
        return stored
    return _ESCAPED.sub(lambda m: "\x00" if m.group(1) == "0" else m.group(1), stored[1:])


class SafeTextDumper(StrDumper):
    """Dumps a ``str`` as ``text``, escaping what ``text`` cannot hold."""

    def dump(self, obj: str) -> Buffer | None:
        # encode() inlined: a turn dumps some twenty strings.
        if "\x00" in obj or obj.startswith(MARK):
            return encode(obj).encode()
        return obj.encode()


class SafeTextLoader(TextLoader):
    """Loads ``text``, undoing :class:`SafeTextDumper`'s escape."""

    def load(self, data: Buffer) -> str:
        text = bytes(data).decode()
        return decode(text) if text.startswith(MARK) else text


def install(conn: Connection[object]) -> None:
    """Use the NUL-safe text adapters on ``conn``."""
    conn.adapters.register_dumper(str, SafeTextDumper)
    conn.adapters.register_loader("text", SafeTextLoader)
