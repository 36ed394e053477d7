"""A registry: named factories of one kind, from entry points and from the program itself.

One class, three instances: the text backends (:data:`reins.backends.registry.BACKENDS`, group
``reins.backends``), the coding agents (:data:`reins.coders.registry.CODERS`, ``reins.coders``)
and the storage engines (:data:`reins.store.engines.ENGINES`, ``reins.stores``). A registry is a
value a program holds, not module state: a test or a program may make one of its own.

A name is found, in order, among the factories registered in this process
(:meth:`Registry.register`, which win), those given when the registry was made (built-ins a
command needs before it may pay for reading entry points: the storage engines), and the entry
points of the registry's group, read lazily, once, and loaded on first use. A group renamed
before a release is still read under its old name (``formerly``) for one release; a plugin
found only there works, with a deprecation warning.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Generic, TypeVar, cast

from reins.errors import ConfigError, NotFound

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

F = TypeVar("F")

NAME = re.compile(r"[a-z0-9][a-z0-9_.-]*\Z")
"""What a registered name may be: lower-case letters, digits, ``-``, ``_`` and ``.``."""


def described(obj: object) -> str:
    """Where an object registered in-process lives, as an entry point would say it."""
    return f"{getattr(obj, '__module__', '?')}:{getattr(obj, '__qualname__', repr(obj))}"


def takes_options(obj: object) -> str | None:
    """The shape of a generator's factory (a backend's, an agent's): callable as
    ``(model, options)``, with an ``options`` dict of the query keys it allows."""
    if callable(obj) and isinstance(getattr(obj, "options", None), dict):
        return None
    return "it needs to be callable as (model, options) with an `options` dict"


class Registry(Generic[F]):
    """Named factories of one kind (``kind``: "backend", "coding agent", …).

    Args:
        kind: what one entry is called in messages.
        group: the entry-point group plugins register under.
        accepts: whether a loaded object is a factory of this kind; None when it is, else
            what it lacks (said in the error).
        formerly: old names of the group, read after it, each with a deprecation warning.
        builtins: factories known without reading entry points.
        missing: the message for a name it does not know (default: the known names).
    """

    def __init__(
        self,
        kind: str,
        group: str,
        accepts: Callable[[object], str | None],
        *,
        formerly: Iterable[str] = (),
        builtins: Mapping[str, F] | None = None,
        missing: Callable[[str], str] | None = None,
    ) -> None:
        self.kind, self.group, self.formerly = kind, group, tuple(formerly)
        self._accepts = accepts
        self._missing = missing
        self._builtins: dict[str, F] = dict(builtins or {})
        self._registered: dict[str, F] = {}
        self._loaded: dict[str, F] = {}
        self._points: dict[str, EntryPoint] | None = None
        self._old: set[str] = set()  # names found only under an old group name

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {self.group!r})"

    # -- what is known -----------------------------------------------------------------------

    def _entry_points(self) -> dict[str, EntryPoint]:
        if self._points is None:
            from importlib.metadata import entry_points

            points = {ep.name: ep for ep in entry_points(group=self.group)}
            for old in self.formerly:
                for ep in entry_points(group=old):
                    if ep.name not in points:
                        points[ep.name] = ep
                        self._old.add(ep.name)
            self._points = points
        return self._points

    def names(self) -> list[str]:
        """Every name this registry answers, sorted, without importing any of them."""
        return sorted({*self._registered, *self._builtins, *self._entry_points()})

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        return name in self._registered or name in self._builtins or name in self._entry_points()

    def known_text(self) -> str:
        """The names, for a message: ``a, b, c`` (or "none installed")."""
        return ", ".join(self.names()) or "none installed"

    def target(self, name: str) -> str | None:
        """Where ``name`` points (``module:attr``), or None if this registry has no such name."""
        for table in (self._registered, self._builtins):
            if name in table:
                return described(table[name])
        ep = self._entry_points().get(name)
        return ep.value if ep is not None else None

    # -- finding one -------------------------------------------------------------------------

    def find(self, name: str) -> F:
        """The factory registered as ``name``, loaded on first use.

        Raises:
            NotFound: no such name; the message lists the known names (or is the registry's
                own ``missing``).
            ConfigError: the entry point cannot be imported or is not a factory of this kind.
        """
        for table in (self._registered, self._builtins, self._loaded):
            if name in table:
                return table[name]
        ep = self._entry_points().get(name)
        if ep is None:
            if self._missing is not None:
                raise NotFound(self._missing(name))
            raise NotFound(f"No {self.kind} named {name!r}. Known: {self.known_text()}.")
        try:
            obj = ep.load()
        except (ImportError, AttributeError) as exc:
            raise ConfigError(f"{self.kind} {name!r} ({ep.value}) cannot be loaded: {exc}") from exc
        lacks = self._accepts(obj)
        if lacks is not None:
            raise ConfigError(f"{self.kind} {name!r} ({ep.value}) is not a {self.kind}: {lacks}")
        if name in self._old:
            old = ep.group
            message = (
                f"reins: {self.kind} {name!r} is registered under the entry-point group {old!r}, "
                f"renamed {self.group!r}; the old name is read until the next release"
            )
            # FutureWarning: shown by default, since it is the plugin's user who must act.
            warnings.warn(message, FutureWarning, stacklevel=2)
        factory = cast("F", obj)  # what it is was checked by ``accepts`` just above
        self._loaded[name] = factory
        return factory

    def known(self) -> dict[str, F]:
        """Every factory by name, each loaded (imports its module)."""
        return {name: self.find(name) for name in self.names()}

    # -- this process's own ------------------------------------------------------------------

    def register(self, name: str, factory: F) -> None:
        """Register ``factory`` as ``name`` in this process, ahead of any entry point of that
        name (tests, and programs that build their own; installed plugins use the group).

        Raises:
            ConfigError: ``name`` is not a name (:data:`NAME`).
        """
        if not NAME.match(name):
            raise ConfigError(
                f"{name!r} is not a {self.kind} name (lower-case letters, digits, '-', '_', '.')"
            )
        self._registered[name] = factory

    def unregister(self, name: str) -> None:
        """Forget a factory added with :meth:`register` (what it shadowed comes back)."""
        self._registered.pop(name, None)

    def forget_entry_points(self) -> None:
        """Read the group again on next use (after a plugin was installed in this process)."""
        self._points, self._old = None, set()
        self._loaded.clear()
