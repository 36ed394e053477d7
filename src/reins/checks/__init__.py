"""The standard check library: named, parameterised checks that ``gate.md`` rules call.

Checks are imported on first use (a CLI start imports none). :func:`spec_of` finds a check by
name; :func:`validate` checks the parameters a document gives against its :class:`Param` list.
Each check is documented in ``docs/checks.md``.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping

from reins.checks.spec import (
    BASE,
    REQUIRED,
    BuiltCheck,
    CheckSpec,
    Param,
    Params,
    ParamType,
    base_dir,
)
from reins.errors import ConfigError, ParamError

__all__ = [
    "BASE",
    "REQUIRED",
    "STANDARD",
    "BuiltCheck",
    "CheckSpec",
    "Param",
    "ParamType",
    "Params",
    "base_dir",
    "spec_of",
    "validate",
]

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
    "ai": "reins.checks.ai:AI",
    "python": "reins.checks.python:PYTHON",
}


def spec_of(name: str) -> CheckSpec:
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


_PYTHON_TYPES: dict[str, tuple[type, ...]] = {
    "str": (str,),
    "path": (str,),
    "int": (int,),
    "float": (int, float),
    "bool": (bool,),
}


def validate(spec: CheckSpec, given: Mapping[str, object]) -> dict[str, object]:
    """The parameters for ``spec``: ``given`` checked and completed with defaults.

    Raises:
        ParamError: a parameter is unknown, missing or of the wrong type. A ``path`` is only
            checked to be a string here; :mod:`reins.checks.paths` parses it when the check is
            built. The reserved :data:`BASE` (the quest folder) passes through unchecked.
    """
    known = {p.name: p for p in spec.params}
    for name in given:
        if name not in known and name != BASE:
            names = ", ".join(known) or "none"
            raise ParamError(spec.name, name, f"unknown parameter (this check takes: {names})")
    out: dict[str, object] = {}
    for p in spec.params:
        if p.name not in given:
            if p.default is REQUIRED:
                raise ParamError(spec.name, p.name, f"missing; expected {_describe(p.type)}")
            out[p.name] = p.default
            continue
        value = given[p.name]
        if not _fits(p.type, value):
            raise ParamError(
                spec.name,
                p.name,
                f"expected {_describe(p.type)}, got {type(value).__name__} {value!r:.60}",
            )
        out[p.name] = float(value) if p.type == "float" else value  # type: ignore[arg-type]
    if BASE in given:
        out[BASE] = given[BASE]
    return out


def _fits(kind: ParamType, value: object) -> bool:
    if kind == "json":
        return True
    if kind == "list[str]":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    if isinstance(value, bool) and kind != "bool":  # TOML true is not the number 1
        return False
    return isinstance(value, _PYTHON_TYPES[kind])


def _describe(kind: ParamType) -> str:
    return {
        "str": "a string",
        "path": 'a path such as "submission.who" or "item.date"',
        "int": "a whole number",
        "float": "a number",
        "bool": "true or false",
        "list[str]": "an array of strings",
        "json": "any TOML value",
    }[kind]
