"""Header fields in real mail, and what a ``local@host`` token is by where it stands.

:func:`fields` finds the header fields of a text on any line, ``>`` quoting included, so
forwarded and quoted headers count too; :func:`classify` says whether a token is a mailbox or a
message id, a news route or part of a URL, from its field and what stands before it. Message
ids are never mailboxes: the ids of ``Message-ID`` (and any field whose name ends in it, such as
``Resent-Message-ID`` or ``X-Original-Message-Id``), of ``Content-ID``, the bracketed ids of
``References``, ``In-Reply-To`` and ``Supersedes`` — also when old mail leaves a ``<`` unclosed
— the ``id`` of a ``Received`` trace, ``mid:``/``cid:``/``news:`` URLs and news attributions.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from enum import StrEnum

MAX_LOOKBACK = 256  # how far back on a line a token's context is read (hostile text is long)
# Reply quoting at the start of a line ("> ", ">> ", "> > "), and a header field's name.
_QUOTING = re.compile(r"(?:[ \t]*>)+ ?")
_NAME = re.compile(r"([A-Za-z][A-Za-z0-9-]*)[ \t]*:(?=[ \t\r\n]|\Z)")  # not "https://"
# A field name glued onto an id list on the same line ("…<a.1@x References: <b.2@y>").
_GLUED = re.compile(r"(?<=[ \t])([A-Za-z][A-Za-z0-9-]*)[ \t]*:(?=[ \t])")

# Fields whose ``local@host`` tokens are message ids (RFC 5322 §3.6.4, RFC 2045 Content-ID);
# a name ending in "message-id" counts too, whatever its prefix. In the list fields only what
# stands inside ``<…>`` is an id: "References: Dr Mensah, a.mensah@uni.example" in a letter
# names a referee, while a msg-id is always in brackets.
_ID_FIELDS = frozenset({"content-id"})
_ID_LIST_FIELDS = frozenset({"in-reply-to", "references", "supersedes"})
# Fields of ``tag=value`` pairs: "=" and ";" separate, so "header.i=@x" is no local part.
TAG_FIELDS = frozenset(
    {
        "dkim-signature",
        "authentication-results",
        "arc-authentication-results",
        "arc-message-signature",
        "arc-seal",
        "received-spf",
    }
)
_ROUTE_FIELDS = frozenset({"path", "xref"})
_ID_SCHEMES = ("mid:", "cid:", "news:", "nntp:")
_RECEIVED_ID = re.compile(r"\bid\s*<?\Z", re.I)  # "with SMTP id <…@…>"
_IN_ARTICLE = re.compile(r"\bIn(?: article| message)? <\Z")  # a news or mail attribution


class Kind(StrEnum):
    """What a ``local@host`` token of a text is."""

    MAILBOX = "mailbox"
    MESSAGE_ID = "message id"
    ROUTE = "news route"
    URL = "part of a URL or host path"


@dataclass(frozen=True, slots=True)
class Field:
    """A header field: the span of the text it covers (name included), its lower-cased name."""

    start: int
    end: int
    name: str


class Fields:
    """The header fields of a text, to look up which one a position is in."""

    def __init__(self, text: str) -> None:
        self._fields = fields(text)
        self._starts = [f.start for f in self._fields]

    def at(self, pos: int) -> Field | None:
        i = bisect.bisect_right(self._starts, pos) - 1
        if i >= 0 and self._fields[i].start <= pos < self._fields[i].end:
            return self._fields[i]
        return None


def title(name: str) -> str:
    """A lower-cased field name as mail writes it: ``x-xxmessage-id`` → ``X-Xxmessage-ID``."""
    return "-".join(part.capitalize() for part in name.split("-")).replace("-Id", "-ID")


def fields(text: str) -> list[Field]:
    """The header fields of ``text``, in order, on any line.

    A field runs over its line and the folded lines after it: lines that start with white
    space once the ``>`` quoting (and the one space a quoting adds) is taken off. An id list
    (``References``…) ends where another field's name is glued onto it on the same line.
    """
    out: list[Field] = []
    current: tuple[int, str] | None = None
    pos = 0
    for line in text.splitlines(keepends=True):
        quoting = _QUOTING.match(line)
        rest = line[quoting.end() :] if quoting else line
        if current is not None and rest[:1] in (" ", "\t") and rest.strip():
            pos += len(line)
            continue
        if current is not None:
            out += _split(text, Field(current[0], pos, current[1]))
            current = None
        name = _NAME.match(rest)
        if name:
            current = (pos, name.group(1).lower())
        pos += len(line)
    if current is not None:
        out += _split(text, Field(current[0], pos, current[1]))
    return out


def _split(text: str, field: Field) -> list[Field]:
    """``field``, cut where other fields are glued onto it when it is an id list."""
    if field.name not in _ID_LIST_FIELDS:
        return [field]
    out: list[Field] = []
    start, name = field.start, field.name
    body = text.index(":", field.start) + 1
    for glued in _GLUED.finditer(text, body, field.end):
        if _inside_closed(text, body, glued.start(), field.end):
            continue  # a "word:" inside <…> is part of an id, not a field of its own
        out.append(Field(start, glued.start(), name))
        start, name, body = glued.start(), glued.group(1).lower(), glued.end()
    out.append(Field(start, field.end, name))
    return out


def _inside_closed(text: str, start: int, pos: int, end: int) -> bool:
    """Whether ``pos`` stands between a ``<`` and its ``>`` in ``text[start:end]``."""
    if text.rfind("<", start, pos) <= text.rfind(">", start, pos):
        return False
    gt, lt = text.find(">", pos, end), text.find("<", pos, end)
    return gt >= 0 and (lt < 0 or gt < lt)


def classify(text: str, start: int, end: int, field: Field | None) -> Kind:
    """What the token at ``text[start:end]`` is, read in ``field`` (None: in a body)."""
    name = field.name if field else ""
    if name in _ID_FIELDS or name.endswith("message-id"):
        return Kind.MESSAGE_ID
    if field is not None and name in _ID_LIST_FIELDS and _bracketed(text, field, start):
        return Kind.MESSAGE_ID
    if name in _ROUTE_FIELDS:
        return Kind.ROUTE
    # Only the start of the token's line matters; look back a bounded way on a long line.
    floor = max(0, start - MAX_LOOKBACK)
    line_start = max(text.rfind("\n", floor, start) + 1, floor)
    before = text[line_start:start]
    if name == "received" and _RECEIVED_ID.search(before):
        return Kind.MESSAGE_ID
    if _IN_ARTICLE.search(before):
        return Kind.MESSAGE_ID
    if before.lower().endswith(_ID_SCHEMES) or before.lower().endswith(
        tuple("<" + s for s in _ID_SCHEMES)
    ):
        return Kind.MESSAGE_ID
    chunk = before.split()[-1] if before and not before[-1].isspace() else ""
    if "://" in chunk:
        return Kind.URL
    if end + 1 < len(text) and text[end] == ":" and not text[end + 1].isspace():
        return Kind.URL  # git@host:repo.git, bob@host:8080
    return Kind.MAILBOX


def _bracketed(text: str, field: Field, start: int) -> bool:
    """Whether a ``<`` of ``field`` is open at ``start``: closed later in the field or never
    (old mail cuts ids short), whatever stands between it and the token."""
    return text.rfind("<", field.start, start) > text.rfind(">", field.start, start)
