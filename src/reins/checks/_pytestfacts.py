"""What a pytest report says, as the ``pytest`` check's facts: which tests a name selects,
why a named test did not run, a passing test whose code came from elsewhere (a test that
stood in), and how many facts are shown."""

from __future__ import annotations

import dataclasses
import os

from reins.checks._pytestreport import Report, Result
from reins.values import Fact

STOOD_IN = "stood in"
"""The outcome of a test that passed with code not from the judge's file its id names."""
SHOWN = 10
"""Tests named by a fact of their own; more are counted in one fact."""


def verified(report: Report, root: str) -> Report:
    """``report`` with each passing test that was not collected from the judge's file its id
    names under ``root`` (or whose function's code is in another file of the tree) marked as a
    test that stood in: a module of the change answering for the judge's test."""
    tests = dict(report.tests)
    for name, result in report.tests.items():
        if result.outcome != "passed":
            continue
        file = name.split("::", 1)[0]
        want = os.path.normpath(os.path.join(root, file))
        path, code = report.files.get(name, ("", ""))
        code = os.path.normpath(code) if code else ""
        inside = code.startswith(root.rstrip(os.sep) + os.sep)
        if os.path.normpath(path) != want or (inside and code != want):
            other = os.path.relpath(code if code and code != want else path or root, root)
            tests[name] = Result(STOOD_IN, f"its code came from {other}, not the judge's {file}")
    return dataclasses.replace(report, tests=tests)


def holds(folder: str, module: str) -> bool:
    """Whether the tree holds a top-level module or package ``module`` (at its top or in
    ``src/``)."""
    return any(
        os.path.exists(os.path.join(folder, *where, module + suffix))
        for where in ((), ("src",))
        for suffix in ("", ".py")
    )


def names(name: str, nodeid: str) -> bool:
    """Whether the test named ``name`` covers ``nodeid`` (itself, a parametrisation of it, or
    a test in the file or class it names)."""
    return nodeid == name or nodeid.startswith((name + "[", name + "::"))


def missing(report: Report, name: str) -> Result:
    if any(names(name, d) for d in report.deselected):
        return Result("deselected", "it was deselected (-k, -m or --deselect)")
    file = name.split("::", 1)[0]
    for where, message in report.errors:
        if where == file or where.startswith(file + "::"):
            return Result("not run", f"collecting {where} failed: {message}")
    return Result("not run", "no such test was collected")


def fact(name: str, result: Result) -> Fact:
    actual = result.outcome + (f": {result.message}" if result.message else "")
    return Fact(where=f"test {name}", expected="passes", actual=actual)


def bounded(facts: list[Fact]) -> list[Fact]:
    if len(facts) <= SHOWN:
        return facts
    more = len(facts) - SHOWN
    last = Fact(where="tests", expected="pass", actual=f"{more} more tests did not pass")
    return [*facts[:SHOWN], last]
