"""``[items] from``: a coding quest's items found in its repository, read into a source of
:mod:`reins.sources`.

```toml
[items]
from = "pytest"                 # one item per test failing at the base
args = ["tests"]                # pytest's arguments (default: its own configuration)

[items]
from = "command"                # one item per file a program's JSON findings name
command = ["ruff", "check", "--output-format", "json", "."]
group = "filename"              # the field grouping the records (dotted: location.file)
where = { severity = "error" }  # only the records whose fields equal these

[items]
from = "files"                  # one item per tracked file matching the globs
include = ["tests/**/test_*.py"]
exclude = ["tests/data/**"]
```
"""

from __future__ import annotations

from typing import Any

from reins.declare.items import Doc
from reins.errors import ConfigError
from reins.quest import RepositoryItems

KINDS: dict[str, tuple[str, ...]] = {
    "pytest": ("args", "group", "timeout"),
    "command": ("command", "group", "where", "ok_codes", "timeout"),
    "files": ("include", "exclude"),
}
KEYS = ("from", *sorted({k for keys in KINDS.values() for k in keys}))
"""The keys of ``[items]`` this module reads."""


def read_found(doc: Doc, data: dict[str, Any]) -> RepositoryItems | None:
    """The source ``[items] from`` names (None: the items are not found in a repository).

    Raises:
        DocumentError: an unknown kind, a key of another kind, a value of the wrong type.
    """
    kind = doc.get("items", "from", str, "")
    if not kind:
        return None
    if kind not in KINDS:
        raise doc.error(
            "items", "from", f'from must be "pytest", "command" or "files", not {kind!r}'
        )
    for key in KEYS[1:]:
        if key in data and key not in KINDS[kind]:
            raise doc.error("items", key, f"{key} is not read by from = {kind!r}")
    try:
        return _source(doc, kind)
    except ConfigError as exc:
        raise doc.error("items", "from", str(exc)) from None


def _source(doc: Doc, kind: str) -> RepositoryItems:
    timeout = float(doc.get("items", "timeout", (int, float), 900.0))
    if timeout <= 0:
        raise ConfigError("timeout must be a number of seconds above 0")
    if kind == "pytest":
        from reins.sources.failing import GROUPS, FailingTests

        group = doc.get("items", "group", str, "function")
        if group not in GROUPS:
            raise ConfigError(f"group must be one of {', '.join(GROUPS)}, not {group!r:.40}")
        return FailingTests(_strings(doc, "args"), timeout, group=group)
    if kind == "command":
        from reins.sources.findings import Findings

        codes = doc.get("items", "ok_codes", list, [0, 1])
        if not all(isinstance(c, int) and not isinstance(c, bool) for c in codes):
            raise ConfigError("ok_codes must be an array of exit codes, such as [0, 1]")
        where = doc.get("items", "where", dict, {})
        return Findings(_strings(doc, "command"), doc.get("items", "group", str, "path"),
                        where, tuple(codes), timeout)  # fmt: skip
    from reins.sources.matching import MatchingFiles

    return MatchingFiles(_strings(doc, "include"), _strings(doc, "exclude"))


def _strings(doc: Doc, key: str) -> tuple[str, ...]:
    values = doc.get("items", key, list, [])
    if not all(isinstance(v, str) for v in values):
        raise ConfigError(f"{key} must be an array of strings")
    return tuple(values)
