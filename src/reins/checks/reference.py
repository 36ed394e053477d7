"""The parameter tables of ``docs/checks.md``, generated from the checks' parameters dataclasses.

``python -m reins.checks.reference docs/checks.md`` rewrites every table between
``<!-- params:NAME -->`` and ``<!-- /params -->``; a test checks the page is up to date.
"""

from __future__ import annotations

import re
import sys
from typing import Any

from reins.checks import STANDARD, parameters, spec_of
from reins.checks.paths import Path
from reins.checks.spec import CheckSpec

_BLOCK = re.compile(r"(<!-- params:(\w+) -->\n).*?(<!-- /params -->)", re.DOTALL)


def table(spec: CheckSpec[Any]) -> str:
    """The Markdown table of ``spec``'s parameters: name, type, default, meaning."""
    rows = ["| parameter | type | default | meaning |", "|---|---|---|---|"]
    for p in parameters(spec):
        default = "required" if p.required else "none" if p.default is None else _toml(p.default)
        kind, meaning = p.type.replace("|", "\\|"), p.help.replace("|", "\\|")
        rows.append(f"| `{p.name}` | {kind} | {default} | {meaning} |")
    return "\n".join(rows) + "\n"


def _toml(value: object) -> str:
    return f"`{_value(value)}`"


def _value(value: object) -> str:
    """``value`` as TOML writes it (a default: a scalar, a path, an array or a table)."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str | Path):
        return f'"{value}"'
    if isinstance(value, list | tuple):
        return "[" + ", ".join(map(_value, value)) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_value(v)}" for k, v in value.items()) + "}"
    return repr(value)


def refresh(text: str) -> str:
    """``text`` with every parameter block replaced by the current table."""
    return _BLOCK.sub(lambda m: m.group(1) + table(spec_of(m.group(2))) + m.group(3), text)


def main(argv: list[str]) -> int:
    path = argv[0] if argv else "docs/checks.md"
    with open(path, encoding="utf-8") as f:
        text = f.read()
    new = refresh(text)
    missing = [name for name in STANDARD if f"<!-- params:{name} -->" not in new]
    with open(path, "w", encoding="utf-8") as f:
        f.write(new)
    if missing:
        print(f"no parameter block for: {', '.join(missing)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
