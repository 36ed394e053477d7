"""What the ``command`` check knows of pytest: its exit codes, and the tests its output names.

pytest's exit codes: 0 all passed, 1 some failed, 2 interrupted (a collection error among
others), 3 an internal error, 4 a usage error (a bad option, a path that does not exist), 5 no
tests collected. 3 and 4 say the tool broke, not the code under test; 2 and 5 may be either (a
syntax error the change brought, or a plugin the environment lacks), which only a run at the
base revision can tell apart.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Sequence

from reins.values import Fact

BROKEN = (3, 4)
"""pytest's exit codes that mean the tool itself broke."""
COLLECTION = (2, 5)
"""pytest's exit codes that are the change's fault only if the base revision collects."""
SHOWN = 10
"""Failing tests named by their own fact; more are counted in the command's fact."""
_SUMMARY = re.compile(r"^(FAILED|ERROR) (\S+)(?: - (.*))?$", re.M)


def is_pytest(argv: Sequence[str]) -> bool:
    """Whether the command runs pytest (``pytest …``, ``py.test …`` or ``X -m pytest …``)."""
    if not argv:
        return False
    if os.path.basename(argv[0]) in ("pytest", "py.test"):
        return True
    return any(a == "-m" and b == "pytest" for a, b in itertools.pairwise(argv))


def failing(output: str) -> list[tuple[str, str, str]]:
    """The tests pytest's short summary names: (FAILED or ERROR, test id, reason)."""
    seen: dict[str, tuple[str, str, str]] = {}
    for status, test, reason in _SUMMARY.findall(output):
        seen.setdefault(test, (status, test, reason.strip()))
    return list(seen.values())


def test_facts(output: str) -> tuple[list[Fact], int]:
    """A fact for each failing test (at most :data:`SHOWN`), and how many failed in all."""
    named = failing(output)
    facts = [
        Fact(
            where=f"test {test}",
            expected="passes",
            actual=("failed" if status == "FAILED" else "error")
            + (f": {reason}" if reason else ""),
        )
        for status, test, reason in named[:SHOWN]
    ]
    return facts, len(named)
