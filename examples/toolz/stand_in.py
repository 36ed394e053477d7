#!/usr/bin/env python3
"""A stand-in for a coding agent on the toolz-fix-tests quest: `reins loop --model cmd:stand_in.py`.

No model: it reads the prompt on stdin, finds the failing test it names, and undoes the
upgrade's changes (make_project.UPGRADE) in the module that test covers (every module, for a
test of the whole namespace). So it does what a good agent would, without the cost, and shows
what a run of the quest does end to end. For the itertoolz items it also adds a line to
AUTHORS.md, at the same place each time: two such changes conflict when they are landed
together, which is how `reins land` turns a conflict into an item of its own (a landing item's
prompt names the conflicting files; the stand-in then keeps both lines).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_project import UPGRADE

COVERS = {"test_itertoolz": "toolz/itertoolz.py", "test_dicttoolz": "toolz/dicttoolz.py",
          "test_recipes": "toolz/recipes.py", "test_functoolz": "toolz/functoolz.py"}  # fmt: skip


def main() -> None:
    prompt = sys.stdin.read()
    named = re.search(r"toolz/tests/(test_\w+)\.py::(\w+)", prompt)
    if named is None:
        print("I found no failing test in the prompt, so I changed nothing.")
        return
    module = COVERS.get(named.group(1))  # None: a test of the whole namespace
    undone = []
    for name, released, upgraded in UPGRADE:
        path = Path(name)
        text = path.read_text(encoding="utf-8")
        if (module is None or name == module) and upgraded in text:
            path.write_text(text.replace(upgraded, released), encoding="utf-8")
            undone.append(name)
    if module == "toolz/itertoolz.py":
        authors = Path("AUTHORS.md")
        lines = authors.read_text(encoding="utf-8").splitlines()
        mine = f"- reins fixed {named.group(2)}"
        kept = [ln for ln in lines if ln.startswith("- reins fixed")]
        if mine not in kept:  # a landing item's tree holds the other line already: keep both
            authors.write_text("\n".join([*lines, mine]) + "\n", encoding="utf-8")
    print(json.dumps({"reins": {"input_tokens": 2000, "output_tokens": 300}}))
    print(
        f"Undid the upgrade's change in {', '.join(sorted(set(undone))) or 'nothing'}; "
        f"{named.group(2)} should pass now."
    )


if __name__ == "__main__":
    main()
