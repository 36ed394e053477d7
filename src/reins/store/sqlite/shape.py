"""The shape of an SQLite ledger: the tables, columns, indexes, triggers and views of a version.

A file's ``user_version`` says which schema it holds; before anything is written to it (a
migration, the switch to WAL, recording its quest) the objects it holds are compared with those
that version's migrations make, so a file whose version was set back by hand, or restored from
another file's header, is refused instead of half-migrated. The shape of each version is built
in memory from the migrations themselves, so it can never drift from them; it costs a few
milliseconds, paid only when an open is about to write.
"""

from __future__ import annotations

import functools
import sqlite3

from reins.store.sqlite.schema import SCHEMA_VERSION, run_script

# (type, name) → column names (empty for an index or a trigger).
Shape = dict[tuple[str, str], frozenset[str]]


def read(conn: sqlite3.Connection) -> Shape:
    """What the database on ``conn`` holds, SQLite's own objects aside."""
    objects = conn.execute(
        "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
    ).fetchall()
    shape: Shape = {}
    for kind, name in objects:
        columns: frozenset[str] = frozenset()
        if kind == "table":
            rows = conn.execute("SELECT name FROM pragma_table_info(?)", (name,)).fetchall()
            columns = frozenset(row[0] for row in rows)
        shape[(kind, name)] = columns
    return shape


@functools.cache
def expected(version: int) -> Shape:
    """What a ledger at schema ``version`` holds: its migrations, run on an empty database."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        conn.execute("BEGIN")
        for step in range(1, version + 1):
            run_script(conn, step)
        return read(conn)
    finally:
        conn.close()


@functools.cache
def _known() -> Shape:
    """Every object any version holds, with every column it ever had."""
    known: Shape = {}
    for version in range(1, SCHEMA_VERSION + 1):
        for key, columns in expected(version).items():
            known[key] = known.get(key, frozenset()) | columns
    return known


def problems(version: int, shape: Shape) -> list[str]:
    """How ``shape`` differs from schema ``version``, in a few phrases (none: it is that
    version's).

    Objects of reins' schema that the version lacks (a later version's table, a column added
    since) count; anything else a person added beside reins' own tables is let be.
    """
    want, known = expected(version), _known()
    missing = [f"{kind} {name}" for kind, name in sorted(want.keys() - shape.keys())]
    later = [f"{kind} {name}" for kind, name in sorted((shape.keys() & known.keys()) - want.keys())]
    for key in sorted(want.keys() & shape.keys()):
        missing += [f"column {key[1]}.{c}" for c in sorted(want[key] - shape[key])]
        later += [f"column {key[1]}.{c}" for c in sorted((shape[key] & known[key]) - want[key])]
    out = [f"it lacks {listing(missing)}"] if missing else []
    return out + ([f"it holds a later version's {listing(later)}"] if later else [])


def listing(names: list[str], limit: int = 4) -> str:
    """``names`` joined, the first ``limit`` of them and how many more."""
    more = len(names) - limit
    return ", ".join(names[:limit]) + (f" and {more} more" if more > 0 else "")


def matching_version(shape: Shape) -> int | None:
    """The schema version whose objects ``shape`` holds exactly, if there is one."""
    for version in range(SCHEMA_VERSION, -1, -1):
        if not problems(version, shape):
            return version
    return None
