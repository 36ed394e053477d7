"""gate.md's Rules table → the gate's rules, in order, and their coaching.

Each row names a rule (``id``, one word), its ``level`` (FAIL or REVIEW), a check of
:mod:`reins.checks` and that check's ``parameters`` (:mod:`reins.declare.parameters`); the
optional ``coaching`` and ``description`` columns add the text a retry is coached with and the
catalog's description. Every refusal is a :class:`~reins.errors.DocumentError` at its cell.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from reins.checks import BuiltCheck, CheckSpec, spec_of
from reins.declare.parameters import build_check
from reins.declare.tables import Cell, Table, columns, row_of
from reins.errors import ConfigError, DocumentError
from reins.gate import Context, Level, Rule
from reins.gate.evaluate import excerpt

RULE_COLUMNS = ("id", "level", "check", "parameters", "coaching", "description")
REQUIRED_RULE_COLUMNS = ("id", "level", "check")


@dataclass(frozen=True, slots=True)
class DeclaredCheck:
    """A rule's check as gate.md declares it: the library check, its parameters, its ceiling.

    ``ceiling`` is read by the gate (an ``ai`` check never weighs more than REVIEW).
    """

    name: str
    parameters: str
    run: BuiltCheck = field(repr=False)
    ceiling: Level | None = None

    def __call__(self, ctx: Context) -> Any:
        return self.run(ctx)


def read_rules(table: Table, path: str, here: str) -> tuple[list[Rule], dict[str, str]]:
    """The rules of the Rules ``table`` and rule id → coaching; checks built with ``here``
    (the quest folder) as their ``__base__``."""
    cols = columns(table, path, "rules", RULE_COLUMNS, REQUIRED_RULE_COLUMNS)
    if not table.rows:
        raise DocumentError(path, table.line, 1, "the rules table has no rows")
    rules: list[Rule] = []
    coaching: dict[str, str] = {}
    seen: dict[str, int] = {}  # rule id → the line it was first given on
    for raw in table.rows:
        row = _Row(row_of(table, path, raw), cols)
        rule = _rule(row, path, here, seen)
        rules.append(rule)
        coached = row.get("coaching")
        if coached is not None and coached.text:
            coaching[rule.id] = coached.text
    return rules, coaching


@dataclass(frozen=True, slots=True)
class _Row:
    cells: tuple[Cell, ...]
    cols: dict[str, int]

    def __getitem__(self, name: str) -> Cell:
        return self.cells[self.cols[name]]

    def get(self, name: str) -> Cell | None:
        return self[name] if name in self.cols else None


def _rule(row: _Row, path: str, here: str, seen: dict[str, int]) -> Rule:
    id_cell = row["id"]
    rule_id = word(id_cell, path, "a rule id")
    if rule_id in seen:
        raise DocumentError(
            path,
            id_cell.line,
            id_cell.column,
            f"duplicate rule id {rule_id!r} (first on line {seen[rule_id]})",
        )
    seen[rule_id] = id_cell.line
    level_cell = row["level"]
    level = _level(level_cell, path)
    spec = _spec(row["check"], path)
    if spec.ceiling is Level.REVIEW and level is Level.FAIL:
        raise DocumentError(
            path,
            level_cell.line,
            level_cell.column,
            f"check {spec.name} may weigh REVIEW at most, not FAIL",
        )
    params_cell = row.get("parameters") or Cell("", id_cell.line, 0)
    run = build_check(spec, params_cell, path, here)
    declared = DeclaredCheck(spec.name, params_cell.text, run, spec.ceiling)
    described = row.get("description")
    description = described.text if described and described.text else _describe(declared)
    return Rule(rule_id, level, description, declared)


def _level(cell: Cell, path: str) -> Level:
    try:
        return Level(cell.text.upper())
    except ValueError:
        raise DocumentError(
            path, cell.line, cell.column, f"level {cell.text!r}: expected FAIL or REVIEW"
        ) from None


def _spec(cell: Cell, path: str) -> CheckSpec[Any]:
    try:
        return spec_of(cell.text)
    except ConfigError as exc:
        raise DocumentError(path, cell.line, cell.column, str(exc)) from None


def _describe(check: DeclaredCheck) -> str:
    return default_description(check.name, check.parameters)


def default_description(check: str, parameters: str) -> str:
    """The description of a rule whose row gives none: its check and parameters as written.

    The gate's digest hashes it, so it stays this code reference; a page a person reads says
    the check in words instead (:func:`reins.web.desk.rule_notes`), knowing it by this form.
    """
    return f"{check}: {parameters}" if parameters else check


def word(cell: Cell, path: str, what: str) -> str:
    """The cell's text, which must be one word not starting with ``reins:`` (reins' own ids).

    Raises:
        DocumentError: at the cell, naming ``what`` was expected (``a rule id``).
    """
    text = cell.text
    if not text or any(c.isspace() for c in text) or text.startswith("reins:"):
        raise DocumentError(
            path,
            cell.line,
            cell.column,
            f"expected {what}: one word, not starting with 'reins:'; got {excerpt(text, 40)!r}",
        )
    return text
