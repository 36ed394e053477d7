"""gate.md → the rules, edges and grounds of a gate, checked before anything is judged.

reins reads the first table under the headings **Rules**, **Edges** and **Grounds**; the rest
is prose for people. Every refusal is a :class:`~reins.errors.DocumentError` naming the file,
the line and the column of the offending cell (or parameter), and what was expected there:
an unknown check, a missing, unknown, ill-typed or unusable parameter, a bad level, a duplicate
id, an edge naming no rule, a cycle in ``supersedes``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from reins.checks import BuiltCheck, CheckSpec, spec_of, validate
from reins.checks.spec import BASE
from reins.declare.tables import Cell, Table, read_tables, table_under
from reins.errors import ConfigError, DocumentError, ParamError
from reins.gate import CatalogEntry, Context, Level, Rule, Verdict
from reins.gate.evaluate import excerpt

if TYPE_CHECKING:
    from reins.gate.ground import Provider
    from reins.quest import Gate

RULE_COLUMNS = ("id", "level", "check", "parameters", "coaching", "description")
REQUIRED_RULE_COLUMNS = ("id", "level", "check")
EDGE_COLUMNS = ("rule", "supersedes", "needs")
GROUND_COLUMNS = ("name", "provider")
_PREFIX = "p = {"  # the parameters cell is the body of this inline table


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


@dataclass(frozen=True, slots=True)
class GateDoc:
    """A loaded gate.md: its rules in order, coaching, and (with an Edges table) its edges."""

    path: str
    rules: tuple[Rule, ...]
    coaching: Mapping[str, str]
    supersedes: Mapping[str, tuple[str, ...]] | None = None
    needs: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    grounds: Mapping[str, Provider] = field(default_factory=dict)

    def gate(self) -> DocumentGate:
        """The gate: a defeat graph when the document has an Edges table, else the flat one."""
        inner: Gate
        if self.supersedes is None:
            from reins.quest import FlatGate

            inner = FlatGate(self.rules)
        else:
            from reins.gate.graph import Graph

            try:
                inner = Graph.from_rules(
                    self.rules, supersedes=self.supersedes, needs=self.needs, grounds=self.grounds
                )
            except ConfigError as exc:  # what the graph refuses beyond our own checks
                raise DocumentError(self.path, 0, 0, str(exc)) from exc
        return DocumentGate(inner, self.rules, self.path)


@dataclass(frozen=True, slots=True, eq=False)
class DocumentGate:
    """A gate read from gate.md: judges like ``inner``; its catalog names checks and
    parameters."""

    inner: Gate
    rules: Sequence[Rule]
    path: str = ""

    def evaluate(self, ctx: Context) -> Verdict:
        return self.inner.evaluate(ctx)

    def catalog(self) -> list[CatalogEntry]:
        checks = {r.id: r.check for r in self.rules}
        out = []
        for entry in self.inner.catalog():
            check = checks.get(entry.id)
            if isinstance(check, DeclaredCheck):
                entry = replace(entry, check=check.name, parameters=check.parameters)
            out.append(entry)
        return out

    def __getattr__(self, name: str) -> Any:  # a graph's judge() and acceptability()
        return getattr(self.inner, name)


def load_gate(text: str, path: str, *, here: str = "") -> GateDoc:
    """Parse and check gate.md's ``text`` (read from ``path``).

    Args:
        here: the quest folder. Each check is built with it as the reserved ``__base__``
            parameter, so a file a parameter names (``schema = "schema.json"``) is read
            relative to the folder, not to the working directory.

    Raises:
        DocumentError: anything that would make the gate misjudge or fail to run.
    """
    tables = read_tables(text, path)
    rules_table = table_under(tables, "rules")
    if rules_table is None:
        raise DocumentError(path, 0, 0, "no table under a heading named Rules")
    rules, coaching = _rules(rules_table, path, here)
    doc = GateDoc(path, tuple(rules), coaching)
    grounds_table = table_under(tables, "grounds")
    grounds = _grounds(grounds_table, path) if grounds_table is not None else {}
    edges_table = table_under(tables, "edges")
    if edges_table is not None:
        supersedes, needs = _edges(edges_table, path, {r.id for r in rules}, grounds)
        doc = replace(doc, supersedes=supersedes, needs=needs, grounds=grounds)
    elif grounds:
        raise DocumentError(path, grounds_table.line if grounds_table else 0, 1, _NO_EDGES)
    return doc


_NO_EDGES = "a Grounds table needs an Edges table whose needs column names them"


def _columns(
    table: Table, path: str, what: str, known: Sequence[str], required: Sequence[str]
) -> dict[str, int]:
    index: dict[str, int] = {}
    for i, (name, cell) in enumerate(zip(table.columns, table.header, strict=True)):
        if name not in known:
            raise DocumentError(
                path,
                cell.line,
                cell.column,
                f"unknown {what} column {cell.text!r}; expected {', '.join(known)}",
            )
        if name in index:
            raise DocumentError(path, cell.line, cell.column, f"{what} column {name!r} twice")
        index[name] = i
    for name in required:
        if name not in index:
            raise DocumentError(path, table.line, 1, f"the {what} table has no {name!r} column")
    return index


def _cells(table: Table, path: str, row: tuple[Cell, ...]) -> tuple[Cell, ...]:
    if len(row) != len(table.header):
        at = row[min(len(row), len(table.header)) - 1] if row else None
        raise DocumentError(
            path,
            at.line if at else 0,
            at.column if at else 0,
            f"{len(row)} cells, expected {len(table.header)} ({', '.join(table.columns)}); "
            "write \\| for a | inside a cell",
        )
    return row


def _rules(table: Table, path: str, here: str) -> tuple[list[Rule], dict[str, str]]:
    cols = _columns(table, path, "rules", RULE_COLUMNS, REQUIRED_RULE_COLUMNS)
    if not table.rows:
        raise DocumentError(path, table.line, 1, "the rules table has no rows")
    rules: list[Rule] = []
    coaching: dict[str, str] = {}
    seen: dict[str, int] = {}

    def cell(row: tuple[Cell, ...], name: str) -> Cell | None:
        return row[cols[name]] if name in cols else None

    for raw in table.rows:
        row = _cells(table, path, raw)
        id_cell = row[cols["id"]]
        rule_id = _word(id_cell, path, "a rule id")
        if rule_id in seen:
            raise DocumentError(
                path,
                id_cell.line,
                id_cell.column,
                f"duplicate rule id {rule_id!r} (first on line {seen[rule_id]})",
            )
        seen[rule_id] = id_cell.line
        level_cell = row[cols["level"]]
        try:
            level = Level(level_cell.text.upper())
        except ValueError:
            raise DocumentError(
                path,
                level_cell.line,
                level_cell.column,
                f"level {level_cell.text!r}: expected FAIL or REVIEW",
            ) from None
        check_cell = row[cols["check"]]
        try:
            spec = spec_of(check_cell.text)
        except ConfigError as exc:
            raise DocumentError(path, check_cell.line, check_cell.column, str(exc)) from None
        if spec.ceiling is Level.REVIEW and level is Level.FAIL:
            raise DocumentError(
                path,
                level_cell.line,
                level_cell.column,
                f"check {spec.name} may weigh REVIEW at most, not FAIL",
            )
        params_cell = cell(row, "parameters") or Cell("", id_cell.line, 0)
        run = _build(spec, params_cell, path, here)
        declared = DeclaredCheck(spec.name, params_cell.text, run, spec.ceiling)
        described = cell(row, "description")
        description = described.text if described and described.text else _describe(declared)
        rules.append(Rule(rule_id, level, description, declared))
        coached = cell(row, "coaching")
        if coached is not None and coached.text:
            coaching[rule_id] = coached.text
    return rules, coaching


def _describe(check: DeclaredCheck) -> str:
    return f"{check.name}: {check.parameters}" if check.parameters else check.name


def _build(spec: CheckSpec[Any], cell: Cell, path: str, here: str) -> BuiltCheck:
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


def _word(cell: Cell, path: str, what: str) -> str:
    text = cell.text
    if not text or any(c.isspace() for c in text) or text.startswith("reins:"):
        raise DocumentError(
            path,
            cell.line,
            cell.column,
            f"expected {what}: one word, not starting with 'reins:'; got {excerpt(text, 40)!r}",
        )
    return text


def _names(cell: Cell) -> list[tuple[str, int]]:
    """A comma-separated cell's names, each with its offset in the cell."""
    out: list[tuple[str, int]] = []
    for m in re.finditer(r"[^,]+", cell.text):
        name = m.group(0).strip()
        if name:
            out.append((name, m.start() + len(m.group(0)) - len(m.group(0).lstrip())))
    return out


