"""pytest's own report of a run, as the ``pytest`` check reads it: how it is made and read.

The judge does not run ``python -m pytest``: that would put the tree first on ``sys.path``
before pytest is imported, so a ``pytest/`` or ``pluggy/`` folder in the change would stand in
for them, and it would read a ``sitecustomize.py`` of the tree at start-up. It runs
:data:`BOOT` with ``python -P`` (nothing of the tree on the path while Python starts) and
``--check-hash-based-pycs always`` (a compiled file that claims to match its source is checked
against it): BOOT reads the run's nonce from a pipe and closes it, imports pytest and its
plugins, then puts the tree on the path and runs pytest with a small plugin of reins' that
records what pytest reports (every test's outcome in each phase and the file it was collected
from, every collection error, every deselected test, the exit status) and writes it as JSON,
with the nonce, to a second pipe when the session ends. The report is no file: nothing the
judged code writes on disk can stand in for it. A run that ends before the session does (a test
that calls ``os._exit(0)``) writes none, and no report is never a pass.

What the code under test runs in the same process can still rewrite pytest or the report: see
docs/agents.md, "What is not defended".
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field

BOOT = r"""
import json, os, sys
import pytest  # first: nothing in the tree can stand in for pytest or its plugins

CUT = 1500
SAID = 300


def said(report):
    if isinstance(report.longrepr, tuple) and len(report.longrepr) == 3:
        return str(report.longrepr[2]).removeprefix("Skipped: ")[:CUT]  # (path, line, reason)
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None and crash.message:
        text = crash.message
        if text.startswith(("assert ", "AssertionError")):
            return text[:CUT]  # the test's own assertion, and what it compared
        return text.split("\n", 1)[0][:SAID]  # an exception the code chose: its first line
    lines = [ln for ln in str(report.longrepr or "").splitlines() if ln.startswith("E ")]
    return ("\n".join(lines[:20]) or str(report.longrepr or ""))[:CUT]


def project(tree):
    # the names the tree's own modules and packages import as (at its top and in src/)
    names = set()
    for top in (tree, os.path.join(tree, "src")):
        try:
            entries = os.listdir(top)
        except OSError:
            continue
        for entry in entries:
            if entry.endswith(".py") and entry not in ("conftest.py", "setup.py", "noxfile.py"):
                names.add(entry[:-3])
            elif os.path.isfile(os.path.join(top, entry, "__init__.py")):
                names.add(entry)
    return names - {"tests", "test", "testing"}


def outside(tree, before):
    # the tree's modules that were imported from elsewhere (an installed copy of the project);
    # not Python's own nor pytest's (imported before the tree was on the path: a module of the
    # tree named like one is a fact of its own, reins:shadow)
    names = project(tree) - set(sys.stdlib_module_names) - before
    inside, found = os.path.realpath(tree) + os.sep, []
    for name, module in list(sys.modules.items()):
        where = getattr(module, "__file__", None)
        if name.split(".")[0] in names and where and not os.path.realpath(where).startswith(inside):
            found.append([name, where])
    return sorted(found)[:20]


def recorder(nonce, out, tree, before):
    # the plugin that writes the report: the nonce and the pipe are its own, in no module name

    class Recorder:
        def __init__(self):
            self.tests, self.errors, self.deselected, self.files = {}, [], [], {}

        def pytest_itemcollected(self, item):
            code = getattr(getattr(item, "function", None), "__code__", None)
            self.files[item.nodeid] = [str(item.path), getattr(code, "co_filename", "")]

        def pytest_collectreport(self, report):
            if report.failed:
                self.errors.append({"where": report.nodeid, "message": said(report)})

        def pytest_deselected(self, items):
            self.deselected.extend(item.nodeid for item in items)

        def pytest_runtest_logreport(self, report):
            seen = self.tests.setdefault(report.nodeid, {"phases": {}})
            xfail = getattr(report, "wasxfail", None) is not None
            text = said(report) if report.outcome != "passed" else ""
            seen["phases"][report.when] = [report.outcome, xfail, text]

        def pytest_sessionfinish(self, session, exitstatus):
            data = {"nonce": nonce, "exitstatus": int(exitstatus), "tests": self.tests,
                    "errors": self.errors, "deselected": self.deselected, "files": self.files,
                    "outside": outside(tree, before)}
            json.dump(data, out)
            out.close()

    return Recorder()


