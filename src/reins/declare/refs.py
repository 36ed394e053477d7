"""``module:function`` references in quest documents, imported when the document loads."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from reins.errors import ConfigError


def import_ref(ref: str) -> Callable[..., Any]:
    """The callable ``ref`` (``package.module:function``) names.

    Raises:
        ConfigError: not of that form, the module does not import, or the name is missing or
            not callable. One line; the traceback is the author's.
    """
    module_name, sep, attr = ref.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(f"expected module:function, got {ref!r}")
    try:
        obj: Any = importlib.import_module(module_name)
    except Exception as exc:
        raise ConfigError(
            f"{ref}: module {module_name} failed to import: {type(exc).__name__}: {exc}"
        ) from exc
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ConfigError(f"{ref}: module {module_name} has no {attr!r}") from None
    if not callable(obj):
        raise ConfigError(f"{ref}: {attr} is a {type(obj).__name__}, not a function")
    return obj  # type: ignore[no-any-return]