def _edges(
    table: Table, path: str, ids: set[str], grounds: Mapping[str, object]
) -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    cols = _columns(table, path, "edges", EDGE_COLUMNS, ("rule",))
    supersedes: dict[str, tuple[str, ...]] = {}
    needs: dict[str, tuple[str, ...]] = {}
    where: dict[str, Cell] = {}
    known = ", ".join(sorted(ids))
    for raw in table.rows:
        row = _cells(table, path, raw)
        rule_cell = row[cols["rule"]]
        if rule_cell.text not in ids:
            raise DocumentError(
                path,
                rule_cell.line,
                rule_cell.column,
                f"unknown rule {rule_cell.text!r}; the Rules table has {known}",
            )
        if rule_cell.text in where:
            raise DocumentError(
                path,
                rule_cell.line,
                rule_cell.column,
                f"rule {rule_cell.text!r} has a second edges row (first on line "
                f"{where[rule_cell.text].line})",
            )
        if "supersedes" in cols:
            c = row[cols["supersedes"]]
            where[rule_cell.text] = c
            downs = []
            for name, offset in _names(c):
                if name not in ids:
                    raise DocumentError(
                        path,
                        c.line,
                        c.column_at(offset),
                        f"unknown rule {name!r} in supersedes; the Rules table has {known}",
                    )
                downs.append(name)
            supersedes[rule_cell.text] = tuple(dict.fromkeys(downs))
        else:
            where[rule_cell.text] = rule_cell
        if "needs" in cols:
            c = row[cols["needs"]]
            wanted = []
            for name, offset in _names(c):
                if name not in grounds:
                    defined = ", ".join(sorted(grounds)) or "none"
                    raise DocumentError(
                        path,
                        c.line,
                        c.column_at(offset),
                        f"unknown ground {name!r}; the Grounds table defines {defined}",
                    )
                wanted.append(name)
            needs[rule_cell.text] = tuple(dict.fromkeys(wanted))
    _acyclic(supersedes, where, path)
    return supersedes, needs


