"""Where a PostgreSQL ledger lives: the server from the URL, the schema, the session settings.

The schema comes from the URL's ``?schema=NAME`` parameter, else from the caller (the quest's
name), else ``reins``. Either way it is folded to a safe identifier: lower case, runs of
anything but ``a-z``, ``0-9`` and ``_`` become one ``_``, a leading digit or ``pg_`` gets a
``q_`` in front, at most 63 characters. The password (in the URL's user part or a
``password=`` parameter) is used to connect and appears nowhere else: not in :attr:`location`,
not in any message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from psycopg.conninfo import conninfo_to_dict, make_conninfo

from reins.errors import ConfigError

DEFAULT_SCHEMA = "reins"
# Server-side limits on every session, so that a stuck client cannot hold a row lock for ever:
# a transaction left idle is ended, a lock wait gives up, a statement is cancelled.
TIMEOUTS = {
    "idle_in_transaction_session_timeout": "30s",
    "lock_timeout": "10s",
    "statement_timeout": "1min",
}
_UNSAFE = re.compile(r"[^a-z0-9_]+")


def schema_name(raw: str) -> str:
    """``raw`` folded to a schema name that needs no quoting and cannot clash with pg_*."""
    name = _UNSAFE.sub("_", raw.lower()).strip("_")
    if not name:
        raise ConfigError(f"{raw!r} gives no usable PostgreSQL schema name; name one in the URL")
    if name[0].isdigit() or name.startswith("pg_"):
        name = "q_" + name
    return name[:63]


@dataclass(frozen=True, slots=True)
class Target:
    """A parsed ledger URL.

    ``conninfo`` is what libpq gets (with the password); ``location`` is the URL to show and to
    open the same ledger with (no password, the schema named); ``server`` is host:port/db.
    """

    conninfo: str
    location: str
    server: str
    schema: str
    secrets: tuple[str, ...]
    host: str = "localhost"
    port: str = "5432"

    def scrub(self, text: str) -> str:
        """``text`` with the password taken out, for a message."""
        for secret in self.secrets:
            text = text.replace(secret, "***")
        return text


def parse(url: str, schema: str | None = None) -> Target:
    """Read a ``postgresql://`` URL; ``schema`` is used when the URL names none."""
    try:
        parts = urlsplit(url)
        query = parse_qsl(parts.query, keep_blank_values=True)
    except ValueError as exc:
        raise ConfigError(f"not a valid PostgreSQL URL: {exc}") from exc
    named = [v for k, v in query if k == "schema"]
    chosen = schema_name(named[-1] if named else schema or DEFAULT_SCHEMA)
    kept = [(k, v) for k, v in query if k != "schema"]
    libpq_url = urlunsplit(parts._replace(query=urlencode(kept, quote_via=quote)))
    try:
        params = conninfo_to_dict(libpq_url)
    except Exception as exc:  # psycopg.ProgrammingError: a malformed URL
        secrets = tuple(s for s in (_password_of(parts.netloc),) if s)
        text = str(exc)
        for secret in secrets:
            text = text.replace(secret, "***")
        raise ConfigError(f"not a valid PostgreSQL URL: {text}") from exc
    password = params.get("password")
    secrets = tuple(s for s in {str(password or ""), _password_of(parts.netloc)} if s)
    # Ours first, so that options the URL gives override the timeouts; the schema last.
    settings = [f"-c {k}={v}" for k, v in TIMEOUTS.items()]
    if params.get("options"):
        settings.append(str(params["options"]))
    settings.append(f"-c search_path={chosen}")
    conninfo = make_conninfo(
        libpq_url,
        options=" ".join(settings),
        application_name=str(params.get("application_name") or f"reins:{chosen}"),
    )
    shown = [(k, v) for k, v in kept if k != "password"] + [("schema", chosen)]
    netloc = parts.netloc.rpartition("@")
    user = netloc[0].partition(":")[0]
    location = urlunsplit(
        parts._replace(
            netloc=f"{user}@{netloc[2]}" if user else netloc[2],
            query=urlencode(shown, quote_via=quote),
        )
    )
    host = str(params.get("host") or "localhost")
    port = str(params.get("port") or "5432")
    server = f"{host}:{port}/{params.get('dbname') or params.get('user') or ''}"
    return Target(conninfo, location, server, chosen, secrets, host, port)


def _password_of(netloc: str) -> str:
    userinfo, at, _ = netloc.rpartition("@")
    return userinfo.partition(":")[2] if at else ""
