"""Opening a PostgreSQL ledger: refuse what is not ours before writing a byte, create, migrate.

The schema is inspected through the catalog first: a schema holding tables but no
``reins_schema`` marker is someone else's, one whose version is newer than this reins is
refused, both without a single write. A missing (or empty) schema is created only when asked;
creation and migration hold a transaction-scoped advisory lock on the schema's name, so two
processes opening the same new ledger at once build it once.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import Connection, sql

from reins.errors import CorruptLedger, LedgerError, NotFound
from reins.store.codec import now_iso
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


def open_schema(target: Target, *, create: bool) -> int:
    """Check (with ``create``, make) the ledger's schema; returns its schema version.

    Raises:
        NotFound: no ledger in the schema and ``create`` is false.
        CorruptLedger: the schema is not a reins ledger, is damaged, or is newer than reins.
        LedgerError: the server cannot be reached or refused.
    """
    conn = connect(target)
    try:
        version = _version(conn, target)
        if version is None:
            if not create:
                raise NotFound(
                    f"no ledger at {target.location} (schema {target.schema!r} on "
                    f"{target.server}). Run `reins scan` to create it."
                )
            version = _build(conn, target)
        if version < SCHEMA_VERSION:
            version = _build(conn, target)
        return version
    except psycopg.Error as exc:
        raise LedgerError(
            f"cannot open ledger {target.location}: {target.scrub(str(exc).strip())}"
        ) from exc
    finally:
        conn.close()


def _version(conn: Connection[Any], target: Target) -> int | None:
    """The ledger's version; None if there is no ledger yet (no schema, or an empty one)."""
    exists, relations = conn.execute(_INSPECT, (target.schema,)).fetchone() or (False, [])
    if not exists or not relations:
        return None
    if "reins_schema" not in relations:
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
    missing = sorted(RELATIONS - set(relations)) if version == SCHEMA_VERSION else []
    if missing:
        raise CorruptLedger(
            f"ledger {target.location} is damaged: {', '.join(missing)} missing. "
            "It was left untouched."
        )
    return version


def too_new(target: Target, version: int) -> str:
    return (
        f"ledger {target.location} has schema version {version}, but this reins understands up "
        f"to {SCHEMA_VERSION}. Upgrade reins-quest; the ledger was left untouched."
    )


def _build(conn: Connection[Any], target: Target) -> int:
    """Create the schema or bring it to ``SCHEMA_VERSION``, under the schema's advisory lock."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", ("reins:" + target.schema,))
        version = _version(conn, target)  # another process may have built it meanwhile
        if version is None:
            conn.execute(
                sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(target.schema))
            )
            run_script(conn, MARKER)
            version = 0
        for step in range(version + 1, SCHEMA_VERSION + 1):
            run_script(conn, MIGRATIONS[step])
            conn.execute("UPDATE reins_schema SET version = %s", (step,))
        if version == 0:
            conn.execute(
                "INSERT INTO meta (key, value) VALUES ('created_at', %s) ON CONFLICT DO NOTHING",
                (now_iso(),),
            )
    return SCHEMA_VERSION


def run_script(conn: Connection[Any], script: str) -> None:
    """Run a migration script (several statements) inside the caller's transaction."""
    conn.execute(script.encode())  # simple query protocol: many statements, no parameters
