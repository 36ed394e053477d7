"""Opening a ledger by its location: a file path (SQLite) or a ``postgresql://`` URL."""

from __future__ import annotations

from reins.errors import ConfigError
from reins.store.owner import Owner
from reins.store.protocol import Store

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def is_postgres(location: str) -> bool:
    return location.startswith(POSTGRES_SCHEMES)


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


def names_schema(location: str) -> bool:
    """Whether a ``postgresql://`` URL names its schema (``?schema=NAME``)."""
    from urllib.parse import parse_qsl, urlsplit

    return any(key == "schema" for key, _ in parse_qsl(urlsplit(location).query))


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
    Anything else is an SQLite file path; ``sqlite:///PATH`` is accepted too. A ledger that
    belongs to a quest other than ``owner`` is refused (``WrongQuest``) and left untouched.

    Raises:
        ConfigError: ``location`` is a PostgreSQL URL with its slashes mistyped
            (``postgresql:/x``), which would otherwise name an SQLite file.
    """
    misspelled(location)
    if is_postgres(location):
        try:
            from reins.store.postgres import PostgresStore
        except ImportError as exc:
            raise ConfigError(
                f"a PostgreSQL ledger needs psycopg: pip install 'reins-quest[postgres]' ({exc})"
            ) from exc
        return PostgresStore.open(location, create=create, schema=schema, owner=owner)
    from reins.store.sqlite import SQLiteStore

    path = location.removeprefix("sqlite://") if location.startswith("sqlite://") else location
    return SQLiteStore.open(path, create=create, owner=owner)
