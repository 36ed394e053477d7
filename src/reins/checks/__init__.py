"""The standard check library: named, parameterised checks that ``gate.md`` rules call.

Checks are imported on first use (a CLI start imports none). :func:`spec_of` finds a check by
name; :func:`validate` reads the parameters a document gives into the check's parameters
dataclass (:mod:`reins.checks.params`). Each check is documented in ``docs/checks.md``.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any, TypeVar

from reins.checks.spec import BASE, CWD, REQUIRED, BuiltCheck, CheckSpec, Param, QuestFolder
from reins.errors import ConfigError

__all__ = [
    "BASE",
    "CWD",
    "REQUIRED",
    "STANDARD",
    "BuiltCheck",
    "CheckSpec",
    "Param",
    "QuestFolder",
    "parameters",
    "spec_of",
    "validate",
]

P = TypeVar("P")

# name → "module:attribute" of its CheckSpec. One module per check (or per family of checks).
STANDARD: dict[str, str] = {
    "json_schema": "reins.checks.schema:JSON_SCHEMA",
    "regex": "reins.checks.regex:REGEX",
    "contains": "reins.checks.keywords:CONTAINS",
    "absent": "reins.checks.keywords:ABSENT",
    "length": "reins.checks.length:LENGTH",
    "anchored": "reins.checks.anchored:ANCHORED",
    "temporal": "reins.checks.dates:TEMPORAL",
    "numeric": "reins.checks.numbers:NUMERIC",
    "equals": "reins.checks.equals:EQUALS",
    "json_path": "reins.checks.jsonpath:JSON_PATH",
    "command": "reins.checks.command:COMMAND",
    "pytest": "reins.checks.pytestrun:PYTEST",
    "changed_files": "reins.checks.changes:CHANGED_FILES",
    "ai": "reins.checks.ai:AI",
    "python": "reins.checks.python:PYTHON",
}


def spec_of(name: str) -> CheckSpec[Any]:
    """The check called ``name``.

    Raises:
        ConfigError: no check has that name (the message lists the known ones).
    """
    ref = STANDARD.get(name)
    if ref is None:
        raise ConfigError(f"unknown check {name!r}. Known: {', '.join(sorted(STANDARD))}")
    module_name, _, attr = ref.partition(":")
    spec = getattr(importlib.import_module(module_name), attr)
    if not isinstance(spec, CheckSpec):  # pragma: no cover - a broken library entry
        raise ConfigError(f"check {name}: {ref} is not a CheckSpec")
    return spec


def validate(spec: CheckSpec[P], given: Mapping[str, object]) -> P:
    """The parameters for ``spec``: ``given`` read into its dataclass, defaults filled in.

    Raises:
        ParamError: a parameter is unknown, missing or of the wrong type (a
            :class:`~reins.errors.ParamValueError` for a value of the right type that cannot
            be used: a path that does not parse, a string its ``Literal`` does not list). The
            reserved :data:`BASE` (the quest folder) goes to a :data:`QuestFolder` field.
    """
    from reins.checks.params import validate as read

    return read(spec, given)


def parameters(spec: CheckSpec[P]) -> tuple[Param, ...]:
    """The parameters a rule may write for ``spec``, as ``docs/checks.md`` lists them: derived
    from its dataclass (names, types, defaults, the docstring under each field)."""
    from reins.checks.params import declared

    return declared(spec.params)
