"""Opening a ledger by its location: a file path (SQLite), or ``SCHEME://…`` for the storage
engine registered under that scheme (``postgresql://`` built in; see :mod:`reins.store.engines`)."""

from __future__ import annotations

from reins.errors import ConfigError
from reins.store.engines import engine_of
from reins.store.owner import Owner
from reins.store.protocol import Store


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
