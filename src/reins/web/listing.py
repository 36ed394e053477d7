"""The items page: a filter read from a query string, and one keyset page under it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from urllib.parse import urlencode

from reins.store.model import Item, State
from reins.store.protocol import Store

PAGE = 50


@dataclass(frozen=True, slots=True)
class ItemFilter:
    """What the items page shows: every field optional, all of them combined."""

    state: State | None = None
    rule: str | None = None
    driver: str | None = None
    round: int | None = None
    text: str | None = None
    newest_first: bool = False
    after: int | None = None
    limit: int = PAGE

    @classmethod
    def parse(cls, query: Mapping[str, str]) -> ItemFilter:
        """The filter of a query string. Raises ValueError on a value that cannot be one."""

        def text(name: str) -> str | None:
            value = query.get(name, "").strip()
            return value or None

        def number(name: str, low: int, high: int) -> int | None:
            raw = text(name)
            if raw is None:
                return None
            value = int(raw)  # ValueError for anything but digits
            if not low <= value <= high:
                raise ValueError(f"{name} must be between {low} and {high}")
            return value

        state = text("state")
        return cls(
            state=None if state is None else State(state),
            rule=text("rule"),
            driver=text("driver"),
            round=number("round", 1, 1_000_000),
            text=text("q"),
            newest_first=query.get("sort") == "newest",
            after=number("after", 0, 2**62),
            limit=number("limit", 1, 500) or PAGE,
        )

    def query(self, **changes: object) -> str:
        """This filter (with ``changes``) as a query string, for links."""
        f = replace(self, **changes)  # type: ignore[arg-type]
        pairs = {
            "state": None if f.state is None else f.state.value,
            "rule": f.rule,
            "driver": f.driver,
            "round": f.round,
            "q": f.text,
            "sort": "newest" if f.newest_first else None,
            "after": f.after,
            "limit": None if f.limit == PAGE else f.limit,
        }
        return urlencode({k: v for k, v in pairs.items() if v is not None})


@dataclass(frozen=True, slots=True)
class Listing:
    filter: ItemFilter
    items: tuple[Item, ...]
    next: int | None
    rules: tuple[str, ...]


def listing(store: Store, wanted: ItemFilter) -> Listing:
    page = store.page(
        state=wanted.state,
        rule=wanted.rule,
        leased_to=wanted.driver,
        round=wanted.round,
        contains=wanted.text,
        descending=wanted.newest_first,
        after=wanted.after,
        limit=wanted.limit,
    )
    rules = tuple(sorted(store.stats().rules))
    return Listing(wanted, page.items, page.next, rules)
