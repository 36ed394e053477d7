"""Markdown pipe tables, read with the exact line and column of every cell.

The one table reader of reins: ``gate.md``'s rules, edges and grounds tables, and (through
:func:`split_row`) turn.md's record tables. A table is a header row, a separator row
(``|---|:-:|``) and body rows, up to a blank line, a heading or a line without a pipe. Leading
and trailing pipes are optional. ``\\|`` is a pipe inside a cell; every other backslash is kept
as written (regexes stay readable). Tables and headings inside fenced code blocks are prose.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from reins.errors import DocumentError

_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SEPARATOR_CELL = re.compile(r":?-+:?")


@dataclass(frozen=True, slots=True)
class Cell:
    """One cell: its text (stripped, ``\\|`` unescaped) and where that text starts (1-based).

    ``escapes`` are the offsets in ``text`` of pipes written ``\\|``: they map an offset in the
    text back to the column it was written at (:meth:`column_at`).
    """

    text: str
    line: int
    column: int
    escapes: tuple[int, ...] = ()

    def column_at(self, offset: int) -> int:
        """The source column of character ``offset`` of :attr:`text`."""
        return self.column + offset + sum(1 for e in self.escapes if e < offset)


@dataclass(frozen=True, slots=True)
class Table:
    """A table: the heading it sits under, its header cells and its body rows."""

    heading: str
    header: tuple[Cell, ...]
    rows: tuple[tuple[Cell, ...], ...]

    @property
    def line(self) -> int:
        """The line of the header row."""
        return self.header[0].line

    @property
    def columns(self) -> tuple[str, ...]:
        """The column names, lower case."""
        return tuple(c.text.lower() for c in self.header)


def split_row(line: str, lineno: int = 0) -> tuple[Cell, ...] | None:
    """The cells of one table row, or None when ``line`` has no unescaped pipe."""
    cells: list[Cell] = []
    text: list[str] = []
    escapes: list[int] = []
    start = 0  # the column (0-based) where the current cell's raw text starts
    piped = False
    i = 0
    n = len(line)

    def close() -> None:
        raw = "".join(text)
        lead = len(raw) - len(raw.lstrip())  # whitespace only: no escape is ever stripped
        stripped = raw.strip()
        cells.append(Cell(stripped, lineno, start + lead + 1, tuple(e - lead for e in escapes)))

    while i < n:
        ch = line[i]
        if ch == "\\" and i + 1 < n and line[i + 1] == "|":
            escapes.append(len(text))
            text.append("|")
            i += 2
            continue
        if ch == "|":
            piped = True
            close()
            text, escapes = [], []
            start = i + 1
            i += 1
            continue
        text.append(ch)
        i += 1
    if not piped:
        return None
    close()
    # An optional leading pipe leaves an empty first cell, an optional trailing one an empty last.
    if line.lstrip().startswith("|"):
        cells.pop(0)
    if cells and not cells[-1].text and _ends_with_pipe(line):
        cells.pop()
    return tuple(cells)


def _ends_with_pipe(line: str) -> bool:
    body = line.rstrip()
    return body.endswith("|") and not body.endswith("\\|")


def escape(text: str) -> str:
    """``text`` as a cell: each pipe written ``\\|``."""
    return text.replace("|", "\\|")


def heading(line: str) -> tuple[int, str] | None:
    """The level and text of an ATX heading line (``## Rules``), or None."""
    m = _HEADING.match(line)
    if m is None:
        return None
    return len(m.group(1)), (m.group(2) or "").strip()


def read_tables(text: str, path: str) -> list[Table]:
    """Every table of a Markdown document, in order, each with the heading above it.

    Raises:
        DocumentError: a separator row whose number of cells differs from its header's.
    """
    lines = text.splitlines()
    tables: list[Table] = []
    current = ""
    fence = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _FENCE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = ""
            i += 1
            continue
        if m:
            fence = m.group(1)
            i += 1
            continue
        found = heading(line)
        if found is not None:
            current = found[1]
            i += 1
            continue
        header = split_row(line, i + 1)
        separator = split_row(lines[i + 1], i + 2) if header and i + 1 < len(lines) else None
        if header is None or separator is None or not _is_separator(separator):
            i += 1
            continue
        if len(separator) != len(header):
            raise DocumentError(
                path,
                i + 2,
                1,
                f"the table's separator row has {len(separator)} cells, its header {len(header)}",
            )
        rows: list[tuple[Cell, ...]] = []
        i += 2
        while i < len(lines) and lines[i].strip() and heading(lines[i]) is None:
            if _FENCE.match(lines[i]):
                break
            row = split_row(lines[i], i + 1)
            if row is None:
                break
            rows.append(row)
            i += 1
        tables.append(Table(current, header, tuple(rows)))
    return tables


def table_under(tables: Sequence[Table], name: str) -> Table | None:
    """The first table under a heading named ``name`` (case-insensitive), or None."""
    want = name.casefold()
    return next((t for t in tables if t.heading.casefold() == want), None)


def columns(
    table: Table, path: str, what: str, known: Sequence[str], required: Sequence[str]
) -> dict[str, int]:
    """Column name → its index in ``table``'s rows.

    Raises:
        DocumentError: a column not in ``known``, a column twice, or one of ``required``
            missing, at its header cell (at the table for a missing one).
    """
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


def row_of(table: Table, path: str, row: tuple[Cell, ...]) -> tuple[Cell, ...]:
    """``row``, which must have a cell for every column of ``table``'s header.

    Raises:
        DocumentError: a row with more or fewer cells, at its last cell that has a column.
    """
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


def _is_separator(cells: Sequence[Cell]) -> bool:
    return bool(cells) and all(_SEPARATOR_CELL.fullmatch(c.text) for c in cells)
