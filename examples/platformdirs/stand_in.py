#!/usr/bin/env python3
"""A stand-in for a coding agent on the platformdirs quests: `reins loop --model cmd:stand_in.py`.

No model. On fix-tests it reads the prompt on stdin, finds the failing test it names, and undoes
the upgrade's changes (make_project.UPGRADE) in the modules that test exercises: what a good
agent does after reading the traceback. On unused it runs ruff's own fix on the module the
prompt names, with the project's interpreter (first on the agent's PATH: the project's
environment), as an agent would. It shows what a run of each quest does end to end.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_project import UPGRADE

API, UNIX, MACOS = "src/platformdirs/api.py", "src/platformdirs/unix.py", "src/platformdirs/macos.py"
EXERCISES = {"test_android": [API], "test_macos": [MACOS, API], "test_unix": [UNIX],
             "test_comp_with_appdirs": [API, UNIX]}  # fmt: skip


def fix_test(prompt: str) -> str:
    named = re.search(r"tests/(test_\w+)\.py::(\w+)", prompt)
    if named is None:
        return "I found no failing test in the prompt, so I changed nothing."
    modules = EXERCISES.get(named.group(1), [])
    undone = []
    for name, released, upgraded in UPGRADE:
        path = Path(name)
        text = path.read_text(encoding="utf-8")
        if name in modules and upgraded in text:
            path.write_text(text.replace(upgraded, released), encoding="utf-8")
            undone.append(name)
    return (f"Undid the upgrade's change in {', '.join(undone) or 'nothing'}; "
            f"{named.group(2)} should pass now.")  # fmt: skip


def fix_finding(prompt: str) -> str:
    named = re.search(r"(src/platformdirs/\w+\.py)", prompt)
    if named is None:
        return "I found no module in the prompt, so I changed nothing."
    ran = subprocess.run(["python", "-m", "ruff", "check", "--isolated", "--select", "F401",
                          "--fix", named.group(1)], capture_output=True, text=True)  # fmt: skip
    return f"Ran ruff's fix on {named.group(1)}: {ran.stdout.strip().splitlines()[-1:]}"


def main() -> None:
    prompt = sys.stdin.read()
    said = fix_finding(prompt) if "ruff" in prompt else fix_test(prompt)
    print(json.dumps({"reins": {"input_tokens": 2000, "output_tokens": 300}}))
    print(said)


if __name__ == "__main__":
    main()
