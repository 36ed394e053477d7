"""The news5w1h pack's own checks, called from gate.md through the ``python`` check.

``whole_names``: a name in ``who`` is not cut short: somewhere in the article it stands on its
own, not followed by another capitalised word of the same name ("Elena" for "Elena Ruiz" is
cut; "Ruiz" is whole when the article also writes "Ruiz said"). ``article_dated``: the item has
a date to judge ``when`` against. ``when_consistent``: the standard ``temporal`` check of
``when.date`` against the article's date, which leaves the undated article to
``article_dated`` (the standard check would stop the judge on it; here an undated article is a
fact, and gate.md's edge lets ``article-dated`` supersede it).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from datetime import date

from reins.checks import BuiltCheck, spec_of, validate
from reins.gate.rule import Context
from reins.values import Fact

_TOKEN = re.compile(r"\w+|[^\w\s]")


def whole_names(ctx: Context) -> list[Fact]:
    """A fact for each name of ``who`` that the article only ever writes as part of a longer one."""
    who = ctx.submission.get("who") if isinstance(ctx.submission, dict) else None
    if not isinstance(who, list):
        return []  # the shape rule reports it
    source = _TOKEN.findall(ctx.source)
    facts = []
    for i, name in enumerate(who):
        if not isinstance(name, str):
            continue
        longer = _always_continued(source, _TOKEN.findall(name))
        if longer:
            facts.append(
                Fact(
                    where=f"submission.who[{i}]",
                    expected=f"the whole name, as the article writes it: {longer!r}",
                    actual=name,
                )
            )
    return facts


def article_dated(ctx: Context) -> Fact | None:
    """A fact when the item has no ISO date (``YYYY-MM-DD``) to judge ``when`` against."""
    value = ctx.payload.get("date") if isinstance(ctx.payload, dict) else None
    if _iso_day(value) is None:
        return Fact(
            where="item.date",
            expected="the article's date, YYYY-MM-DD",
            actual="nothing" if value is None else repr(value)[:60],
        )
    return None


def when_consistent(ctx: Context) -> Iterator[Fact]:
    """The standard ``temporal`` check: ``when.date`` not after the article's date."""
    if _iso_day(ctx.payload.get("date") if isinstance(ctx.payload, dict) else None) is None:
        yield Fact(
            where="submission.when.date",
            expected="a date checked against the article's date",
            actual="the article has no date",
        )
        return
    outcome = _temporal()(ctx)
    if isinstance(outcome, Fact):
        yield outcome
    elif outcome is not None:
        yield from outcome


@functools.cache
def _temporal() -> BuiltCheck:
    spec = spec_of("temporal")
    return spec.build(validate(spec, {"path": "submission.when.date", "reference": "item.date"}))


def _iso_day(value: object) -> date | None:
    if not isinstance(value, str):
        return None
    try:
        return date.fromisoformat(value.strip())
    except ValueError:
        return None


def _always_continued(source: list[str], name: list[str]) -> str:
    """The longer name ``name`` is always part of in ``source`` ("" if it stands alone once)."""
    if not name:
        return ""
    n = len(name)
    longer = ""
    for i in range(len(source) - n + 1):
        if source[i : i + n] != name:
            continue
        after = source[i + n] if i + n < len(source) else ""
        if not _capitalised(after):
            return ""
        longer = longer or " ".join(source[i : i + n + 1])
    return longer


def _capitalised(token: str) -> bool:
    return token[:1].isupper() and token.isalpha()
