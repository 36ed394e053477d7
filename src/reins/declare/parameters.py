"""A rule's parameters cell (the body of a TOML inline table) → its check, built.

The cell is read as TOML, the table read into the check's parameters dataclass
(:func:`reins.checks.validate`, with the quest folder as the reserved ``__base__``) and the
check built from it. Every refusal is a :class:`~reins.errors.DocumentError` at the column
where the offending parameter is written: a TOML error, an unknown, missing or ill-typed
parameter, a value the check cannot use (a regex that does not compile).
"""

from __future__ import annotations

import re
from typing import Any

from reins.checks import BASE, BuiltCheck, CheckSpec, validate
from reins.declare.tables import Cell
from reins.errors import ConfigError, DocumentError, ParamError

_PREFIX = "p = {"  # the parameters cell is the body of this inline table


def build_check(spec: CheckSpec[Any], cell: Cell, path: str, here: str) -> BuiltCheck:
    """The check ``spec`` builds from the parameters written in ``cell``.

    Args:
        here: the quest folder, passed as ``__base__`` (a file a parameter names is read
            relative to it); empty for none.

    Raises:
        DocumentError: at the parameter's position, or the cell's when no parameter is named.
    """
    given = _parameters(cell, path)
    try:
        return spec.build(validate(spec, {**given, BASE: here} if here else given))
    except ParamError as exc:
        line, column = _param_position(cell, exc.param)
        raise DocumentError(
            path, line, column, f"check {spec.name}, parameter {exc.param!r}: {exc.message}"
        ) from None
    except (ValueError, ConfigError) as exc:
        named = next((n for n in given if re.search(rf"\b{re.escape(n)}\b", str(exc))), "")
        line, column = _param_position(cell, named) if named else (cell.line, cell.column)
        raise DocumentError(path, line, column, f"check {spec.name}: {exc}") from None


def _parameters(cell: Cell, path: str) -> dict[str, object]:
    """The parameters cell as a TOML inline table's body; a TOML error at its column."""
    import tomllib

    if not cell.text:
        return {}
    try:
        data = tomllib.loads(f"{_PREFIX}{cell.text}}}")
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        m = re.search(r"\(at line (\d+), column (\d+)\)", message)
        offset = int(m.group(2)) - 1 - len(_PREFIX) if m else 0
        offset = max(0, min(offset, len(cell.text)))
        reason = re.sub(r"\s*\(at line \d+, column \d+\)", "", message)
        raise DocumentError(
            path,
            cell.line,
            cell.column_at(offset),
            f"parameters are not a TOML inline table body ({reason}); "
            "expected name = value, … with strings quoted",
        ) from None
    params = data.get("p")
    if not isinstance(params, dict) or set(data) != {"p"}:
        raise DocumentError(path, cell.line, cell.column, "expected name = value, …")
    return params


def _param_position(cell: Cell, name: str) -> tuple[int, int]:
    """Where parameter ``name`` is written in ``cell``; the cell's start when it is not."""
    pattern = rf"(?:^|[,{{])\s*(?:{re.escape(name)}|\"{re.escape(name)}\"|'{re.escape(name)}')\s*="
    m = re.search(pattern, cell.text)
    if m is None:
        return cell.line, cell.column
    offset = m.start() + len(m.group(0)) - len(m.group(0).lstrip(",{ \t"))
    return cell.line, cell.column_at(offset)
