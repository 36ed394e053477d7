"""Opening a PostgreSQL ledger: refuse what is not ours before writing a byte, create, migrate.

The schema is inspected through the catalog first: a schema holding tables but no
``reins_schema`` marker is someone else's, one whose version is newer than this reins, one
whose relations are not those of the version it records, and one that belongs to another quest
(:mod:`reins.store.owner`) are refused, all without a single write. A missing (or empty) schema
is created only when asked; creation, migration and the recording of an owner hold a
transaction-scoped advisory lock on the schema's name, so two processes opening the same new
ledger at once build it once.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import psycopg
from psycopg import Connection, sql

from reins.errors import CorruptLedger, LedgerError, NotFound
from reins.store import owner as owners
from reins.store.codec import now_iso
from reins.store.owner import Owner, refuse_other
from reins.store.postgres import shape
from reins.store.postgres.connection import connect
from reins.store.postgres.schema import MARKER, MIGRATIONS, RELATIONS, SCHEMA_VERSION
from reins.store.postgres.target import Target

# What is in the schema: whether it exists, and the tables and views it holds.
_INSPECT = """
SELECT n.oid IS NOT NULL,
       coalesce((SELECT array_agg(c.relname::text) FROM pg_class c
                 WHERE c.relnamespace = n.oid AND c.relkind IN ('r', 'v', 'p', 'm', 'f')), '{}')
