"""The shape of a PostgreSQL ledger: the tables and views each version holds, and the columns
each version adds.

Read from the migration scripts themselves (their ``CREATE TABLE``, ``CREATE VIEW`` and ``ALTER
TABLE … ADD COLUMN`` statements), so it cannot drift from them. Before an older ledger is
migrated, what its schema holds is compared with what its recorded version should hold: one
whose version was set back by hand is refused, with what to do, instead of failing half-way.
"""

from __future__ import annotations

import functools
import re

from reins.store.postgres.schema import MARKER, MIGRATIONS, SCHEMA_VERSION

_CREATED = re.compile(r"\bCREATE (?:TABLE|VIEW) (\w+)")
_ALTERED = re.compile(r"\bALTER TABLE (\w+)([^;]*);")
_ADDED = re.compile(r"\bADD COLUMN (\w+)")


@functools.cache
def relations(version: int) -> frozenset[str]:
    """The tables and views of a ledger at schema ``version``."""
    found = set(_CREATED.findall(MARKER))
    for step in range(1, version + 1):
        found |= set(_CREATED.findall(MIGRATIONS[step]))
    return frozenset(found)


@functools.cache
def added_columns(version: int) -> frozenset[tuple[str, str]]:
    """The ``(table, column)`` pairs that migration ``version`` adds to existing tables."""
    pairs = set()
    for table, rest in _ALTERED.findall(MIGRATIONS[version]):
        pairs |= {(table, column) for column in _ADDED.findall(rest)}
    return frozenset(pairs)


def problems(version: int, held: frozenset[str], columns: frozenset[tuple[str, str]]) -> list[str]:
    """How a schema holding relations ``held`` and ``(table, column)`` pairs ``columns``
    differs from schema ``version``, in a few phrases (none: it is that version's). Relations
    and columns a person added beside reins' own are let be."""
    want = relations(version)
    missing = sorted(want - held)
    later = sorted((held & relations(SCHEMA_VERSION)) - want)
    for step in range(version + 1, SCHEMA_VERSION + 1):
        later += [f"column {t}.{c}" for t, c in sorted(added_columns(step) & columns)]
    out = [f"it lacks {_listing(missing)}"] if missing else []
    return out + ([f"it holds a later version's {_listing(later)}"] if later else [])


def matching_version(held: frozenset[str], columns: frozenset[tuple[str, str]]) -> int | None:
    """The schema version whose relations and columns the schema holds, if there is one."""
    for version in range(SCHEMA_VERSION, 0, -1):
        if not problems(version, held, columns):
            return version
    return None


def _listing(names: list[str], limit: int = 4) -> str:
    more = len(names) - limit
    return ", ".join(names[:limit]) + (f" and {more} more" if more > 0 else "")
