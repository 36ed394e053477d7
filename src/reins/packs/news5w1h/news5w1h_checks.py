"""The news5w1h pack's own checks, called from gate.md through the ``python`` check as
``news5w1h_checks:function`` (the loader puts the pack's folder on ``sys.path``; the module's
name is the pack's so that two packs' checks never share a module name). Each is called as
``function(ctx, params)``.

``whole_names``: a name in ``who`` is not cut short: somewhere in the article it stands on its
own, not followed by another capitalised word of the same name ("Lubomir" for "Lubomir Vanek"
is cut; "Vanek" is whole when the article also writes "Vanek won"). ``article_dated``: the item
has a date to judge ``when`` against. ``when_consistent``: the standard ``temporal`` check, with
the parameters gate.md gives it, on dated articles only: on an undated article the standard
check would stop the judge (its reference is missing), while here that is a fact, which
gate.md's edge lets ``article-dated`` supersede, so the item goes to a person.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import date, datetime

from reins.checks import BuiltCheck, spec_of, validate
from reins.gate.rule import Context
from reins.values import Fact

_TOKEN = re.compile(r"\w+|[^\w\s]")
_BUILT: dict[str, BuiltCheck] = {}  # the temporal check built once per parameter table


def whole_names(ctx: Context, params: Mapping[str, object]) -> list[Fact]:
    """A fact for each name of ``who`` the article only ever writes inside a longer name."""
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


def article_dated(ctx: Context, params: Mapping[str, object]) -> Fact | None:
    """A fact when the item has no ISO date (``YYYY-MM-DD``) to judge ``when`` against."""
    value = _article_date(ctx)
    if _iso_day(value) is None:
        return Fact(
            where="item.date",
            expected="the article's date, YYYY-MM-DD",
            actual="nothing" if value is None else repr(value)[:60],
        )
    return None


def when_consistent(ctx: Context, params: Mapping[str, object]) -> list[Fact]:
    """The standard ``temporal`` check with ``params``, once the article has a date."""
    if _iso_day(_article_date(ctx)) is None:
        return [
            Fact(
                where="submission.when.date",
                expected="a date checked against the article's date",
                actual="the article has no date",
            )
        ]
    outcome = _temporal(params)(ctx)
    if outcome is None:
        return []
    return [outcome] if isinstance(outcome, Fact) else list(outcome)


def _temporal(params: Mapping[str, object]) -> BuiltCheck:
    key = json.dumps(dict(params), sort_keys=True)
    if key not in _BUILT:
        spec = spec_of("temporal")
        _BUILT[key] = spec.build(validate(spec, params))
    return _BUILT[key]


def _article_date(ctx: Context) -> object:
    return ctx.payload.get("date") if isinstance(ctx.payload, dict) else None


def _iso_day(value: object) -> date | None:
    if not isinstance(value, str):
        return None
    try:  # read as the temporal check reads its reference: a date, or a date and time
        return datetime.fromisoformat(value.strip()).date()
    except ValueError:
        return None


def _always_continued(source: list[str], name: list[str]) -> str:
    """The longer name ``name`` is always part of in ``source`` ("" if it stands alone once)."""
    n = len(name)
    if not name or n > len(source):  # a hostile name longer than the article is never in it
        return ""
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
