"""The backend registry: model specs (``backend:model?key=value&…``) and the factories they name.

Backends are found through the ``reins.backends`` entry-point group, read lazily and once; the
built-ins are registered there the same way as plugins. A factory is a callable
``(model, options) -> Backend`` with an ``options`` attribute mapping each allowed query key to
a one-line help text; a backend class with an ``options`` class attribute is one.

``ollama:qwen2.5:0.5b?temperature=0.2&seed=7`` names the backend ``ollama`` (everything before
the first ``:``), the model ``qwen2.5:0.5b`` (up to the first ``?``; models may contain colons)
and the options ``{"temperature": "0.2", "seed": "7"}``. Model and values are percent-decoded
(``%3F`` is a ``?``, ``%26`` an ``&``); a ``+`` stays a ``+``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import unquote

from reins.errors import ConfigError, NotFound

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

    from reins.backends.base import Backend, BackendFactory

ENTRY_POINT_GROUP = "reins.backends"

_NAME = re.compile(r"[a-z0-9][a-z0-9_.-]*\Z")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*\Z")

# name → entry point (not loaded yet); filled from the group on first use
_entry_points: dict[str, EntryPoint] | None = None
# name → factory loaded from its entry point
_factories: dict[str, BackendFactory] = {}
# name → factory registered in this process with register(); these come first
_registered: dict[str, BackendFactory] = {}


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
    if not _NAME.match(backend):
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
                    " joined by '&', e.g. ?temperature=0.2&seed=1"
                )
            if key in options:
                raise ConfigError(f"model spec {spec!r}: option {key!r} is given twice")
            options[key] = unquote(value)
    return Spec(backend, model, options)


def _group() -> dict[str, EntryPoint]:
    global _entry_points
    if _entry_points is None:
        from importlib.metadata import entry_points

        _entry_points = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
    return _entry_points


def names() -> list[str]:
    """The names of every registered backend, sorted, without importing any of them."""
    return sorted({*_group(), *_registered})


def _known_text() -> str:
    return ", ".join(names()) or "none installed"


def factory(name: str) -> BackendFactory:
    """The factory registered as ``name``, loaded on first use.

    Raises:
        NotFound: no backend has that name; the message lists the known ones.
        ConfigError: the entry point cannot be imported or does not name a factory.
    """
    if name in _registered:
        return _registered[name]
    if name in _factories:
        return _factories[name]
    ep = _group().get(name)
    if ep is None:
        raise NotFound(f"No backend named {name!r}. Known: {_known_text()}.")
    try:
        obj: Any = ep.load()
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"backend {name!r} ({ep.value}) cannot be loaded: {exc}") from exc
    options = getattr(obj, "options", None)
    if not callable(obj) or not isinstance(options, dict):
        raise ConfigError(
            f"backend {name!r} ({ep.value}) is not a backend factory:"
            " it needs to be callable as (model, options) with an `options` dict"
        )
    loaded = cast("BackendFactory", obj)
    _factories[name] = loaded
    return loaded


def target(name: str) -> str | None:
    """Where the entry point named ``name`` points (``module:attr``), or None if not one."""
    if name in _registered:
        obj = _registered[name]
        return f"{getattr(obj, '__module__', '?')}:{getattr(obj, '__qualname__', repr(obj))}"
    ep = _group().get(name)
    return ep.value if ep is not None else None


def known() -> dict[str, BackendFactory]:
    """Every registered backend by name, each loaded (imports their modules, not their SDKs)."""
    return {name: factory(name) for name in names()}


def register(name: str, backend_factory: BackendFactory) -> None:
    """Register a factory under ``name`` in this process, replacing any entry point of that name.

    For tests and programs that build backends of their own; installed plugins use the
    ``reins.backends`` entry-point group instead.
    """
    if not _NAME.match(name):
        raise ConfigError(f"{name!r} is not a backend name")
    _registered[name] = backend_factory


def unregister(name: str) -> None:
    """Forget a factory added with :func:`register` (entry points come back on next use)."""
    _registered.pop(name, None)


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
