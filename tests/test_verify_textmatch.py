"""textmatch: normalization, containment, missing tokens, word mode and minimum length."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reins.verify import contains, missing, normalize


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", ""),
        ("   ", ""),
        ("  a  b  ", "a b"),
        ("a\tb\r\nc\n\nd", "a b c d"),
        ("a\u3000b\u00a0c\u0085d", "a b c d"),
        ("cafe\u0301", "caf\u00e9"),
        ("Straße", "Straße"),
    ],
)
def test_normalize_composes_and_folds_whitespace(text: str, expected: str) -> None:
    assert normalize(text) == expected


def test_normalize_can_fold_case() -> None:
    assert normalize("STRASSE Straße", casefold=True) == "strasse strasse"


@pytest.mark.parametrize(
    ("source", "token", "options", "found"),
    [
        ("the quick brown fox", "quick", {}, True),
        ("the quick  brown\nfox", "quick brown fox", {}, True),
        ("caf\u00e9 society", "cafe\u0301", {}, True),
        ("anything", "", {}, False),
        ("anything", "  \t", {}, False),
        ("concatenate", "cat", {}, True),
        ("concatenate", "cat", {"words": True}, False),
        ("a cat sat", "cat", {"words": True}, True),
        ("founded in 2010", "10", {}, True),
        ("founded in 2010", "10", {"words": True}, False),
        ("on 10 May", "10", {"words": True}, True),
        ("on the 10th", "10", {"words": True}, True),
        ("2017年1月10日", "2017", {"words": True}, True),
        ("2017年1月10日", "1", {"words": True}, True),
        ("2017年11月", "1", {"words": True}, False),
        ("mail bob@example.org now", "@example.org", {"words": True}, True),
        ("a b", "a", {"min_length": 2}, False),
        ("ab cd", "ab", {"min_length": 2}, True),
        ("Hello World", "hello", {}, False),
        ("Hello World", "hello", {"casefold": True}, True),
        ("cafe\u0301", "caf", {"words": True}, False),
        ("q\u0308 y", "q", {"words": True}, False),
        ("q\u0308 y", "q", {}, True),
    ],
)
def test_contains_table(source: str, token: str, options: dict[str, object], found: bool) -> None:
    assert contains(source, token, **options) is found  # type: ignore[arg-type]


def test_a_match_later_in_the_text_counts_when_an_earlier_one_is_inside_a_word() -> None:
    assert contains("2010 and then 10 more", "10", words=True)


def test_missing_lists_tokens_not_found_as_given() -> None:
    assert missing("the quick brown fox", ["quick", "lazy", "", " brown  "]) == ["lazy", ""]
    assert missing("in 2010", ["2010", "10", "in"], words=True, min_length=3) == ["10", "in"]


def test_min_length_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="min_length"):
        contains("a", "a", min_length=0)


@given(st.text(), st.text())
def test_a_normalized_substring_is_always_found(prefix: str, token: str) -> None:
    source = prefix + " " + token
    assert contains(source, token) is bool(normalize(token))


@given(st.text(alphabet="0123456789", min_size=1, max_size=6), st.text("0123456789", min_size=1))
def test_in_word_mode_a_number_is_never_found_inside_a_longer_number(
    digits: str, more: str
) -> None:
    assert not contains(more + digits, digits, words=True)
    assert not contains(digits + more, digits, words=True)
