"""Storage engines, and opening a ledger by its location (:func:`open_store`).

``--ledger SCHEME://…`` opens the engine registered as ``SCHEME`` in :data:`ENGINES`, a
:class:`reins.registry.Registry` over the ``reins.stores`` entry-point group; a location with
no scheme is an SQLite file. SQLite (``sqlite://PATH`` too) and PostgreSQL (``postgresql://``,
``postgres://``) are built in: they are known without reading entry points, because every
command opens a ledger and the scan would cost each one its start-up time. A plugin engine is
one module with an object of the :class:`StorageEngine` shape and one entry point naming it.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Protocol

from reins.errors import ConfigError
from reins.registry import Registry

if TYPE_CHECKING:
    from reins.store.owner import Owner
    from reins.store.protocol import Store

ENTRY_POINT_GROUP = "reins.stores"
SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")


class StorageEngine(Protocol):
    """What a ``reins.stores`` entry point names.

    ``schemas``: one location holds several quests' ledgers, one schema (or namespace) per
    quest run, so reins names the schema after the quest unless the location does
    (:meth:`names_schema`). A file engine keeps one ledger per location and says which folder
    it lives in (:meth:`folder`), where reins puts what belongs beside a ledger.
    """

    schemas: bool

    def open(
        self, location: str, *, create: bool, schema: str | None, owner: Owner | None
    ) -> Store:
        """Open (with ``create``, make) the ledger at ``location`` for ``owner``."""
        ...

    def names_schema(self, location: str) -> bool:
        """Whether ``location`` names its own schema."""
        ...

    def folder(self, location: str) -> str | None:
        """The folder the ledger's file is in (None: it has none, a server's)."""
        ...


def _is_engine(obj: object) -> str | None:
    if all(callable(getattr(obj, name, None)) for name in ("open", "names_schema", "folder")):
        return None
    return "it needs open(location, …), names_schema(location) and folder(location)"


class SQLiteEngine:
    """One SQLite file per ledger; ``sqlite://PATH`` is the same as ``PATH``."""

    schemas = False

    @staticmethod
    def path(location: str) -> str:
        return location.removeprefix("sqlite://")

    def open(
        self, location: str, *, create: bool, schema: str | None, owner: Owner | None
    ) -> Store:
        from reins.store.sqlite import SQLiteStore

        return SQLiteStore.open(self.path(location), create=create, owner=owner)

    def names_schema(self, location: str) -> bool:
        return False

    def folder(self, location: str) -> str | None:
        return os.path.dirname(self.path(location)) or "."


class PostgresEngine:
    """A schema per quest run in a PostgreSQL database (extra ``reins-quest[postgres]``)."""

    schemas = True

    def open(
        self, location: str, *, create: bool, schema: str | None, owner: Owner | None
    ) -> Store:
        try:
            from reins.store.postgres import PostgresStore
        except ImportError as exc:
            raise ConfigError(
                f"a PostgreSQL ledger needs psycopg: pip install 'reins-quest[postgres]' ({exc})"
            ) from exc
        return PostgresStore.open(location, create=create, schema=schema, owner=owner)

    def names_schema(self, location: str) -> bool:
        """Whether the URL names its schema (``?schema=NAME``)."""
        from urllib.parse import parse_qsl, urlsplit

        return any(key == "schema" for key, _ in parse_qsl(urlsplit(location).query))

    def folder(self, location: str) -> str | None:
        return None


SQLITE, POSTGRES = SQLiteEngine(), PostgresEngine()

ENGINES: Registry[StorageEngine] = Registry(
    "storage engine",
    ENTRY_POINT_GROUP,
    _is_engine,
    builtins={"sqlite": SQLITE, "postgresql": POSTGRES, "postgres": POSTGRES},
    missing=lambda name: (
        f"no storage engine for {name}:// ledgers. Known: {ENGINES.known_text()} "
        "(a location without SCHEME:// is an SQLite file)"
    ),
)
"""The storage engines by the scheme of a ledger's location."""


def engine_of(location: str) -> StorageEngine:
    """The engine ``location``'s scheme names (none: SQLite).

    Raises:
        NotFound: a scheme no engine is registered for.
    """
    found = SCHEME.match(location)
    return SQLITE if found is None else ENGINES.find(found.group(1).lower())


def misspelled(location: str) -> None:
    """Refuse a PostgreSQL scheme without its ``//`` (``postgresql:/db``, ``postgres:db``) or
    not in lower case: read as a file name, it would make an SQLite ledger of that odd name.

    Raises:
        ConfigError: saying which URL was probably meant.
    """
    scheme, colon, rest = location.partition(":")
    if not colon or scheme.lower() not in ("postgresql", "postgres"):
        return
    if rest.startswith("//") and scheme == scheme.lower():
        return
    meant = f"{scheme.lower()}://{rest.lstrip('/')}"
    raise ConfigError(
        f"ledger {location!r} is not a PostgreSQL URL: did you mean {meant!r}? A URL starts "
        "with postgresql:// (postgresql://user@host:port/db)"
    )


def open_store(
    location: str,
    *,
    create: bool = False,
    schema: str | None = None,
    owner: Owner | None = None,
) -> Store:
    """Open the ledger at ``location`` for ``owner``; with ``create``, make it if it is missing.

    A ``postgresql://`` URL opens the PostgreSQL engine (extra ``reins-quest[postgres]``);
    ``schema`` names the quest run's schema there when the URL does not (``?schema=NAME``).
    Another ``SCHEME://`` opens the engine registered for it; anything else is an SQLite file
    path (``sqlite://PATH`` too). A ledger that belongs to a quest other than ``owner`` is
    refused (``WrongQuest``) and left untouched.

    Raises:
        ConfigError: ``location`` is a PostgreSQL URL with its slashes mistyped
            (``postgresql:/x``), which would otherwise name an SQLite file.
        NotFound: no engine is registered for the location's scheme.
    """
    misspelled(location)
    return engine_of(location).open(location, create=create, schema=schema, owner=owner)
