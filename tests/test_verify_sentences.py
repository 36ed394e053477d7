"""The sentence splitter on tricky prose: abbreviations, initials, decimals, quotes, lists."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reins.verify.sentences import count, split

CASES = [
    ("One. Two! Three? Four", ["One.", "Two!", "Three?", "Four"]),
    ("Mr. Smith met Dr. Jones. They talked.", ["Mr. Smith met Dr. Jones.", "They talked."]),
    ("Use tools, e.g. hammers. Or i.e. Nails.", ["Use tools, e.g. hammers.", "Or i.e. Nails."]),
    (
        "He moved to the U.S. in 2010. It was cold.",
        ["He moved to the U.S. in 2010.", "It was cold."],
    ),
    ("He moved to the U.S. He liked it.", ["He moved to the U.S.", "He liked it."]),
    ("The U.S. Senate voted. Then it rested.", ["The U.S. Senate voted.", "Then it rested."]),
    ("Pi is 3.14 or so. E is 2.72.", ["Pi is 3.14 or so.", "E is 2.72."]),
    (
        "J. R. R. Tolkien wrote it. John F. Kennedy read it.",
        ["J. R. R. Tolkien wrote it.", "John F. Kennedy read it."],
    ),
    ('He said "Stop." Then he left.', ['He said "Stop."', "Then he left."]),
    ('"Why?" she asked. "Because."', ['"Why?" she asked.', '"Because."']),
    ("It rained (a lot.) Next day was dry.", ["It rained (a lot.)", "Next day was dry."]),
    ("Wait... what? Well... Fine.", ["Wait... what?", "Well...", "Fine."]),
    ("Wait… Really?! Yes.", ["Wait…", "Really?!", "Yes."]),
    ("See No. 5 and Fig. 2 on p. 14. Done.", ["See No. 5 and Fig. 2 on p. 14.", "Done."]),
    ("It opened on Jan. 5 this year. Good.", ["It opened on Jan. 5 this year.", "Good."]),
    (
        "Apples, pears, etc. are fruit. Etc. Yes.",
        ["Apples, pears, etc. are fruit.", "Etc.", "Yes."],
    ),
    (
        "Apple Inc. announced it. Apple Inc. The firm grew.",
        ["Apple Inc. announced it.", "Apple Inc.", "The firm grew."],
    ),
    ("Yahoo! is a company. So is Google.", ["Yahoo! is a company.", "So is Google."]),
    ("Visit example.com. It works.", ["Visit example.com.", "It works."]),
    (
        "Meet at 10 a.m. tomorrow. Bring Ph.D. students.",
        ["Meet at 10 a.m. tomorrow.", "Bring Ph.D. students."],
    ),
    ("Steps:\n1. Open it.\n2. Close it.", ["Steps:\n1. Open it.", "2. Close it."]),
    (
        "A heading\n\nA paragraph without a stop\n\nAnother",
        ["A heading", "A paragraph without a stop", "Another"],
    ),
    ("In 2019. The year ended.", ["In 2019.", "The year ended."]),
    ("Done!!! ", ["Done!!!"]),
    ("", []),
    ("  ...  ", []),
    ("«Bonjour.» Merci.", ["«Bonjour.»", "Merci."]),
]


@pytest.mark.parametrize(("text", "expected"), CASES, ids=range(len(CASES)))
def test_split(text: str, expected: list[str]) -> None:
    assert split(text) == expected
    assert count(text) == len(expected)


@given(st.text(alphabet=st.sampled_from(list('ab .!?\n"()AB1…')), max_size=60))
def test_split_loses_no_word_character(text: str) -> None:
    """The sentences hold every letter and digit of the text, in order."""
    kept = "".join(split(text))
    assert [c for c in kept if c.isalnum()] == [c for c in text if c.isalnum()]


def test_a_long_text_splits_whole() -> None:
    text = "Dr. Who went home. " * 50_000
    assert count(text) == 50_000
