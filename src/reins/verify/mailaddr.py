"""E-mail addresses in real mail: which tokens of a text are mailboxes, and how two compare.

A text pasted from a mail client holds many ``local@host`` strings that are not mailboxes: the
ids of ``Message-ID``, ``References``, ``In-Reply-To`` and ``Content-ID``, the ``id`` of a
``Received`` trace, the route of a news ``Path``, ``tag=value`` pairs of ``DKIM-Signature`` and
``Authentication-Results``, ``mid:``/``cid:``/``news:`` URLs, the user of a URL
(``https://bob@host/``) or of an scp target (``git@host:repo``). :func:`scan` finds every
``local@host`` token and says which are mailboxes; which header field a token stands in, and
what that makes it, is :mod:`reins.verify.mailfields`' to say (fields count on any line, ``>``
quoting included, so forwarded and quoted headers count too).

A token is a mailbox only as a whole: its local part and domain are maximal (``bob@example.co``
is not in ``bob@example.com``, nor ``ob@…`` in ``bob@…``), sentence punctuation around it is not
part of it (``bob@example.com.`` ends a sentence; ``'bob@…'`` and ``**bob@…**`` are quoted), and
a letter of another alphabet touching it means a longer, internationalized token of which it is
a fragment. Letters of scripts written without spaces (CJK) are boundaries.

Syntax is RFC 5322's ``addr-spec`` with a practical domain (dotted, letter top-level label): a
local part of atoms and quoted strings joined by dots (``"john doe"@example.com``). Comparison
follows RFC 5321: the domain is case-insensitive, the local part is case-sensitive (§2.4; most
hosts fold case, but a copy must not rely on it), and quoting is not part of it (RFC 5322
§3.2.4: ``"john.doe"@x`` is ``john.doe@x``). Addresses keep the spelling they were written in.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace

from reins.verify.mailfields import TAG_FIELDS, Field, Fields, Kind, classify, title

_ATEXT = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+/=?^_`{|}~-"
)
_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_LABEL_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-")
_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
_TLD = re.compile(r"[A-Za-z]{2,63}|xn--[A-Za-z0-9-]{1,59}")
MAX_LOCAL = 256  # RFC 5321 allows 64 octets; scanning further back is wasted on hostile text

__all__ = [
    "FREE_MAIL",
    "Address",
    "Kind",
    "addresses",
    "key",
    "mailboxes",
    "parse",
    "same",
    "scan",
    "why_absent",
]


@dataclass(frozen=True, slots=True)
class Address:
    """An address as written: ``local`` keeps its quotes, ``domain`` its case.

    ``start``/``end`` locate it in the text it was found in; ``field`` is the header field it
    was read from (lower case, "" in a body).
    """

    local: str
    domain: str
    kind: Kind = Kind.MAILBOX
    start: int = 0
    end: int = 0
    field: str = ""

    @property
    def text(self) -> str:
        return f"{self.local}@{self.domain}"

    @property
    def key(self) -> tuple[str, str]:
        """What RFC 5321 compares: the unquoted local part as is, the domain case-folded."""
        return _unquote(self.local), self.domain.lower()

    def describe(self) -> str:
        """Why this token is not a mailbox ("" for a mailbox), for a fact."""
        if self.kind is Kind.MAILBOX:
            return ""
        where = f" ({title(self.field)} field)" if self.field else ""
        return f"a {self.kind}{where}, not a mailbox"


def parse(text: str) -> Address | None:
    """``text`` as one address (no surrounding space or punctuation), or None if it is not."""
    at = _last_at(text)
    if at <= 0:
        return None
    local = _local_before(text, at, strip=False)
    domain = _domain_after(text, at)
    if local is None or domain is None or local[0] != 0 or domain[0] != len(text):
        return None
    return Address(text[:at], text[at + 1 :], end=len(text))


def scan(text: str) -> list[Address]:
    """Every ``local@host`` token of ``text`` that is whole, in order, each with its kind."""
    fields = Fields(text)
    out: list[Address] = []
    at = text.find("@")
    while at >= 0:
        token = _token(text, at, fields.at(at))
        if token is not None:
            out.append(token)
        at = text.find("@", at + 1)
    # An id a header declares is an id wherever it is cited ("the CI job was <id>").
    ids = {a.key for a in out if a.kind is Kind.MESSAGE_ID}
    return [
        replace(a, kind=Kind.MESSAGE_ID) if a.kind is Kind.MAILBOX and a.key in ids else a
        for a in out
    ]


def mailboxes(text: str) -> list[Address]:
    """The mailboxes of ``text``: every occurrence, in order."""
    return [a for a in scan(text) if a.kind is Kind.MAILBOX]


def addresses(text: str) -> list[str]:
    """The distinct mailboxes of ``text`` as first written, in order."""
    seen: dict[tuple[str, str], str] = {}
    for a in mailboxes(text):
        seen.setdefault(a.key, a.text)
    return list(seen.values())


def key(address: str) -> tuple[str, str] | None:
    """The comparison key of ``address`` (see :attr:`Address.key`), or None if malformed."""
    parsed = parse(address)
    return None if parsed is None else parsed.key


def same(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` are the same mailbox (both well formed)."""
    ka = key(a)
    return ka is not None and ka == key(b)


