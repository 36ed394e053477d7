"""Functions that tests name with the ``python`` check."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from reins.gate.rule import Context
from reins.values import Fact


def too_long(ctx: Context, params: Mapping[str, object]) -> Fact | None:
    limit = params.get("limit", 5)
    assert isinstance(limit, int)
    if isinstance(ctx.submission, str) and len(ctx.submission) > limit:
        return Fact(where="submission", expected=f"at most {limit}", actual=ctx.submission)
    return None


def each_word(ctx: Context, params: Mapping[str, object]) -> Iterator[Fact]:
    for i, word in enumerate(str(ctx.submission).split()):
        level = "REVIEW" if word.islower() else "FAIL"
        yield Fact(where=f"word {i}", expected="no words", actual=word, level=level)


def broken(ctx: Context, params: Mapping[str, object]) -> None:
    raise KeyError("who")


def wrong(ctx: Context, params: Mapping[str, object]) -> object:
    return "FAIL"


NOT_CALLABLE = 3


def needs_nltk_data(ctx: Context, params: Mapping[str, object]) -> None:
    """A check that needs an NLTK resource this machine does not have (as IFEval's sentence
    counting does): NLTK's LookupError message starts with a blank line and a row of stars."""
    import nltk

    nltk.data.find(f"tokenizers/{params['resource']}/english/")
