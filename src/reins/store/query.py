"""The page query: which items one page of a ledger holds, as one value every surface builds.

``reins items``, the dashboard's filters and the MCP session read items through
:meth:`Store.page <reins.store.protocol.Store.page>` with a :class:`PageQuery`. What a person
types (an option, a query string, a tool's argument) becomes one through
:meth:`PageQuery.parse`, and a query becomes text again through :meth:`PageQuery.params`, so
a filter is spelled, read and refused the same way everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

from reins.errors import ConfigError
from reins.store.model import State

LIMIT = 100
MOST = 10_000  # the largest page a person may ask for (the MCP board sets none: see parse)
LAST_ROUND = 1_000_000
LAST_CURSOR = 2**62  # beyond any id either engine hands out
NEWEST, OLDEST = "newest", "oldest"
# The text form's names (a query string's, an option's) of the fields that are not spelled
# as in the value: the dashboard's links and bookmarks have used these since it was made.
_SPELLED = {"leased_to": "driver", "contains": "q", "descending": "sort"}


@dataclass(frozen=True, slots=True)
class PageQuery:
    """Which items a page holds: every filter optional, all of them combined.

    Items come in the order they were added (newest first when ``descending``), after the
    keyset cursor ``after`` (a page's ``next``), at most ``limit`` of them: of one ``state``,
    whose last judged root cause is ``rule``, whose lease is held by ``leased_to`` (live or
    not), in round ``round``, whose key contains the text ``contains`` (case-sensitive), or
    whose text holds every word of ``search`` (:mod:`reins.store.search`: the key and payload,
    or one turn's submission and facts, each word matched as the start of a word, in any
    case; through each engine's word index).
    """

    state: State | None = None
    rule: str | None = None
    leased_to: str | None = None
    round: int | None = None
    contains: str | None = None
    search: str | None = None
    descending: bool = False
    after: int | None = None
    limit: int = LIMIT

    @classmethod
    def parse(
        cls,
        given: Mapping[str, str | int | None],
        *,
        base: PageQuery | None = None,
        most: int | None = MOST,
    ) -> PageQuery:
        """The query a person asked for in text: ``given`` maps the text form's names
        (``state rule driver round q search sort after limit``) to what was typed; a name that is
        absent, None or blank keeps ``base``'s value (default: :class:`PageQuery`'s own),
        and other names are ignored. A number may come as an int (a tool's JSON argument).
        ``most`` caps ``limit`` (None: no cap).

        Raises:
            ConfigError: a value that cannot be its field's, naming the field as it was
                spelled and what it takes.
        """
        start = base or cls()
        found = {field: _text(given, name) for field, name in _NAMES}
        state, sort = found["state"], found["descending"]
        round_ = _number(found["round"], "round", 1, LAST_ROUND)
        after = _number(found["after"], "after", 0, LAST_CURSOR)
        limit = _number(found["limit"], "limit", 1, most)
        return cls(
            state=start.state if state is None else _state(str(state)),
            rule=_word(found["rule"], "rule", start.rule),
            leased_to=_word(found["leased_to"], "driver", start.leased_to),
            round=start.round if round_ is None else round_,
            contains=_word(found["contains"], "q", start.contains),
            search=_search(found["search"], start.search),
            descending=start.descending if sort is None else _order(sort),
            after=start.after if after is None else after,
            limit=start.limit if limit is None else limit,
        )

    def params(self, base: PageQuery | None = None) -> dict[str, str]:
        """This query in the text form :meth:`parse` reads, without what equals ``base``'s
        (default: :class:`PageQuery`'s own): ``parse(q.params(b), base=b) == q``."""
        start = base or PageQuery()
        out: dict[str, str] = {}
        for field, name in _NAMES:
            value = getattr(self, field)
            if value is None or value == getattr(start, field):
                continue
            if isinstance(value, State):
                out[name] = value.value
            elif isinstance(value, bool):
                out[name] = NEWEST if value else OLDEST
            else:
                out[name] = str(value)
        return out


# Each field with its name in the text form.
_NAMES = tuple((f.name, _SPELLED.get(f.name, f.name)) for f in fields(PageQuery))


def _text(given: Mapping[str, str | int | None], name: str) -> str | int | None:
    value = given.get(name)
    if isinstance(value, str):
        return value.strip() or None
    return value


def _word(value: str | int | None, name: str, default: str | None) -> str | None:
    if value is None:
        return default
    if not isinstance(value, str):
        raise ConfigError(f"{name} must be text, got {value!r}")
    return value


def _search(value: str | int | None, default: str | None) -> str | None:
    from reins.store.search import words

    text = _word(value, "search", default)
    if value is not None and text is not None and not words(text):
        raise ConfigError(f"search must hold a letter or a digit, got {text!r}")
    return text


def _state(value: str) -> State:
    # A state is named in any case (`done`, `Done`): its name is the seed's, upper case.
    try:
        return State(value.upper())
    except ValueError:
        raise ConfigError(f"state must be one of {', '.join(State)}, got {value!r}") from None


def _order(value: str | int) -> bool:
    if value not in (NEWEST, OLDEST):
        raise ConfigError(f"sort must be {NEWEST} or {OLDEST}, got {value!r}")
    return value == NEWEST


def _number(value: str | int | None, name: str, low: int, high: int | None) -> int | None:
    if value is None:
        return None
    number = value if isinstance(value, int) and not isinstance(value, bool) else None
    if isinstance(value, str) and value.isascii() and value.isdigit():  # no sign, no "1e3"
        number = int(value)
    span = f"from {low} to {high}" if high is not None else f"from {low} up"
    if number is None:
        raise ConfigError(f"{name} must be a whole number {span}, got {value!r}")
    if number < low:
        raise ConfigError(f"{name} must be at least {low}, got {number}")
    if high is not None and number > high:
        raise ConfigError(f"{name} must be at most {high}, got {number}")
    return number
