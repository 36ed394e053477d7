"""The real agent CLIs for the tests, and a scripted model that works the coding pack.

The CLIs are pinned in the repository's package.json (Claude Code 2.1.197, Codex 0.171.0) and
installed by ``npm ci`` into ``node_modules/`` (``make test`` does it when Node is there). A
test that needs one calls :func:`need`: without it, the test is skipped, saying how to install
it, unless ``CI`` is set (CI installs Node and runs ``npm ci``: there, a missing CLI fails).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.kit.modelserver import Ask, Call, Reply, Tokens

ROOT = Path(__file__).resolve().parent.parent.parent
PACKAGES = {"claude": "@anthropic-ai/claude-code", "codex": "@openai/codex", "aider": "aider-chat"}

# The right body of each function of the coding pack (textkit/__init__.py).
RIGHT = {
    "slugify": "return re.sub(r'[^a-z0-9]+', '-', text.lower()).strip('-')",
    "reverse_words": "return ' '.join(reversed(words(text)))",
    "is_palindrome": "s = [c.lower() for c in text if c.isalnum()]\n    return s == s[::-1]",
    "count_vowels": "return sum(c in 'aeiouAEIOU' for c in text)",
    "initials": "return ''.join(w[0].upper() + '.' for w in name.split())",
}
WRONG = "return None  # a first guess"
TOKENS = Tokens(input=1000, output=50, cache_read=200, cache_write=100)


def need(name: str) -> str:
    """The path of the CLI ``name`` (claude, codex in the repository's node_modules; aider in
    its own virtual environment, ``.venv-aider``)."""
    if name == "aider":
        path = ROOT / ".venv-aider" / "bin" / "aider"
        how = "run `make aider` (pip install aider-chat==0.86.2 into .venv-aider, ~1 minute)"
    else:
        path = ROOT / "node_modules" / ".bin" / name
        how = (
            "run `npm ci` in the repository (needs Node and npm; `make test` does it when they "
            "are there)"
        )
    if path.exists() and os.access(path, os.X_OK):
        return str(path)
    why = f"{PACKAGES[name]} is not installed at {path}: {how}"
    if os.environ.get("CI"):
        pytest.fail(why)
    pytest.skip(why)


def task(ask: Ask) -> tuple[str, bool]:
    """The function the prompt asks for, and whether the gate's facts on its test are in."""
    found = re.search(r"Implement textkit\.(\w+)", ask.user)
    assert found, f"no task in the prompt: {ask.user[:300]!r}"
    name = found.group(1)
    facts = f"test tests/test_textkit_tasks.py::test_{name}" in ask.user and "failed:" in ask.user
    return name, facts


def edited(source: str, name: str, body: str) -> tuple[str, str]:
    """(the function ``name`` as it stands in ``source``, the same with ``body``)."""
    function = re.compile("(def " + name + r"\(.*?\"\"\"\n)(.*?)(\n*)(?=\ndef |\Z)", re.S)
    match = function.search(source)
    assert match, f"no function {name} in textkit"
    return match.group(0), match.group(1) + "    " + body + match.group(3)


def pack_model(ask: Ask) -> Reply:
    """Works an item of the coding pack: wrongly at first, rightly once the facts are in.

    To Claude Code: Read the file, Edit the function, then say what it did. To Codex: one
    shell command (``exec_command``) that rewrites the function, then say what it did. To
    aider: what it did, and a SEARCH/REPLACE block of the function.
    """
    name, facts = task(ask)
    body = RIGHT[name] if facts else WRONG
    said = Reply(text=("Fixed" if facts else "Wrote") + f" textkit.{name}.", tokens=TOKENS)
    if ask.api == "chat":  # aider: a SEARCH/REPLACE block on the file it was given
        old, new = edited(ask.user, name, body)
        block = f"textkit/__init__.py\n```python\n<<<<<<< SEARCH\n{old}\n=======\n{new}\n"
        return Reply(text=f"{said.text}\n\n{block}>>>>>>> REPLACE\n```\n", tokens=TOKENS)
    assert ask.cwd is not None, "the CLI named no working folder"
    path = os.path.join(ask.cwd, "textkit", "__init__.py")
    tags = [r.tag for r in ask.results]
    if ask.api == "anthropic":
        if not tags:
            return Reply(calls=(Call("Read", {"file_path": path}, "read"),), tokens=TOKENS)
        if tags[-1] == "read":
            old, new = edited(Path(path).read_text(), name, body)
            edit = {"file_path": path, "old_string": old, "new_string": new}
            return Reply(calls=(Call("Edit", edit, "edit"),), tokens=TOKENS)
        return said
    if not tags:
        old, new = edited(Path(path).read_text(), name, body)
        program = (
            "import pathlib, sys; p = pathlib.Path('textkit/__init__.py'); "
            "p.write_text(p.read_text().replace(sys.argv[1], sys.argv[2], 1))"
        )
        command = " ".join(_quote(a) for a in ("python3", "-c", program, old, new))
        return Reply(calls=(Call("exec_command", {"cmd": command}, "edit"),), tokens=TOKENS)
    return said


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def survivors(marker_prefix: str) -> list[int]:
    """Processes whose environment carries reins' run marker starting with ``marker_prefix``."""
    wanted = f"REINS_AGENT_RUN={marker_prefix}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            env = Path(f"/proc/{entry}/environ").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state not in ("Z", "X") and any(e.startswith(wanted) for e in env.split(b"\0")):
            found.append(int(entry))
    return found


def running(word: str) -> list[int]:
    """Live processes whose command line holds ``word``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if word.encode() in cmdline and state not in ("Z", "X"):
            found.append(int(entry))
    return found
