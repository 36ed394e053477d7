"""textkit: small text helpers. Two work; the others are yours to write (each has a test)."""

from __future__ import annotations

import re


def words(text: str) -> list[str]:
    """The words of ``text``: runs of letters, digits and apostrophes."""
    return re.findall(r"[\w']+", text)


def squash_spaces(text: str) -> str:
    """``text`` with every run of white space made one space, and none at either end."""
    return " ".join(text.split())


def slugify(text: str) -> str:
    """``text`` for a URL: lower case, each run of other characters than ASCII letters and
    digits one ``-``, none at either end. ``slugify("Hello, World!") == "hello-world"``."""
    raise NotImplementedError


def reverse_words(text: str) -> str:
    """The words of ``text`` (see :func:`words`) in reverse order, joined by one space."""
    raise NotImplementedError


def is_palindrome(text: str) -> bool:
    """Whether ``text`` reads the same backwards, counting only its letters and digits, case
    ignored. ``is_palindrome("Never odd or even") is True``."""
    raise NotImplementedError


def count_vowels(text: str) -> int:
    """How many of the letters of ``text`` are a, e, i, o or u, in either case."""
    raise NotImplementedError


def initials(name: str) -> str:
    """The first letter of each word of ``name``, in capitals, each followed by a dot:
    ``initials("ada king lovelace") == "A.K.L."``."""
    raise NotImplementedError
