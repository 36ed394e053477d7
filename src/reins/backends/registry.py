"""The backend registry: model specs (``backend:model?key=value&…``) and the factories they name.

Backends are found in :data:`BACKENDS`, a :class:`reins.registry.Registry` over the
``reins.backends`` entry-point group, read lazily and once; the built-ins are registered there
the same way as plugins. A factory is a callable
``(model, options) -> Backend`` with an ``options`` attribute mapping each allowed query key to
a one-line help text; a backend class with an ``options`` class attribute is one.

``ollama:qwen2.5:0.5b?temperature=0.2&num_ctx=8192`` names the backend ``ollama`` (everything
before the first ``:``), the model ``qwen2.5:0.5b`` (up to the first ``?``; models may contain
colons) and the options ``{"temperature": "0.2", "num_ctx": "8192"}``. Model and values are
percent-decoded (``%3F`` is a ``?``, ``%26`` an ``&``); a ``+`` stays a ``+``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import unquote

from reins.errors import ConfigError
from reins.registry import NAME, Registry, takes_options

if TYPE_CHECKING:
    from reins.backends.base import Backend, BackendFactory

ENTRY_POINT_GROUP = "reins.backends"

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*\Z")


BACKENDS: Registry[BackendFactory] = Registry("backend", ENTRY_POINT_GROUP, takes_options)
"""The text backends: the ``reins.backends`` entry points (the built-ins are there too)."""


@dataclass(frozen=True, slots=True)
class Spec:
    """A parsed model spec: which backend, which model, and the query options."""

    backend: str
    model: str
    options: Mapping[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        from urllib.parse import quote

        text = f"{self.backend}:{quote(self.model, safe=':/@.-_~+')}"
        if self.options:
            query = "&".join(f"{k}={quote(v, safe=':/@.-_~+,')}" for k, v in self.options.items())
            text = f"{text}?{query}"
        return text


def parse_spec(spec: str) -> Spec:
    """Parse ``backend:model?key=value&…`` without looking the backend up.

    Raises:
        ConfigError: no colon, an empty or malformed backend name, an empty model, a query
            segment that is not ``key=value``, or a key given twice.
    """
    text = spec.strip()
    if ":" not in text:
        raise ConfigError(
            f"model spec {spec!r} names no backend: write backend:model, e.g. ollama:llama3"
            f" (backends: {_known_text()})"
        )
    backend, _, rest = text.partition(":")
    if not backend:
        raise ConfigError(f"model spec {spec!r} names no backend before the ':'")
    if not NAME.match(backend):
        raise ConfigError(
            f"model spec {spec!r}: {backend!r} is not a backend name"
            " (lower-case letters, digits, '-', '_' and '.')"
        )
    model_text, has_query, query = rest.partition("?")
    model = unquote(model_text)
    if not model.strip():
        raise ConfigError(
            f"model spec {spec!r} names no model: write {backend}:MODEL, e.g. {backend}:llama3"
        )
    options: dict[str, str] = {}
    if has_query and query:
        for segment in query.split("&"):
            key, eq, value = segment.partition("=")
            if not eq or not _KEY.match(key):
                raise ConfigError(
                    f"model spec {spec!r}: bad option {segment!r}; write key=value pairs"
                    " joined by '&', e.g. ?temperature=0.2&max_output_tokens=256"
                )
            if key in options:
                raise ConfigError(f"model spec {spec!r}: option {key!r} is given twice")
            options[key] = unquote(value)
    return Spec(backend, model, options)


def names() -> list[str]:
    """The names of every registered backend, sorted, without importing any of them."""
    return BACKENDS.names()


def _known_text() -> str:
    return BACKENDS.known_text()


def factory(name: str) -> BackendFactory:
    """The factory registered as ``name``, loaded on first use.

    Raises:
        NotFound: no backend has that name; the message lists the known ones.
        ConfigError: the entry point cannot be imported or does not name a factory.
    """
    return BACKENDS.find(name)


def known() -> dict[str, BackendFactory]:
    """Every registered backend by name, each loaded (imports their modules, not their SDKs)."""
    return BACKENDS.known()


def register(name: str, backend_factory: BackendFactory) -> None:
    """Register a factory under ``name`` in this process (see :meth:`Registry.register`)."""
    BACKENDS.register(name, backend_factory)


def unregister(name: str) -> None:
    """Forget a factory added with :func:`register` (entry points come back on next use)."""
    BACKENDS.unregister(name)


def check_options(name: str, allowed: Mapping[str, str], options: Mapping[str, str]) -> None:
    """Refuse keys that backend ``name`` does not allow, listing the ones it does.

    Raises:
        ConfigError: an unknown key.
    """
    unknown = [key for key in options if key not in allowed]
    if unknown:
        keys = ", ".join(sorted(allowed)) or "none"
        raise ConfigError(
            f"backend {name!r} has no option {unknown[0]!r}. Allowed: {keys}."
            " See `reins backends` for what each one does."
        )


def resolve(spec: str | Spec) -> Backend:
    """Build the backend a model spec names.

    Raises:
        ConfigError: a malformed spec, an unknown option, or a value the backend refuses.
        NotFound: an unknown backend; the message lists the known ones.
    """
    parsed = parse_spec(spec) if isinstance(spec, str) else spec
    backend_factory = factory(parsed.backend)
    check_options(parsed.backend, backend_factory.options, parsed.options)
    return backend_factory(parsed.model, dict(parsed.options))
