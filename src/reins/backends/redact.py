"""Secrets: read keys from the environment only, and scrub them from every text reins keeps.

A backend's error message ends up in the ledger, the export, logs and the terminal, so each one
passes through :func:`redact` first: configured key values, the values of secret-looking
environment variables, and anything that looks like an auth header or ``api_key=…`` pair are
replaced by ``[REDACTED]``. A key read through :func:`read_key` is remembered for the life of the
process, so even text that never meets its backend again (the loop's copy of an error, a model
name) is scrubbed of it. Text is redacted first and cut afterwards (:func:`clip`, :func:`tail`):
cutting first could leave the head or the tail of a key that no longer matches whole.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Iterable
from urllib.parse import quote

from reins.errors import ConfigError

REDACTED = "[REDACTED]"

# Values shorter than this are not scrubbed by value: "1" or "true" would shred every message.
_MIN_SECRET = 6
# A text cut by someone else (a server's own truncation, a stderr tail) may start with the end of
# a key or end with its start; a fragment this long at either edge is scrubbed.
MIN_FRAGMENT = 8
# what may sit between a cut fragment and the text's edge: space, an ellipsis, closing quotes
_EDGE = "".join((" \t\r\n", "….", "\"'`", ")]}>"))
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

_known: set[str] = set()  # every key read_key handed out, and other configured secrets
_known_lock = threading.Lock()


def remember(*secrets: str | None) -> None:
    """Scrub ``secrets`` from every text :func:`redact` sees from now on, in any module."""
    with _known_lock:
        _known.update(s for s in secrets if s and len(s) >= _MIN_SECRET)


def env_secrets(environ: os._Environ[str] | dict[str, str] | None = None) -> list[str]:
    """Values of environment variables whose names look secret (``*_API_KEY``, ``*TOKEN*``, …)."""
    env = os.environ if environ is None else environ
    return [v for k, v in env.items() if _SECRET_NAME.search(k) and len(v) >= _MIN_SECRET]


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every secret value, labelled credential and URL password replaced."""
    with _known_lock:
        known = tuple(_known)
    values = {s for s in (*secrets, *env_secrets(), *known) if len(s) >= _MIN_SECRET}
    forms = sorted(
        {form for v in values for form in (v, quote(v, safe=""), quote(v))}, key=len, reverse=True
    )
    for form in forms:
        text = text.replace(form, REDACTED)
    for form in forms:
        text = _scrub_edges(text, form)
    text = _LABELLED.sub(lambda m: f"{m[1]}{m[2]}{m[3] or ''}{REDACTED}", text)
    return _URL_USERINFO.sub(rf"\g<1>{REDACTED}@", text)


def _scrub_edges(text: str, secret: str) -> str:
    """``text`` without a cut-off piece of ``secret`` at its end (a prefix) or start (a suffix)."""
    end = len(text.rstrip(_EDGE))
    for size in range(min(len(secret) - 1, end), MIN_FRAGMENT - 1, -1):
        if text.endswith(secret[:size], 0, end):
            text = text[: end - size] + REDACTED + text[end:]
            break
    start = len(text) - len(text.lstrip(_EDGE))
    for size in range(min(len(secret) - 1, len(text) - start), MIN_FRAGMENT - 1, -1):
        if text.startswith(secret[-size:], start):
            text = text[:start] + REDACTED + text[start + size :]
            break
    return text


def clip(text: str, limit: int, secrets: Iterable[str] = ()) -> str:
    """``text`` redacted, then cut to its first ``limit`` characters, marked when cut."""
    text = redact(text, secrets)
    return text if len(text) <= limit else text[:limit] + "…"


def tail(text: str, limit: int = 2000, secrets: Iterable[str] = ()) -> str:
    """The last ``limit`` characters of ``text`` once redacted, marked when cut."""
    text = redact(text, secrets).strip()
    if len(text) <= limit:
        return text
    return "…" + text[-limit:]


class _Scrub(logging.Filter):
    """Redacts a record's message: a library's debug trace may print what a server sent."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        return True


_SCRUB = _Scrub()


def scrub_logs(*names: str) -> None:
    """Redact every record the loggers ``names`` emit (a filter on a parent misses children)."""
    for name in names:
        logger = logging.getLogger(name)
        if _SCRUB not in logger.filters:
            logger.addFilter(_SCRUB)


def read_key(env_var: str, *, backend: str, required: bool = True) -> str | None:
    """The API key in environment variable ``env_var``; keys never come from a spec or a file.

    Raises:
        ConfigError: ``required`` and the variable is unset or empty.
    """
    value = os.environ.get(env_var, "").strip()
    if value:
        remember(value)
        return value
    if required:
        raise ConfigError(
            f"backend {backend!r} needs an API key: set the environment variable {env_var}"
            " (or name another one with ?key_env=VAR)"
        )
    return None
