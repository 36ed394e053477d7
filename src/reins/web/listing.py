"""The items page: a filter read from a query string, and one keyset page under it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlencode

from reins.store.model import Attempt, Item
from reins.store.protocol import Store
from reins.store.query import PageQuery

PAGE = 50
MOST = 500
# What the items page shows when its query string says nothing.
UNFILTERED = PageQuery(limit=PAGE)


def read_filter(params: Mapping[str, str]) -> PageQuery:
    """The filter of a query string (``state rule driver round q search sort after limit``).

    Raises:
        ConfigError: a value that cannot be its field's, naming it.
    """
    return PageQuery.parse(params, base=UNFILTERED, most=MOST)


def link(wanted: PageQuery, **changes: Any) -> str:
    """The query string of ``wanted`` (with ``changes``), for links: :func:`read_filter`
    reads it back as the same filter."""
    return urlencode(replace(wanted, **changes).params(UNFILTERED))


@dataclass(frozen=True, slots=True)
class Listing:
    """One page of items, each with its last turn (``last``, by key: who drove it, and when)."""

    filter: PageQuery
    items: tuple[Item, ...]
    next: int | None
    rules: tuple[str, ...]
    last: dict[str, Attempt]


def listing(store: Store, wanted: PageQuery) -> Listing:
    page = store.page(wanted)
    rules = tuple(sorted(store.stats().rules))
    last = store.last_attempts([i.key for i in page.items])
    return Listing(wanted, page.items, page.next, rules, last)
