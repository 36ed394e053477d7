"""gate.md's Edges and Grounds tables → a defeat graph's edges and the grounds its rules read.

An Edges row names a rule, the rules it ``supersedes`` and the grounds it ``needs`` (each a
comma-separated list); a Grounds row names a ground and its ``module:function`` provider,
imported when the gate loads. A rule named nowhere, a second row for a rule, an undefined
ground and a cycle in ``supersedes`` are :class:`~reins.errors.DocumentError`\\ s at the name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from reins.declare.rules import word
from reins.declare.tables import Cell, Table, columns, row_of
from reins.errors import ConfigError, DocumentError

if TYPE_CHECKING:
    from reins.gate.ground import Provider

EDGE_COLUMNS = ("rule", "supersedes", "needs")
GROUND_COLUMNS = ("name", "provider")
Edges = dict[str, tuple[str, ...]]


def read_edges(
    table: Table, path: str, ids: Collection[str], grounds: Collection[str]
) -> tuple[Edges, Edges]:
    """``supersedes`` and ``needs`` of the Edges ``table``, over the rules ``ids`` and the
    defined ``grounds``; refused with a cycle in ``supersedes``."""
    cols = columns(table, path, "edges", EDGE_COLUMNS, ("rule",))
    supersedes: Edges = {}
    needs: Edges = {}
    where: dict[str, Cell] = {}  # rule → the cell a cycle through it is reported at
    known = ", ".join(sorted(ids))
    defined = ", ".join(sorted(grounds)) or "none"
    for raw in table.rows:
        row = row_of(table, path, raw)
        rule = _rule(row[cols["rule"]], path, ids, where, known)
        where[rule] = row[cols["supersedes"]] if "supersedes" in cols else row[cols["rule"]]
        if "supersedes" in cols:
            supersedes[rule] = _listed(
                row[cols["supersedes"]],
                path,
                ids,
                lambda n: f"unknown rule {n!r} in supersedes; the Rules table has {known}",
            )
        if "needs" in cols:
            needs[rule] = _listed(
                row[cols["needs"]],
                path,
                grounds,
                lambda n: f"unknown ground {n!r}; the Grounds table defines {defined}",
            )
    _acyclic(supersedes, where, path)
    return supersedes, needs


def read_grounds(table: Table, path: str) -> dict[str, Provider]:
    """Ground name → its provider, imported now (a load error, not a judge error later)."""
    cols = columns(table, path, "grounds", GROUND_COLUMNS, GROUND_COLUMNS)
    out: dict[str, Provider] = {}
    for raw in table.rows:
        row = row_of(table, path, raw)
        name = word(row[cols["name"]], path, "a ground name")
        if name in out:
            c = row[cols["name"]]
            raise DocumentError(path, c.line, c.column, f"ground {name!r} defined twice")
        out[name] = _import(row[cols["provider"]], path, "provider")
    return out


def _rule(
    cell: Cell, path: str, ids: Collection[str], where: Mapping[str, Cell], known: str
) -> str:
    """The rule an Edges row is about: one of ``ids``, and not given a row before."""
    if cell.text not in ids:
        raise DocumentError(
            path, cell.line, cell.column, f"unknown rule {cell.text!r}; the Rules table has {known}"
        )
    if cell.text in where:
        raise DocumentError(
            path,
            cell.line,
            cell.column,
            f"rule {cell.text!r} has a second edges row (first on line {where[cell.text].line})",
        )
    return cell.text


def _listed(
    cell: Cell, path: str, known: Collection[str], unknown: Callable[[str], str]
) -> tuple[str, ...]:
    """The names of a comma-separated cell, each once; a name not in ``known`` refused where
    it is written, with the message ``unknown(name)``."""
    out: list[str] = []
    for m in re.finditer(r"[^,]+", cell.text):
        name = m.group(0).strip()
        if not name:
            continue
        if name not in known:
            offset = m.start() + len(m.group(0)) - len(m.group(0).lstrip())
            raise DocumentError(path, cell.line, cell.column_at(offset), unknown(name))
        out.append(name)
    return tuple(dict.fromkeys(out))


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


def _import(cell: Cell, path: str, what: str) -> Callable[..., Any]:
    """``module:function`` of a cell, imported now (a load error, not a judge error later)."""
    from reins.declare.refs import import_ref

    try:
        return import_ref(cell.text)
    except ConfigError as exc:
        raise DocumentError(path, cell.line, cell.column, f"{what}: {exc}") from None
