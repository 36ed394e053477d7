"""One test per function still to write: each is an item of the coding quest."""

from __future__ import annotations

import pytest
from textkit import count_vowels, initials, is_palindrome, reverse_words, slugify

pytestmark = pytest.mark.task


def test_slugify() -> None:
    assert slugify("Hello, World!") == "hello-world"
    assert slugify("  Ready -- Set -- Go  ") == "ready-set-go"
    assert slugify("Crème brûlée 2") == "cr-me-br-l-e-2"


def test_reverse_words() -> None:
    assert reverse_words("one two  three") == "three two one"
    assert reverse_words("It's late, isn't it?") == "it isn't late It's"


def test_is_palindrome() -> None:
    assert is_palindrome("Never odd or even")
    assert is_palindrome("A man, a plan, a canal: Panama!")
    assert not is_palindrome("palindrome")


def test_count_vowels() -> None:
    assert count_vowels("Education") == 5
    assert count_vowels("rhythm") == 0
    assert count_vowels("AEIOU aeiou") == 10


def test_initials() -> None:
    assert initials("ada king lovelace") == "A.K.L."
    assert initials("  grace   hopper ") == "G.H."