FROM (SELECT %s::text AS name) s LEFT JOIN pg_namespace n ON n.nspname = s.name
"""
# The columns of the schema's tables, as (table, column) rows.
_COLUMNS = """
SELECT c.relname::text, a.attname::text FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE n.nspname = %s AND c.relkind IN ('r', 'p')
"""


class Opened(NamedTuple):
    """What opening found: the schema version, the ledger's owner, and whether this open
    recorded that owner in a ledger that had none."""

    version: int
    owner: Owner | None
    adopted: bool


def open_schema(target: Target, *, create: bool, owner: Owner | None = None) -> Opened:
    """Check (with ``create``, make) the ledger's schema for ``owner``.

    Nothing is written to a ledger of another owner, of a newer version, or whose relations
    are not those of the version it records; the rest is migrated and given ``owner`` if it
    had none, in one transaction.

    Raises:
        NotFound: no ledger in the schema and ``create`` is false.
        CorruptLedger: the schema is not a reins ledger, is damaged, or is newer than reins.
        WrongQuest: the ledger belongs to another owner.
        LedgerError: the server cannot be reached or refused; a migration failed (it was
            rolled back).
    """
    conn = connect(target)
    try:
        version, recorded = _inspect(conn, target)
        refuse_other(target.location, recorded, owner)
        if version is None and not create:
            raise NotFound(
                f"no ledger at {target.location} (schema {target.schema!r} on "
                f"{target.server}). Run `reins scan` to create it."
            )
        if version is None or version < SCHEMA_VERSION or (owner and recorded is None):
            return _build(conn, target, owner)
        return Opened(version, recorded, False)
    except psycopg.Error as exc:
        raise LedgerError(
            f"cannot open ledger {target.location}: {target.scrub(str(exc).strip())}"
        ) from exc
    finally:
        conn.close()


def _inspect(conn: Connection[Any], target: Target) -> tuple[int | None, Owner | None]:
    """The ledger's version (None if there is none yet: no schema, or an empty one) and the
    owner it recorded."""
    exists, relations = conn.execute(_INSPECT, (target.schema,)).fetchone() or (False, [])
    if not exists or not relations:
        return None, None
    held = frozenset(relations)
    if "reins_schema" not in held:
        raise CorruptLedger(
            f"schema {target.schema!r} on {target.server} holds tables but is not a reins "
            "ledger (no reins_schema table). It was left untouched; name another schema with "
            "?schema=NAME in the URL."
        )
    try:
        rows = conn.execute("SELECT version FROM reins_schema").fetchall()
    except psycopg.Error as exc:
        raise CorruptLedger(
            f"ledger {target.location} is damaged: {target.scrub(str(exc).strip())}. "
            "It was left untouched."
        ) from exc
    if len(rows) != 1 or not isinstance(rows[0][0], int):
        raise CorruptLedger(f"ledger {target.location} is damaged: its version row is missing")
    version: int = rows[0][0]
    if version > SCHEMA_VERSION:
        raise CorruptLedger(too_new(target, version))
    if version < SCHEMA_VERSION:  # about to be migrated: its relations must be its version's
        _check_shape(conn, target, version, held)
    missing = sorted(RELATIONS - held) if version == SCHEMA_VERSION else []
    if missing:
        raise CorruptLedger(
            f"ledger {target.location} is damaged: {', '.join(missing)} missing. "
            "It was left untouched."
        )
    if "meta" not in held:
        return version, None
    values = conn.execute(
        "SELECT key, value FROM meta WHERE key IN (%s, %s)", (owners.NAME_KEY, owners.ORIGIN_KEY)
    ).fetchall()
    return version, owners.read(dict(values))


def _check_shape(conn: Connection[Any], target: Target, version: int, held: frozenset[str]) -> None:
    """Refuse a schema whose relations are not those of the ``version`` it records."""
    rows = conn.execute(_COLUMNS, (target.schema,)).fetchall()
    columns = frozenset((table, column) for table, column in rows)
    problems = shape.problems(version, held, columns)
    if not problems:
        return
    head = f"ledger {target.location} says schema version {version}, but {'; '.join(problems)}"
    actual = shape.matching_version(held, columns)
    if actual is not None:
        raise CorruptLedger(
            f"{head}: its tables are those of version {actual}. It was left untouched. If only "
            f"its version number is wrong, set it: UPDATE {target.schema}.reins_schema SET "
            f"version = {actual}; otherwise restore it from a backup."
        )
    raise CorruptLedger(
        f"{head}. It was left untouched; restore it from a backup, or name another schema."
    )


def too_new(target: Target, version: int) -> str:
    return (
        f"ledger {target.location} has schema version {version}, but this reins understands up "
        f"to {SCHEMA_VERSION}. Upgrade reins-quest; the ledger was left untouched."
    )


def _build(conn: Connection[Any], target: Target, owner: Owner | None) -> Opened:
    """Create the schema or bring it to ``SCHEMA_VERSION`` and record ``owner`` if it has none,
    in one transaction under the schema's advisory lock."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", ("reins:" + target.schema,))
        version, recorded = _inspect(conn, target)  # another process may have been first
        refuse_other(target.location, recorded, owner)
        existed = version is not None
        if version is None:
            conn.execute(
                sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(target.schema))
            )
            run_script(conn, MARKER)
            version = 0
        _migrate(conn, target, version, existed)
        if version == 0:
            conn.execute(
                "INSERT INTO meta (key, value) VALUES ('created_at', %s) ON CONFLICT DO NOTHING",
                (now_iso(),),
            )
        adopted = owner is not None and recorded is None
        if owner is not None and recorded is None:
            conn.execute(
                "INSERT INTO meta (key, value) VALUES (%s, %s), (%s, %s) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (owners.NAME_KEY, owner.name, owners.ORIGIN_KEY, owner.origin),
            )
            recorded = owner
    return Opened(SCHEMA_VERSION, recorded, adopted and existed)


def _migrate(conn: Connection[Any], target: Target, version: int, existed: bool) -> None:
    """Bring the ledger from ``version`` to ``SCHEMA_VERSION`` inside the caller's transaction,
    which a failure rolls back whole; for a ledger that ``existed``, the error says so."""
    try:
        for step in range(version + 1, SCHEMA_VERSION + 1):
            run_script(conn, MIGRATIONS[step])
            conn.execute("UPDATE reins_schema SET version = %s", (step,))
    except psycopg.Error as exc:
        if not existed:
            raise
        raise LedgerError(
            f"ledger {target.location}: migrating it from schema version {version} to "
            f"{SCHEMA_VERSION} failed ({target.scrub(_first_line(exc))}); it was rolled back "
            "and the ledger left untouched. Fix the cause (a missing privilege, a table or "
            "trigger of your own) and run the command again, or keep using the reins that "
            "made it."
        ) from exc


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def run_script(conn: Connection[Any], script: str) -> None:
    """Run a migration script (several statements) inside the caller's transaction."""
    conn.execute(script.encode())  # simple query protocol: many statements, no parameters
