"""Secrets: read keys from the environment only, and scrub them from every text reins keeps.

A backend's error message ends up in the ledger, the export, logs and the terminal, so each one
passes through a :class:`Redactor` first: configured key values, the values of secret-looking
environment variables, and anything that looks like an auth header or ``api_key=…`` pair are
replaced by ``[REDACTED]``. A key read through :func:`read_key` is remembered for the life of the
process, so even text that never meets its backend again (the loop's copy of an error, a model
name) is scrubbed of it. Text is redacted first and cut afterwards (:meth:`Redactor.clip`,
:meth:`Redactor.tail`): cutting first could leave the head or the tail of a key that no longer
matches whole.

A :class:`Redactor` reads the environment once, when it is built: each backend builds one with
itself, and the loop one per run, so a generation does not walk the environment again. A
secret-looking variable set after that is not known to it; a key read through
:func:`read_key`, or given to :func:`remember`, is known to every redactor at once, whenever it
was read. :func:`redact`, :func:`clip` and :func:`tail` build a fresh one on each call.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Iterable, Mapping
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
_known_version = 0  # bumped by each remember() that adds a secret, so redactors know to look


def remember(*secrets: str | None) -> None:
    """Scrub ``secrets`` from every text a redactor sees from now on, in any module."""
    global _known_version
    with _known_lock:
        before = len(_known)
        _known.update(s for s in secrets if s and len(s) >= _MIN_SECRET)
        if len(_known) != before:
            _known_version += 1


def env_secrets(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of environment variables whose names look secret (``*_API_KEY``, ``*TOKEN*``, …)."""
    env = os.environ if environ is None else environ
    return [v for k, v in env.items() if _SECRET_NAME.search(k) and len(v) >= _MIN_SECRET]


def _forms(values: Iterable[str]) -> set[str]:
    """Each secret as written, and URL-encoded both ways (it may travel in a query or a path)."""
    return {form for v in values for form in (v, quote(v, safe=""), quote(v))}


def _longest_first(forms: Iterable[str]) -> tuple[str, ...]:
    # a secret that contains another is replaced whole before the shorter one could cut it
    return tuple(sorted(forms, key=len, reverse=True))


class Redactor:
    """Scrubs ``secrets``, the secret-looking variables of ``environ`` (the process's own by
    default) as they are now, and every key :func:`remember` knows, then or later."""

    def __init__(
        self, secrets: Iterable[str] = (), environ: Mapping[str, str] | None = None
    ) -> None:
        own = (*secrets, *env_secrets(environ))
        self._own = _forms(s for s in own if len(s) >= _MIN_SECRET)
        self._version = -1
        self._all: tuple[str, ...] = ()

    def _current(self) -> tuple[str, ...]:
        """Every form to scrub, longest first; built again only once remember() learnt more."""
        if self._version != _known_version:
            with _known_lock:
                version, known = _known_version, tuple(_known)
            self._all = _longest_first(self._own | _forms(known))
            self._version = version
        return self._all

    def __call__(self, text: str, secrets: Iterable[str] = ()) -> str:
        """``text`` with every secret value, labelled credential and URL password replaced;
        ``secrets`` are scrubbed too, this once."""
        forms = self._current()
        extra = _forms(s for s in secrets if len(s) >= _MIN_SECRET).difference(forms)
        if extra:
            forms = _longest_first({*forms, *extra})
        for form in forms:
            text = text.replace(form, REDACTED)
        for form in forms:
            text = _scrub_edges(text, form)
        text = _LABELLED.sub(lambda m: f"{m[1]}{m[2]}{m[3] or ''}{REDACTED}", text)
        return _URL_USERINFO.sub(rf"\g<1>{REDACTED}@", text)

    def clip(self, text: str, limit: int) -> str:
        """``text`` redacted, then cut to its first ``limit`` characters, marked when cut."""
        text = self(text)
        return text if len(text) <= limit else text[:limit] + "…"

    def tail(self, text: str, limit: int = 2000) -> str:
        """The last ``limit`` characters of ``text`` once redacted, marked when cut."""
        text = self(text).strip()
        if len(text) <= limit:
            return text
        return "…" + text[-limit:]


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every secret value, labelled credential and URL password replaced (the
    environment read now: a redactor held for many texts reads it once)."""
    return Redactor(secrets)(text)


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
    return Redactor(secrets).clip(text, limit)


def tail(text: str, limit: int = 2000, secrets: Iterable[str] = ()) -> str:
    """The last ``limit`` characters of ``text`` once redacted, marked when cut."""
    return Redactor(secrets).tail(text, limit)


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
