"""Secrets: read keys from the environment only, and scrub them from every text reins keeps.

A backend's error message ends up in the ledger, the export, logs and the terminal, so each one
passes through :func:`redact` first: configured key values, the values of secret-looking
environment variables, and anything that looks like an auth header or ``api_key=…`` pair are
replaced by ``[REDACTED]``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from urllib.parse import quote

from reins.errors import ConfigError

REDACTED = "[REDACTED]"

# Values shorter than this are not scrubbed by value: "1" or "true" would shred every message.
_MIN_SECRET = 6
_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)", re.IGNORECASE)
_LABELLED = re.compile(
    r"""(?ix)
    (?<![a-z0-9])
    (authorization|proxy-authorization|x-api-key|x-goog-api-key|api[-_]?key|access[-_]?token
     |client[-_]?secret|password)
    (["']?\s*[:=]\s*["']?)
    (bearer\s+|basic\s+)?
    [^\s"',;}&]+
    """
)
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@]+@")


def env_secrets(environ: os._Environ[str] | dict[str, str] | None = None) -> list[str]:
    """Values of environment variables whose names look secret (``*_API_KEY``, ``*TOKEN*``, …)."""
    env = os.environ if environ is None else environ
    return [v for k, v in env.items() if _SECRET_NAME.search(k) and len(v) >= _MIN_SECRET]


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every secret value, labelled credential and URL password replaced."""
    values = {s for s in (*secrets, *env_secrets()) if len(s) >= _MIN_SECRET}
    for value in sorted(values, key=len, reverse=True):
        for form in {value, quote(value, safe=""), quote(value)}:
            text = text.replace(form, REDACTED)
    text = _LABELLED.sub(lambda m: f"{m[1]}{m[2]}{m[3] or ''}{REDACTED}", text)
    return _URL_USERINFO.sub(rf"\g<1>{REDACTED}@", text)


def tail(text: str, limit: int = 2000) -> str:
    """The last ``limit`` characters of ``text``, marked when cut."""
    text = text.strip()
    if len(text) <= limit:
        return text
    return "…" + text[-limit:]


def read_key(env_var: str, *, backend: str, required: bool = True) -> str | None:
    """The API key in environment variable ``env_var``; keys never come from a spec or a file.

    Raises:
        ConfigError: ``required`` and the variable is unset or empty.
    """
    value = os.environ.get(env_var, "").strip()
    if value:
        return value
    if required:
        raise ConfigError(
            f"backend {backend!r} needs an API key: set the environment variable {env_var}"
            " (or name another one with ?key_env=VAR)"
        )
    return None
