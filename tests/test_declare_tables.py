"""Markdown tables read with the line and column of every cell; \\| escapes; fences ignored."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reins.declare.tables import escape, read_tables, split_row, table_under
from reins.errors import DocumentError

DOC = """\
# Gate

Some prose | with a pipe but no table.

## Rules

| id | parameters |
|----|:----------:|
| a  | p = 'x\\|y' |
|b|q = 1|
not a row

```markdown
## Edges
| rule | supersedes |
|------|------------|
| a    | b          |
```

## Edges
rule | supersedes
--- | ---
a | b
"""


def test_cells_carry_their_text_line_and_column() -> None:
    tables = read_tables(DOC, "gate.md")
    rules = table_under(tables, "RULES")
    assert rules is not None and rules.columns == ("id", "parameters")
    (a_id, a_params), (b_id, b_params) = rules.rows
    assert (a_id.text, a_id.line, a_id.column) == ("a", 9, 3)
    assert (a_params.text, a_params.line, a_params.column) == ("p = 'x|y'", 9, 8)
    assert (b_id.text, b_id.column, b_params.text, b_params.column) == ("b", 2, "q = 1", 4)


def test_an_offset_after_an_escape_maps_to_its_written_column() -> None:
    (_, cell) = split_row("| a | x = 'a\\|b', y = 2 |", 1) or ()
    assert cell.text == "x = 'a|b', y = 2"
    line = "| a | x = 'a\\|b', y = 2 |"
    assert line[cell.column_at(cell.text.index("y")) - 1] == "y"
    assert line[cell.column_at(cell.text.index("|")) - 1] == "\\"


def test_tables_in_fences_are_prose_and_pipes_are_optional_at_the_edges() -> None:
    tables = read_tables(DOC, "gate.md")
    assert [t.heading for t in tables] == ["Rules", "Edges"]
    edges = table_under(tables, "edges")
    assert edges is not None and [[c.text for c in r] for r in edges.rows] == [["a", "b"]]
    assert edges.line == 21 and edges.rows[0][1].column == 5


def test_a_separator_of_another_width_is_refused_at_its_line() -> None:
    with pytest.raises(DocumentError) as caught:
        read_tables("## Rules\n| a | b |\n|---|\n| 1 | 2 |\n", "g.md")
    assert (caught.value.line, caught.value.column) == (3, 1)
    assert str(caught.value).startswith("g.md:3:1: ")


def test_a_backslash_not_before_a_pipe_is_kept() -> None:
    (cell,) = split_row("| '\\d+\\\\|' |") or ()
    assert cell.text == "'\\d+\\|'"


cell_text = st.text(
    alphabet=st.characters(
        blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters="\x85"
    ),
    max_size=12,
).map(str.strip)


@given(st.lists(st.lists(cell_text, min_size=3, max_size=3), max_size=5))
def test_a_written_table_reads_back_cell_for_cell(rows: list[list[str]]) -> None:
    header = ["id", "check", "parameters"]
    lines = ["## Rules", "", "| " + " | ".join(header) + " |", "|---|---|---|"]
    for row in rows:
        lines.append("| " + " | ".join(escape(c) for c in row) + " |")
    text = "\n".join(lines) + "\n"
    table = table_under(read_tables(text, "g.md"), "rules")
    assert table is not None
    assert [[c.text for c in r] for r in table.rows] == rows
    for n, cells in enumerate(table.rows):
        written = lines[4 + n]
        for cell in cells:
            if cell.text:
                assert written[cell.column - 1 :].startswith(escape(cell.text))
            assert cell.line == 5 + n
