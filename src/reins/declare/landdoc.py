"""quest.toml's ``[land]`` table → the land rules: what ``reins land`` judges after each merge.

::

    [land]
    rules_file = "land.md"     # a Markdown file with a Rules table, as gate.md's

The file's first table under a heading named **Rules** is read as gate.md's is
(:mod:`reins.declare.rules`: id, level, check, parameters, coaching, description), so a land
rule is written, checked and coached like a gate rule; the rest of the file is prose for
people. Land rules are flat: every one runs, and an Edges or Grounds table there is refused.
Their ids are their own (a land item is judged by the gate's rules, then by these), and their
coaching goes with the quest's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from reins.declare.rules import read_rules
from reins.declare.tables import read_tables, table_under
from reins.errors import DocumentError
from reins.gate import Rule

TABLE = "land"
KEYS = ("rules_file",)


class Doc(Protocol):
    """What the table is read from (:class:`reins.declare.questdoc.Doc` is one)."""

    data: dict[str, Any]

    def get(self, table: str, key: str, kind: type, default: Any) -> Any: ...

    def error(self, table: str, key: str, message: str) -> DocumentError: ...


def read_land(
    doc: Doc, folder: Path, gate_ids: set[str]
) -> tuple[tuple[Rule, ...], dict[str, str]]:
    """The land rules and their coaching (none without a ``[land]`` table).

    Raises:
        DocumentError: the file is missing or unreadable, has no Rules table, a row that does
            not load, an Edges or Grounds table, or a rule id the gate has too.
    """
    if TABLE not in doc.data:
        return (), {}
    name = doc.get(TABLE, "rules_file", str, None)
    if not name:
        raise doc.error(TABLE, "", '[land] needs rules_file = "land.md": a file with a Rules table')
    path = folder / name
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise doc.error(TABLE, "rules_file", f"cannot read {path}: {exc}") from None
    tables = read_tables(text, str(path))
    found = table_under(tables, "rules")
    if found is None:
        raise DocumentError(str(path), 0, 0, "no table under a heading named Rules")
    for other in ("edges", "grounds"):
        table = table_under(tables, other)
        if table is not None:
            raise DocumentError(
                str(path), table.line, 1, f"land rules are flat: every one runs (no {other} table)"
            )
    rules, coaching = read_rules(found, str(path), str(folder))
    clash = sorted({r.id for r in rules} & gate_ids)
    if clash:
        raise DocumentError(
            str(path), found.line, 1,
            f"rule id {clash[0]!r} is gate.md's too: a land item is judged by both, so name the "
            "land rule otherwise",
        )  # fmt: skip
    return tuple(rules), coaching