def _acyclic(edges: Mapping[str, Sequence[str]], where: Mapping[str, Cell], path: str) -> None:
    """Refuse a cycle in ``supersedes``, at the supersedes cell of its first rule."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for down in edges.get(node, ()):
            if state.get(down) == 1:
                cycle = [*trail[trail.index(down) :], down]
                first = where[cycle[0]]
                raise DocumentError(
                    path,
                    first.line,
                    first.column,
                    f"supersedes has a cycle: {' → '.join(cycle)}",
                )
            if down not in state:
                visit(down, [*trail, down])
        state[node] = 2

    for start in edges:
        if start not in state:
            visit(start, [start])


def _grounds(table: Table, path: str) -> dict[str, Provider]:
    cols = _columns(table, path, "grounds", GROUND_COLUMNS, GROUND_COLUMNS)
    out: dict[str, Provider] = {}
    for raw in table.rows:
        row = _cells(table, path, raw)
        name = _word(row[cols["name"]], path, "a ground name")
        if name in out:
            c = row[cols["name"]]
            raise DocumentError(path, c.line, c.column, f"ground {name!r} defined twice")
        out[name] = _import(row[cols["provider"]], path, "provider")
    return out


def _import(cell: Cell, path: str, what: str) -> Callable[..., Any]:
    """``module:function`` of a cell, imported now (a load error, not a judge error later)."""
    from reins.declare.refs import import_ref

    try:
        return import_ref(cell.text)
    except ConfigError as exc:
        raise DocumentError(path, cell.line, cell.column, f"{what}: {exc}") from None
