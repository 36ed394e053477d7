"""The items of a declarative quest: a JSONL or CSV file, a glob of text files, or a function.

``quest.toml``'s ``[items] source`` says where they come from, relative to the quest folder.
``reins scan ARGS`` reads ARGS instead (relative to the working directory), each by its kind.
Items are read at scan, never at load: a ``submit`` reads none. A bad line is refused with its
file, line and column.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from reins.errors import ConfigError, DocumentError
from reins.quest import Seed
from reins.values import JSON


class Doc(Protocol):
    """What the items table is read from: quest.toml's values, and errors at their lines.
    :class:`reins.declare.questdoc.Doc` is one (which imports this module, not the reverse)."""

    def get(self, table: str, key: str, kind: type | tuple[type, ...], default: Any) -> Any: ...

    def error(self, table: str, key: str, message: str) -> DocumentError: ...


_FUNCTION = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")
_GLOB = re.compile(r"[*?\[]")


@dataclass(frozen=True, slots=True)
class ItemSource:
    """Where the items come from, the key field, and the field rules read as the source text.

    Args:
        source: as written in quest.toml.
        folder: the quest folder, which ``source`` is relative to.
        function: the imported ``module:function``, when ``source`` is one.
    """

    source: str
    folder: Path
    key: str
    source_field: str
    function: Callable[..., Any] | None = None

    @classmethod
    def from_doc(cls, doc: Doc, folder: Path) -> ItemSource:
        source = doc.get("items", "source", str, "")
        if not source and not doc.get("items", "from", str, ""):
            raise doc.error(
                "items",
                "source",
                '[items] needs source = "items.jsonl" (or a glob, a .csv, or module:function), '
                'or from = "pytest", "command" or "files" (items found in the repository)',
            )
        key = doc.get("items", "key", str, "id")
        texts = bool(_GLOB.search(source))
        source_field = doc.get("items", "source_field", str, "text" if texts else "")
        function = None
        if _FUNCTION.fullmatch(source):
            from reins.declare.refs import import_ref

            try:
                function = import_ref(source)
            except ConfigError as exc:
                raise doc.error("items", "source", f"source: {exc}") from None
        elif source and not texts and Path(source).suffix.lower() not in (".jsonl", ".csv"):
            raise doc.error(
                "items",
                "source",
                f"source {source!r}: expected a .jsonl or .csv file, a glob of text files "
                "(texts/*.txt) or module:function",
            )
        return cls(source, folder, key, source_field, function)

    def seed(self, args: Sequence[str]) -> Iterator[Seed]:
        """The items: from ``args`` when given, else from the quest's own source.

        An argument is a path from the current folder; one that is not there but is in the
        quest's folder is read from there, so a pack's own sample (``reins -q ifeval scan
        sample.jsonl``) needs no copy."""
        if self.function is not None:
            for seed in self.function(args):
                yield seed if isinstance(seed, Seed) else Seed(*seed)
            return
        if not args:
            if self.source:  # else the items are found in the repository (``[items] from``)
                yield from self._read(self.source, self.folder)
            return
        for arg in args:
            here = Path.cwd()
            beside = self.folder / arg
            found = (here / arg).exists() or _GLOB.search(arg) or not beside.exists()
            yield from self._read(arg, here if found else self.folder)

    def _read(self, ref: str, base: Path) -> Iterator[Seed]:
        path = Path(ref) if Path(ref).is_absolute() else base / ref
        if _GLOB.search(ref):
            # the pattern's fixed folders become the base: pathlib globs relative patterns only
            parts = path.parts
            fixed = _first_glob(parts)
            yield from self._texts(Path(*parts[:fixed]), str(Path(*parts[fixed:])))
        elif path.is_dir():
            pattern = Path(self.source).name if _GLOB.search(self.source) else "*.txt"
            yield from self._texts(path, f"**/{pattern}")
        elif path.suffix.lower() == ".jsonl":
            yield from self._jsonl(path)
        elif path.suffix.lower() == ".csv":
            yield from self._csv(path)
        elif path.is_file():
            yield self._text(path, path.stem)
        else:
            raise ConfigError(f"items: {path} does not exist")

    def _texts(self, base: Path, pattern: str) -> Iterator[Seed]:
        # the key is the path below the pattern's fixed folder, without its suffix
        parts = Path(pattern).parts
        root = base.joinpath(*parts[: _first_glob(parts)])
        for file in sorted(base.glob(pattern)):
            if file.is_file():
                yield self._text(file, file.relative_to(root).with_suffix("").as_posix())

    def _text(self, file: Path, key: str) -> Seed:
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise DocumentError(str(file), 0, 0, f"cannot read as UTF-8 text: {exc}") from None
        field = self.source_field or "text"
        return Seed(key, {"file": file.name, field: text})

    def _jsonl(self, path: Path) -> Iterator[Seed]:
        import json

        try:
            handle = path.open("rb")  # decoded line by line, so a bad byte names its line
        except OSError as exc:
            raise DocumentError(str(path), 0, 0, f"cannot read: {exc}") from None
        seen: dict[str, int] = {}
        with handle:
            for n, raw in enumerate(handle, start=1):
                try:
                    line = raw.decode("utf-8")
                    if not line.strip():
                        continue
                    data = json.loads(line.rstrip("\r\n"))
                except json.JSONDecodeError as exc:
                    raise DocumentError(str(path), n, exc.colno, f"not JSON: {exc.msg}") from None
                except UnicodeDecodeError as exc:
                    raise DocumentError(str(path), n, 0, f"not UTF-8: {exc}") from None
                yield _first(seen, self._item(data, str(path), n), str(path), n)

    def _csv(self, path: Path) -> Iterator[Seed]:
        import csv

        try:
            handle = path.open(encoding="utf-8", newline="")
        except OSError as exc:
            raise DocumentError(str(path), 0, 0, f"cannot read: {exc}") from None
        with handle:
            reader = csv.DictReader(handle)
            seen: dict[str, int] = {}
            try:  # the reader decodes as it goes: a bad byte surfaces in any read
                if reader.fieldnames is None or self.key not in reader.fieldnames:
                    found = ", ".join(reader.fieldnames or []) or "none"
                    raise DocumentError(
                        str(path), 1, 0, f"no {self.key!r} column (the key); columns: {found}"
                    )
                for row in reader:
                    line = reader.line_num
                    yield _first(seen, self._item(dict(row), str(path), line), str(path), line)
            except csv.Error as exc:
                raise DocumentError(str(path), reader.line_num, 0, str(exc)) from None
            except UnicodeDecodeError as exc:
                raise DocumentError(str(path), reader.line_num, 0, f"not UTF-8: {exc}") from None

    def _item(self, data: JSON, path: str, line: int) -> Seed:
        if not isinstance(data, dict):
            raise DocumentError(path, line, 1, f"expected an object, got {type(data).__name__}")
        key = data.get(self.key)
        if isinstance(key, bool) or not isinstance(key, str | int) or key == "":
            raise DocumentError(
                path, line, 0, f"expected the key field {self.key!r} (a string or a number)"
            )
        if self.source_field and not isinstance(data.get(self.source_field), str):
            raise DocumentError(
                path, line, 0, f"expected the source field {self.source_field!r} (a string)"
            )
        return Seed(str(key), data)


def _first(seen: dict[str, int], seed: Seed, path: str, line: int) -> Seed:
    """``seed``, the first of its key in its file (``seen``: key → line, kept by the reader).

    Raises:
        DocumentError: the key is a duplicate in the file, at this line (which names the first).
    """
    first = seen.setdefault(seed.key, line)
    if first != line:
        raise DocumentError(
            path,
            line,
            0,
            f"key {seed.key!r} is a duplicate in this file: line {first} has it already (a key "
            "names one item: give each its own, then scan again)",
        )
    return seed


def _first_glob(parts: Sequence[str]) -> int:
    return next(i for i, p in enumerate(parts) if _GLOB.search(p))
