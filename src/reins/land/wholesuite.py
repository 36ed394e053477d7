"""The project's whole suite on what ``reins land`` integrated: the last word before a branch of
yours moves.

Each merge is judged by the land rules (the item's tests, what passed before); that does not
prove the whole: a test of an item landed earlier can fail on a later merge. So once the
integration holds something your branch does not, the project's own test command
(``[workspace] test``, with the project's interpreter first on ``PATH``) runs in a judge's tree
of it, confined as every judged run is (:mod:`reins.checks._judged`), and your branch moves
only when it passes. pytest finding no test at all (exit 5) is no suite: said, not failed.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from reins.checks._judged import Judged, run_judged
from reins.errors import JudgeError, WorkspaceError
from reins.values import Fact
from reins.workspace.judgetree import JudgeTrees
from reins.workspace.spec import TEST

SUITE_SECONDS = 3600.0
NO_TESTS = 5  # pytest's exit code when it collected nothing
RULE = "reins:suite"


@dataclass(frozen=True, slots=True)
class Suite:
    """How the whole suite went on a commit: ``passed`` (or no suite ran: ``ran`` False), and
    the fact of a failure."""

    passed: bool
    ran: bool = True
    fact: Fact | None = None
    note: str = ""


def whole_suite(judges: JudgeTrees, patch: str, command: str, *, commit: str) -> Suite:
    """Run ``command`` in a judge's tree of the base with ``patch`` (the integration at
    ``commit``, from the base).

    Raises:
        WorkspaceError: the tree cannot be made.
    """
    if not command.strip():
        return Suite(True, ran=False, note="no [workspace] test: the whole suite was not run")
    project = judges.environment
    python = project.python if project is not None else sys.executable
    readable = project.readable if project is not None else ()
    path = os.pathsep.join([os.path.dirname(python), os.environ.get("PATH", os.defpath)])
    with judges.tree(patch or None, branch="") as tree:
        if tree.facts:  # reins' own merge made something a judged tree refuses
            raise WorkspaceError(f"the integration at {commit[:12]}: {tree.facts[0].actual}")
        if command == TEST:  # pytest's own report, not its exit code (the code could forge it)
            return _reported(tree.path, python, readable, commit, judges.plugins)
        run = Judged(tree.path, readable=readable, unconfined=judges.sandbox == "none",
                     python=python)  # fmt: skip
        env = {"PATH": path, "PYTHONDONTWRITEBYTECODE": "1"}
        ran = run_judged(["/bin/sh", "-c", command], run, timeout=SUITE_SECONDS, keep=4000,
                         check=RULE, env=env)  # fmt: skip
    if ran.code == 0 and not ran.timed_out:
        return Suite(True)
    if ran.code == NO_TESTS and "pytest" in command:
        return Suite(True, ran=False, note=f"`{command}` found no test: no whole suite ran")
    said = "timed out" if ran.timed_out else f"exit code {ran.code}"
    tail = "\n".join((ran.out.strip() or ran.err.strip()).splitlines()[-15:])
    return Suite(False, fact=Fact(
        where=f"the integration at {commit[:12]}", rule=RULE,
        expected=f"`{command}` passes (the project's whole suite)",
        actual=f"{said}: {ran.first_line()}" + (f"\n{tail}" if tail else ""),
    ))  # fmt: skip


def _reported(
    folder: str, python: str, readable: tuple[str, ...], commit: str, plugins: tuple[str, ...]
) -> Suite:
    """The default suite (pytest, finding the tests and configuration itself) read from
    pytest's own report, as the judge reads it: a run that ends without one (code that calls
    ``os._exit(0)`` where no judge's rule runs it) fails, whatever its exit code."""
    from reins.checks.pytestrun import Pytest

    where = f"the integration at {commit[:12]}"
    expected = f"`{TEST}` passes (the project's whole suite)"
    try:
        report = Pytest((), False, (), SUITE_SECONDS).run_in(
            folder, python=python, readable=readable, plugins=plugins, at="on the integration"
        )
    except JudgeError as exc:
        return Suite(False, fact=Fact(where=where, rule=RULE, expected=expected, actual=exc.cause))
    bad = [f"collecting {w}: {m}" for w, m in report.errors]
    bad += [f"{name}: {r.outcome} {(r.message.splitlines() or [''])[0]}".strip()
            for name, r in report.tests.items() if r.outcome in ("failed", "error")]  # fmt: skip
    if bad:
        shown = "\n".join(bad[:15]) + (f"\n… and {len(bad) - 15} more" if len(bad) > 15 else "")
        return Suite(False, fact=Fact(where=where, rule=RULE, expected=expected,
                                      actual=f"{len(bad)} failed:\n{shown}"))  # fmt: skip
    if not report.tests:
        return Suite(True, ran=False, note=f"`{TEST}` found no test: no whole suite ran")
    return Suite(True)
