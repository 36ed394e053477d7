"""What already works: these pass at the base and must keep passing (the gate's suite)."""

from __future__ import annotations

from textkit import squash_spaces, words


def test_words() -> None:
    assert words("It's a fine day, isn't it?") == ["It's", "a", "fine", "day", "isn't", "it"]


def test_squash_spaces() -> None:
    assert squash_spaces("  a \t b\n\nc  ") == "a b c"
