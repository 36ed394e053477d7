"""``from = "command"``: one item per value of a field of the JSON records a program prints.

A linter's or a type checker's findings per file: ``ruff check --output-format json`` prints
one JSON array, ``mypy -O json`` one record per line; both are read (an array, or JSON lines).
The command runs once, in a tree of the base, with a clean environment, no network where the
host allows, and ``{python}`` the judge's Python. Records are grouped by ``group`` (a field
name, dotted for a nested one: ``location.file``); ``where`` keeps only the records whose
fields equal its values (``{severity = "error"}``). A group value that is a path in the tree
(absolute, as ruff prints it) is written from the tree's top, so it names the same file in
every workspace. Each item's key is that value; its payload gives ``path`` (the value),
``count`` (its records) and ``records`` (the first :data:`KEPT` of them).

A run that exits with a code outside ``ok_codes`` (default 0 and 1: "no findings" and
"findings"), or prints something that is not JSON records, is refused: an item list read off a
crashed tool would be wrong.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from reins.checks._running import Ran, clean_environment, execute
from reins.errors import ConfigError, JudgeError
from reins.quest import Seed
from reins.sandbox import isolation
from reins.values import JSON
from reins.workspace import scratch
from reins.workspace.site import BaseTree

KEPT = 50
"""Records an item's payload carries (``count`` says how many there were)."""
MAX_OUTPUT = 16 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Findings:
    """The records ``command`` prints, one item per value of ``group``."""

    command: Sequence[str]
    group: str = "path"
    where: Mapping[str, JSON] = field(default_factory=dict)
    ok_codes: Sequence[int] = (0, 1)
    timeout: float = 900.0
    kind: str = "command"

    def __post_init__(self) -> None:
        if not self.command or not all(isinstance(a, str) and a for a in self.command):
            raise ConfigError('items from a command: give command = ["ruff", "check", …]')
        if not self.group or any(not part for part in self.group.split(".")):
            raise ConfigError(f"items from a command: group {self.group!r} is not a field name")

    def scan(self, tree: BaseTree) -> Iterator[Seed]:
        ran = self._run(tree.path)
        shown = " ".join(self.command)
        if ran.timed_out:
            raise ConfigError(f"items from `{shown}`: still running after {self.timeout:g} s")
        if ran.code not in self.ok_codes:
            raise ConfigError(
                f"items from `{shown}`: it exited {ran.code} at the base {tree.commit[:12]} "
                f"(expected {', '.join(map(str, self.ok_codes))}): {ran.first_line()}"
            )
        if len(ran.out) >= MAX_OUTPUT:
            raise ConfigError(f"items from `{shown}`: it printed more than {MAX_OUTPUT} bytes")
        groups: dict[str, list[JSON]] = {}
        for record in _records(ran.out, shown):
            if all(_field(record, k) == v for k, v in self.where.items()):
                value = _field(record, self.group)
                if isinstance(value, bool) or not isinstance(value, str | int) or value == "":
                    raise ConfigError(
                        f"items from `{shown}`: a record has no {self.group!r} to group by: "
                        f"{json.dumps(record)[:200]}"
                    )
                groups.setdefault(_relative(str(value), tree.path), []).append(record)
        for value in sorted(groups):
            records = groups[value]
            yield Seed(value, {"path": value, "count": len(records), "records": records[:KEPT]})

    def _run(self, folder: str) -> Ran:
        words = [sys.executable if a == "{python}" else a for a in self.command]
        found = words[0] if os.path.isabs(words[0]) else shutil.which(words[0])
        if found is None:
            raise ConfigError(f"items from a command: {words[0]!r} was not found on PATH")
        with scratch.folder("scan") as home:
            env = clean_environment(home, PYTHONDONTWRITEBYTECODE="1")
            argv = [*(isolation() or ()), found, *words[1:]]
            try:
                return execute(argv, cwd=folder, env=env, timeout=self.timeout,
                               keep=MAX_OUTPUT, check="scan")  # fmt: skip
            except JudgeError as exc:
                raise ConfigError(f"items from a command: {exc}") from None


def _records(out: str, shown: str) -> Iterator[JSON]:
    text = out.strip()
    if not text:
        return
    if text.startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"items from `{shown}`: its output is not JSON: {exc}") from None
        yield from data
        return
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield json.loads(line)
        except json.JSONDecodeError:
            raise ConfigError(
                f"items from `{shown}`: line {n} of its output is not a JSON record: {line[:200]}"
            ) from None


def _field(record: JSON, name: str) -> JSON:
    value = record
    for part in name.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def _relative(value: str, top: str) -> str:
    if os.path.isabs(value):
        path = os.path.realpath(value)
        if path == top or path.startswith(top + os.sep):
            return os.path.relpath(path, top).replace(os.sep, "/")
    return value.removeprefix("./")
