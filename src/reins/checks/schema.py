"""``json_schema``: the submission (or a part of it) validates against a JSON Schema.

The schema is a file (a path relative to the quest folder, the reserved ``__base__`` parameter
the loader passes) or given inline as a TOML table. It is read and checked when the gate loads:
a missing file, bad JSON or an invalid schema is a load error at the ``schema`` parameter.
Each validation error is one fact: ``where`` is the location in the path syntax
(``submission.people[2].name``), ``expected`` the schema's requirement (``type "string"``,
``required ["who","when"]``) and ``actual`` the validator's message. At most ``max_facts``
facts; the rest are counted in one more.

Needs the ``jsonschema`` library (a dependency of reins), imported when a gate builds this check.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path as FilePath
from typing import TYPE_CHECKING, Any, cast

from reins.checks._common import excerpt, to_json
from reins.checks.paths import SUBMISSION, Path, member
from reins.checks.spec import CWD, BuiltCheck, CheckSpec, QuestFolder
from reins.errors import ParamValueError
from reins.gate.rule import Context
from reins.values import JSON, Fact

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

NAME = "json_schema"


@dataclass(frozen=True, slots=True)
class SchemaParams:
    schema: str | bool | dict[str, JSON]
    """a JSON file relative to the quest folder, or an inline table"""
    path: Path = SUBMISSION
    """what to validate"""
    max_facts: int = 10
    """the most facts one submission leaves"""
    base: QuestFolder = CWD


def _load(params: SchemaParams) -> dict[str, Any]:
    given = params.schema
    if isinstance(given, bool):  # the boolean schemas: accept everything, or nothing
        return {} if given else {"not": {}}
    if isinstance(given, dict):
        return given
    file = FilePath(params.base) / given
    try:
        schema = json.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ParamValueError(NAME, "schema", f"cannot read {file}: {exc.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ParamValueError(NAME, "schema", f"{file} is not JSON: {exc}") from None
    if isinstance(schema, bool):
        return {} if schema else {"not": {}}
    if not isinstance(schema, dict):
        raise ParamValueError(NAME, "schema", f"{file} holds a {type(schema).__name__}")
    return schema


def _build(params: SchemaParams) -> BuiltCheck:
    try:
        import jsonschema
        from jsonschema.exceptions import SchemaError
    except ImportError:
        raise ParamValueError(
            NAME, "schema", "needs the jsonschema library: pip install jsonschema"
        ) from None
    schema = _load(params)
    cls = jsonschema.validators.validator_for(schema)
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        raise ParamValueError(NAME, "schema", f"not a valid JSON Schema: {exc.message}") from None
    validator = cls(schema)
    path, limit = params.path, params.max_facts
    if limit < 1:
        raise ParamValueError(NAME, "max_facts", f"expected at least 1, got {limit}")

    def check(ctx: Context) -> list[Fact]:
        facts: list[Fact] = []
        found = path.resolve(ctx)
        if not found:
            return [Fact(where=str(path), expected="a value to validate", actual="nothing there")]
        for where, value in found:
            try:
                errors = sorted(validator.iter_errors(cast(Any, value)), key=_order)
            except RecursionError:
                facts.append(Fact(where=where, expected="JSON nested less deeply", actual="…"))
                continue
            facts.extend(_fact(where, e) for e in errors)
        if len(facts) > limit:
            more = len(facts) - limit + 1
            facts[limit - 1 :] = [
                Fact(where=str(path), expected="no more schema errors", actual=f"{more} more")
            ]
        return facts

    return check


def _order(error: ValidationError) -> tuple[str, str]:
    return ("/".join(map(str, error.absolute_path)), str(error.validator))


def _fact(where: str, error: ValidationError) -> Fact:
    return Fact(
        where=_location(where, error.absolute_path),
        expected=f"{error.validator} {excerpt(to_json(error.validator_value), 120)}",
        actual=excerpt(error.message),
    )


def _location(where: str, parts: Iterable[str | int]) -> str:
    for part in parts:
        where = f"{where}[{part}]" if isinstance(part, int) else member(where, part)
    return where


JSON_SCHEMA = CheckSpec(
    name=NAME,
    summary="the value at the path validates against a JSON Schema (one fact per error)",
    params=SchemaParams,
    build=_build,
)