nonce_fd, report_fd, tree = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
del sys.argv[1:4]
os.set_inheritable(report_fd, False)  # no process a test starts holds the report's pipe
with os.fdopen(nonce_fd, "rb") as f:
    plugin = recorder(f.read(64).decode("ascii"), os.fdopen(report_fd, "w", encoding="utf-8"),
                      tree, {name.split(".")[0] for name in sys.modules})
del nonce_fd, report_fd, f
sys.path.insert(0, tree)
if os.path.isdir(os.path.join(tree, "src")):  # a src layout: its code is the tree's
    sys.path.insert(0, os.path.join(tree, "src"))
sys.exit(int(pytest.main(sys.argv[1:], plugins=[plugin])))
"""


@dataclass(frozen=True, slots=True)
class Result:
    """One test's outcome, its phases combined: ``passed`` only when set-up, call and
    tear-down all passed and it was not marked to fail; else ``failed``, ``error`` (set-up or
    tear-down), ``skipped``, ``xfailed`` or ``xpassed``, with what pytest said."""

    outcome: str
    message: str = ""


@dataclass(frozen=True, slots=True)
class Report:
    """What a run reported: each test's result by node id, the collection errors (where,
    message), the deselected tests, pytest's exit status, and for each collected test the file
    pytest collected it from and the file its function's code is in (by absolute path)."""

    exitstatus: int
    tests: dict[str, Result]
    errors: tuple[tuple[str, str], ...]
    deselected: frozenset[str]
    files: dict[str, tuple[str, str]] = field(default_factory=dict)
    outside: tuple[tuple[str, str], ...] = ()
    """the tree's own modules the run imported from outside the tree: (name, file)"""

    def passed(self) -> set[str]:
        return {name for name, result in self.tests.items() if result.outcome == "passed"}


def read(raw: bytes, nonce: str) -> Report | None:
    """The report in ``raw`` (what the run wrote to its pipe); None when there is none, or it is
    not one (cut off, forged, without the run's ``nonce``)."""
    try:
        data = json.loads(raw)
        if data["nonce"] != nonce:
            return None
        tests = {str(name): _combined(seen["phases"]) for name, seen in data["tests"].items()}
        errors = tuple((str(e["where"]), str(e["message"])) for e in data["errors"])
        files = {str(n): (str(f[0]), str(f[1])) for n, f in data["files"].items()}
        outside = tuple((str(o[0]), str(o[1])) for o in data.get("outside", ()))
        return Report(int(data["exitstatus"]), tests, errors,
                      frozenset(map(str, data["deselected"])), files, outside)  # fmt: skip
    except (ValueError, KeyError, TypeError, AttributeError, IndexError):
        return None


def _combined(phases: dict[str, list[object]]) -> Result:
    setup = phases.get("setup", ["passed", False, ""])
    call = phases.get("call")
    teardown = phases.get("teardown", ["passed", False, ""])
    if setup[0] == "failed":
        return Result("error", f"error in set-up: {setup[2]}")
    if setup[0] == "skipped":
        return Result("xfailed" if setup[1] else "skipped", str(setup[2]))
    if call is None:
        return Result("error", "it never ran (no call phase was reported)")
    outcome, xfail, message = str(call[0]), bool(call[1]), str(call[2])
    if outcome == "skipped":
        return Result("xfailed" if xfail else "skipped", message)
    if outcome == "failed":
        return Result("failed", message)
    if xfail:
        return Result("xpassed", "it is marked to fail (xfail), and passed")
    if teardown[0] == "failed":
        return Result("error", f"error in tear-down: {teardown[2]}")
    return Result("passed")


def unsaid(report: Report) -> Report:
    """The hidden tests' report as a fact may quote it: each test's outcome, and no text (what
    the code chose to raise could quote the hidden tests)."""
    tests = {name: Result(r.outcome) for name, r in report.tests.items()}
    errors = tuple((where, "a hidden test file did not collect") for where, _ in report.errors)
    return dataclasses.replace(report, tests=tests, errors=errors)


def joined(visible: Report, hidden: Report) -> Report:
    """One report of the visible run and the hidden tests' own."""
    return Report(visible.exitstatus, {**visible.tests, **hidden.tests},
                  visible.errors + hidden.errors, visible.deselected | hidden.deselected,
                  {**visible.files, **hidden.files}, visible.outside + hidden.outside)  # fmt: skip