def why_absent(source: str, address: str) -> str:
    """Why ``address`` is not one of the mailboxes of ``source`` ("" when it is).

    Names the near miss when there is one: a message id or route, an address cut short or
    lengthened, a local part in another case.
    """
    wanted = key(address)
    tokens = scan(source)
    if wanted is None:
        return "not a well-formed address"
    if any(t.key == wanted and t.kind is Kind.MAILBOX for t in tokens):
        return ""
    for t in tokens:
        if t.key == wanted:
            return t.describe()
    local, domain = wanted
    for t in (t for t in tokens if t.kind is Kind.MAILBOX):
        tl, td = t.key
        if (tl, td) != (local, domain) and tl.lower() == local.lower() and td == domain:
            return f"the text writes {t.text}: the local part's case matters"
    flat = f"{local}@{domain}"
    for t in (t for t in tokens if t.kind is Kind.MAILBOX):
        whole = f"{t.key[0]}@{t.key[1]}"
        if flat in whole or whole in flat:
            return f"not whole: the text writes {t.text}"
    return "not in the text"


def _unquote(local: str) -> str:
    """The local part without its quoting: each quoted word's content, quoted pairs resolved."""
    out: list[str] = []
    i = 0
    while i < len(local):
        ch = local[i]
        if ch == '"':
            i += 1
            while i < len(local) and local[i] != '"':
                if local[i] == "\\" and i + 1 < len(local):
                    i += 1
                out.append(local[i])
                i += 1
            i += 1
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _last_at(text: str) -> int:
    """The index of the last "@" outside a quoted string (-1 if none)."""
    found, quoted, i = -1, False, 0
    while i < len(text):
        ch = text[i]
        if quoted and ch == "\\":
            i += 2
            continue
        if ch == '"':
            quoted = not quoted
        elif ch == "@" and not quoted:
            found = i
        i += 1
    return found


def _local_before(text: str, at: int, *, strip: bool, tags: bool = False) -> tuple[int, str] | None:
    """The local part that ends at ``at``: (its start, its text), or None if there is none.

    Reads atoms and quoted strings joined by single dots, backwards. With ``strip`` the
    leading punctuation of an unquoted first atom is prose, not address (``'bob@…'``); with
    ``tags`` an "=" ends the local part (``smtp.mailfrom=bob@…``).
    """
    limit = max(0, at - MAX_LOCAL)
    j = at
    while True:
        if j > limit and text[j - 1] == '"':
            k = j - 2
            while k >= limit and not (text[k] == '"' and not _escaped(text, k, limit)):
                if text[k] in "\r\n":
                    return None
                k -= 1
            if k < limit:
                return None
            j = k
        else:
            k = j
            while k > limit and text[k - 1] in _ATEXT and not (tags and text[k - 1] == "="):
                k -= 1
            if k == j:
                return None if j == at else (j, text[j:at])
            j = k
        if j - 1 > limit and text[j - 1] == "." and (text[j - 2] in _ATEXT or text[j - 2] == '"'):
            j -= 1
            continue
        break
    if strip and text[j] != '"':
        while j < at and text[j] not in _ALNUM and text[j] != ".":
            j += 1
    if j >= at or text[j] == "." or text[at - 1] == ".":
        return None
    return j, text[j:at]


def _escaped(text: str, k: int, limit: int) -> bool:
    n = 0
    while k - 1 - n >= limit and text[k - 1 - n] == "\\":
        n += 1
    return n % 2 == 1


def _domain_after(text: str, at: int) -> tuple[int, str] | None:
    """The domain that starts after ``at``: (its end, its text), or None if not well formed.

    Trailing dots and hyphens are punctuation, not part of it: a sentence ends
    (``bob@example.com.``), a dash follows (``bob@example.org-- or call``); no label ends in
    a hyphen, so ``bob@my-lab.example.org`` keeps its inner one.
    """
    end = at + 1
    while end < len(text) and (text[end] in _LABEL_CHARS or text[end] == "."):
        end += 1
    while end > at + 1 and text[end - 1] in ".-":
        end -= 1
    domain = text[at + 1 : end]
    labels = domain.split(".")
    if len(labels) < 2 or not all(_LABEL.fullmatch(label) for label in labels):
        return None
    if not _TLD.fullmatch(labels[-1]) or len(domain) > 253:
        return None
    return end, domain


def _token(text: str, at: int, field: Field | None) -> Address | None:
    """The whole token around the "@" at ``at``, classified, or None if there is none."""
    name = field.name if field else ""
    local = _local_before(text, at, strip=True, tags=name in TAG_FIELDS)
    domain = _domain_after(text, at)
    if local is None or domain is None:
        return None
    (start, local_text), (end, domain_text) = local, domain
    if not _open_before(text, start) or not _open_after(text, end):
        return None
    return Address(local_text, domain_text, classify(text, start, end, field), start, end, name)


def _open_before(text: str, start: int) -> bool:
    """Whether nothing glues onto the token's start (so the token is whole)."""
    if start == 0:
        return True
    before = text[start - 1]
    if before == "@":
        return False
    if before == ".":  # "renée.dubois@": the dot joins a longer local part
        return start < 2 or not _letter_or_digit(text[start - 2])
    return not _letter_or_digit(before)


def _open_after(text: str, end: int) -> bool:
    if end == len(text):
        return True
    after = text[end]
    return after not in "@_" and not _letter_or_digit(after)


def _letter_or_digit(ch: str) -> bool:
    """A character that would continue a token: not one of a script written without spaces."""
    if not (ch.isalnum() or unicodedata.category(ch).startswith("M")):
        return False
    return unicodedata.east_asian_width(ch) not in ("W", "F")


# Public mail providers: an address at one of them is a person's, not an organisation's.
FREE_MAIL = frozenset(
    {
        "gmail.com",
        "googlemail.com",
        "yahoo.com",
        "hotmail.com",
        "outlook.com",
        "live.com",
        "aol.com",
        "icloud.com",
        "proton.me",
        "protonmail.com",
        "gmx.com",
        "mail.com",
        "yandex.com",
    }
)
