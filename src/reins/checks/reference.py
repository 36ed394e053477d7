"""The parameter tables of ``docs/checks.md``, generated from the checks' own specs.

``python -m reins.checks.reference docs/checks.md`` rewrites every table between
``<!-- params:NAME -->`` and ``<!-- /params -->``; a test checks the page is up to date.
"""

from __future__ import annotations

import re
import sys

from reins.checks import STANDARD, spec_of
from reins.checks.spec import REQUIRED, CheckSpec

_BLOCK = re.compile(r"(<!-- params:(\w+) -->\n).*?(<!-- /params -->)", re.DOTALL)


def table(spec: CheckSpec) -> str:
    """The Markdown table of ``spec``'s parameters: name, type, default, meaning."""
    rows = ["| parameter | type | default | meaning |", "|---|---|---|---|"]
    for p in spec.params:
        default = "required" if p.default is REQUIRED else _toml(p.default)
        meaning = p.help.replace("|", "\\|")
        rows.append(f"| `{p.name}` | {p.type} | {default} | {meaning} |")
    return "\n".join(rows) + "\n"


def _toml(value: object) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, str):
        return f'`"{value}"`'
    return f"`{value!r}`"


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
