"""The layer list of docs/architecture.md is the import graph of ``src/reins``.

Every module is parsed with ``ast``; each ``import`` and ``from … import`` of a reins module is
an edge: those at the top of a module, those inside functions (deferred: they run later, but the
module still depends on what they import) and those under ``if TYPE_CHECKING:`` (a type is
knowledge of the module that defines it). Imports by name in a string (the CLI's command table,
the lazy public names, entry points) are not statements and are not read; the lazy names are
mirrored under ``if TYPE_CHECKING:``, which is.

Each module belongs to the layer its package names (``reins.loop.engine`` to ``loop``, the
top-level modules to themselves, ``reins`` itself to ``reins``). The order is read from the code
block under "## Layers" of the page, so the page and this test cannot disagree: an edge may point
to its own layer or to a row below, never up and never across one row (layers written side by
side on a row do not import each other). No two modules may import each other, directly or
round a cycle. The exceptions below are named on the page too, with their reason.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
PAGE = ROOT / "docs" / "architecture.md"

EXCEPTIONS = {
    # The one reach up the order: the ai check builds its backend through the registry inside
    # build(), never at import, so loading a gate builds no model; it names the Backend
    # protocol for its annotations only.
    ("reins.checks.ai", "reins.backends.registry"): {"deferred"},
    ("reins.checks.ai", "reins.backends.base"): {"typing"},
}
"""(importer, imported) → the kinds of import allowed against the order, each named on the page."""


@dataclass(frozen=True, slots=True)
class Edge:
    source: str
    target: str
    path: Path
    line: int
    kind: str  # "top", "deferred" (inside a function) or "typing" (under TYPE_CHECKING)

    def __str__(self) -> str:
        where = self.path.relative_to(ROOT)
        return f"{where}:{self.line}: {self.source} → {self.target} ({self.kind})"


def page_layers(text: str) -> list[tuple[str, ...]]:
    """The rows of the code block under "## Layers", top first, each the layers it names."""
    section = text.split("\n## Layers\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"^```\n(.*?)^```", section, re.S | re.M)
    assert block, "docs/architecture.md: no code block under ## Layers"
    rows = []
    for line in block.group(1).splitlines():
        names = re.split(r"\s{2,}", line.strip(), maxsplit=1)[0]
        rows.append(tuple(n.strip() for n in names.split("·")))
    return rows


def modules() -> dict[str, Path]:
    """Every module of src/reins by its dotted name (packs' check files included)."""
    found = {}
    for path in sorted((SRC / "reins").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def layer_of(module: str) -> str:
    return module.split(".")[1] if "." in module else module


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _statements(tree: ast.AST, kind: str = "top") -> Iterator[tuple[ast.stmt, str]]:
    """Every import statement under ``tree`` with how it runs."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, kind
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            yield from _statements(node, "deferred")
        elif isinstance(node, ast.If) and _is_type_checking(node.test) and kind == "top":
            for child in node.body:
                yield from _statements(ast.Module([child], []), "typing")
            for child in node.orelse:
                yield from _statements(ast.Module([child], []), kind)
        else:
            yield from _statements(node, kind)


def edges(known: dict[str, Path]) -> list[Edge]:
    """Every import of a reins module by a reins module."""

    def resolve(name: str) -> str:
        while name not in known:
            name = name.rpartition(".")[0]
        return name

    found = []
    for source, path in known.items():
        package = source if path.name == "__init__.py" else source.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node, kind in _statements(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, base] if base else up)
                # `from pkg import name` imports the module pkg.name when there is one
                targets = [
                    f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names
                ]
            for target in dict.fromkeys(targets):
                if target == "reins" or target.startswith("reins."):
                    resolved = resolve(target)
                    if resolved != source:
                        found.append(Edge(source, resolved, path, node.lineno, kind))
    return found


def cycles(found: list[Edge]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's, iteratively)."""
    graph: dict[str, set[str]] = {}
    for e in found:
        graph.setdefault(e.source, set()).add(e.target)
        graph.setdefault(e.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return components


@pytest.fixture(scope="module")
def graph() -> tuple[dict[str, Path], list[Edge]]:
    known = modules()
    return known, edges(known)


@pytest.fixture(scope="module")
def rows() -> list[tuple[str, ...]]:
    return page_layers(PAGE.read_text(encoding="utf-8"))


def test_the_page_lists_every_layer_of_the_tree_once(
    graph: tuple[dict[str, Path], list[Edge]], rows: list[tuple[str, ...]]
) -> None:
    listed = [name for row in rows for name in row]
    in_tree = {layer_of(m) for m in graph[0]}
    assert sorted(n for n in set(listed) if listed.count(n) > 1) == [], "listed twice"
    assert sorted(in_tree - set(listed)) == [], "in src/reins but not on the page"
    assert sorted(set(listed) - in_tree) == [], "on the page but not in src/reins"


def test_no_module_imports_up_the_layer_list(
    graph: tuple[dict[str, Path], list[Edge]], rows: list[tuple[str, ...]]
) -> None:
    rank = {name: i for i, row in enumerate(rows) for name in row}
    up = []
    for e in graph[1]:
        low, high = layer_of(e.source), layer_of(e.target)
        if low == high or low not in rank or high not in rank:
            continue  # a layer missing from the page is the test above's to report
        if e.kind in EXCEPTIONS.get((e.source, e.target), ()):
            continue
        if rank[low] > rank[high]:
            up.append(f"{e}: {low} is below {high}")
        elif rank[low] == rank[high]:
            up.append(f"{e}: {low} and {high} sit side by side")
    assert up == [], "imports up the layer list of docs/architecture.md:\n" + "\n".join(up)


def test_no_modules_import_each_other_round_a_cycle(
    graph: tuple[dict[str, Path], list[Edge]],
) -> None:
    found = graph[1]
    report = []
    for component in cycles(found):
        members = set(component)
        report.append(" ↔ ".join(component))
        report += [f"  {e}" for e in found if e.source in members and e.target in members]
    assert report == [], "import cycles:\n" + "\n".join(report)


def test_each_exception_is_on_the_page_and_still_needed(
    graph: tuple[dict[str, Path], list[Edge]],
) -> None:
    text = PAGE.read_text(encoding="utf-8")
    for (source, target), kinds in EXCEPTIONS.items():
        assert f"`{source}`" in text and f"`{target}`" in text, (source, target)
        used = [e for e in graph[1] if (e.source, e.target) == (source, target)]
        assert used, f"{source} → {target} is no longer imported: drop the exception"
        assert {e.kind for e in used} <= kinds, [str(e) for e in used]


def test_the_reader_sees_every_kind_of_import(tmp_path: Path) -> None:
    """Top-level, relative, deferred and TYPE_CHECKING imports all count; strings do not."""
    package = tmp_path / "reins"
    (package / "low").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "low" / "__init__.py").write_text("")
    (package / "low" / "a.py").write_text("X = 1\n")
    (package / "low" / "b.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "from . import a\n"
        "if TYPE_CHECKING:\n"
        "    from reins.high import H\n"
        "def f():\n"
        "    import reins.high.deep\n"
        "NAME = 'reins.high:H'\n"
    )
    (package / "high.py").write_text("from reins.low import b\n")
    known = {
        "reins": package / "__init__.py",
        "reins.low": package / "low" / "__init__.py",
        "reins.low.a": package / "low" / "a.py",
        "reins.low.b": package / "low" / "b.py",
        "reins.high": package / "high.py",
    }
    found = edges(known)
    assert {(e.source, e.target, e.line, e.kind) for e in found} == {
        ("reins.low.b", "reins.low.a", 2, "top"),
        ("reins.low.b", "reins.high", 4, "typing"),
        ("reins.low.b", "reins.high", 6, "deferred"),
        ("reins.high", "reins.low.b", 1, "top"),
    }
    assert cycles(found) == [["reins.high", "reins.low.b"]]
