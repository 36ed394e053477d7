"""Search: the words of an item's texts, as both engines index them, and of what a person types.

An item's texts are its key with its payload (as the ledger stores it: JSON text), and each of
its turns' submission with its facts (JSON text too). A word is a run of letters and digits;
everything else separates words, case is ignored. Each engine keeps an index of these words
that its turns fill as they are recorded (SQLite: two FTS5 tables written by triggers,
PostgreSQL: GIN indexes over ``to_tsvector``), so a search costs what the words it names cost
in the index, not a scan of the log. What is indexed is bounded: the first
:data:`INDEXED` characters of each text (PostgreSQL's ``tsvector`` holds at most a megabyte,
and a submission may be larger). What a person types is bounded too: its first
:data:`MOST_WORDS` words, each cut at :data:`LONGEST` characters.

An item matches a search when one of its texts holds every word searched, each as the start of
one of its words: ``slug`` finds ``slugify`` and ``test_slugify``; ``free mail`` finds
``bob@free-mail.com``. Letters outside ASCII are matched as the engine's tokenizer reads them
(PostgreSQL's depends on the server's locale), and in a payload or facts, where the stored JSON
escapes them, not at all.
"""

from __future__ import annotations

import re

INDEXED = 100_000  # characters of each text that the word indexes cover
MOST_WORDS = 8
LONGEST = 64
_WORD = re.compile(r"[^\W_]+")


def words(text: str) -> tuple[str, ...]:
    """The words searched for in ``text``, in lower case, in order, each once (bounded)."""
    found = dict.fromkeys(w[:LONGEST] for w in _WORD.findall(text.lower()))
    return tuple(found)[:MOST_WORDS]
