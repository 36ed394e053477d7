"""gate.md → the rules, edges and grounds of a gate, checked before anything is judged.

reins reads the first table under the headings **Rules** (:mod:`~reins.declare.rules`, each
rule's parameters read by :mod:`~reins.declare.parameters`), **Edges** and **Grounds**
(:mod:`~reins.declare.edges`); the rest is prose for people. Every refusal is a
:class:`~reins.errors.DocumentError` naming the file, the line and the column of the offending
cell (or parameter), and what was expected there: an unknown check, a missing, unknown,
ill-typed or unusable parameter, a bad level, a duplicate id, an edge naming no rule, a cycle
in ``supersedes``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from reins.declare.edges import read_edges, read_grounds
from reins.declare.rules import DeclaredCheck, read_rules
from reins.declare.tables import read_tables, table_under
from reins.errors import ConfigError, DocumentError
from reins.gate import CatalogEntry, Context, Rule, Verdict

if TYPE_CHECKING:
    from reins.gate.ground import Provider
    from reins.quest import Gate


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
    rules, coaching = read_rules(rules_table, path, here)
    doc = GateDoc(path, tuple(rules), coaching)
    grounds_table = table_under(tables, "grounds")
    grounds = read_grounds(grounds_table, path) if grounds_table is not None else {}
    edges_table = table_under(tables, "edges")
    if edges_table is not None:
        supersedes, needs = read_edges(edges_table, path, {r.id for r in rules}, grounds)
        doc = replace(doc, supersedes=supersedes, needs=needs, grounds=grounds)
    elif grounds:
        raise DocumentError(path, grounds_table.line if grounds_table else 0, 1, _NO_EDGES)
    return doc


_NO_EDGES = "a Grounds table needs an Edges table whose needs column names them"
