"""``pytest``: the tests a coding item must pass, read from pytest's own report.

The check runs pytest in the judge's tree of a coding item (the base, the recorded patch, the
judge's own files; never the agent's workspace) and reads the report pytest itself writes
(:mod:`reins.checks._pytestreport`), not its exit status or its output. So:

- each test ``tests`` names must have run and passed: one that is missing (no such test, a file
  that does not collect), deselected, skipped, marked to fail, failing or erroring is a FAIL
  fact saying which of these it was (``{key}`` in a name is the item's key; a name without
  ``[…]`` means every parametrisation of it, a file or class every test in it, and of those
  one may skip, or fail as expected, only as it did at the base: a case the project always
  skips is not the item's, code that makes a test skip is a FAIL);
- with ``passing_at_base = true``, every test that passes at the base (one run in a tree of
  the base alone, kept per base for the process) must still pass; in a land rule, every test
  that passes on the integration before the merge (a test an earlier item fixed included);
- with neither, every test that runs must pass (skips and expected failures aside), and at
  least one must run;
- an exit status 0 with no report (a test that exits the process) is a FAIL, never a pass, and
  anything printed counts for nothing.

Rules whose ``args`` and ``timeout`` are the same read one run per judgment. pytest runs with
the project's interpreter where the quest builds or names one (``[workspace] setup``,
``python``: :mod:`reins.workspace.environment`), else reins' own, ``src/`` before the tree on
the path; a run that imported the tree's own modules from outside the tree, or that passes a
test failing at the base with no change at all, is the judge's error: the environment would be
judged, not the change. It runs in
reins' sandbox (:mod:`reins.checks._judged`: the tree and a private ``/tmp`` writable, the
toolchain read-only, nothing else of the host, no network), with plugin autoload off (``-p NAME``
in ``args`` loads one), no cache, no bytecode written and a clean environment. It reads only the
judge's configuration (``-c``: the base's pytest configuration among the judge's files, else
none; ``--rootdir`` and ``--confcutdir`` the tree), and collects the judge's own test files by
path (those of ``[workspace] judge`` that pytest names test files; pytest's own discovery only
when there are none, or ``args`` names paths). A judged test must be collected from the judge's
file its id names, with its function's code in that file: a module that stands in for it under
its id is a FAIL. The quest's hidden tests run apart, in a tree of their own that the visible
run never sees, and their facts carry the test's id and outcome only. The judge's own failures,
never the agent's FAIL: a
judge's Python without pytest, pytest's internal or usage errors (exit 3, 4), a run that wrote
no report at the base, and a collection error for a module the environment lacks (``No module
named 'x'`` for a module the tree does not hold) that the base has too.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass

from reins.checks._common import excerpt, filled
from reins.checks._judged import Judged, channel, run_judged, within
from reins.checks._pytestfacts import STOOD_IN
from reins.checks._pytestfacts import bounded as _bounded
from reins.checks._pytestfacts import fact as _fact
from reins.checks._pytestfacts import holds as _holds
from reins.checks._pytestfacts import missing as _missing
from reins.checks._pytestfacts import names as _names
from reins.checks._pytestfacts import verified as _verified
from reins.checks._pytestreport import BOOT, Report, Result, joined, read, unsaid
from reins.checks._running import Ran
from reins.checks.spec import BuiltCheck, CheckSpec
from reins.errors import JudgeError, ParamValueError, WorkspaceError
from reins.gate.rule import Context
from reins.values import Fact, JudgeTree
from reins.workspace import processes

NAME = "pytest"
_MISSING_MODULE = re.compile(r"No module named '([^'.]+)")


@dataclass(frozen=True, slots=True)
class PytestParams:
    tests: tuple[str, ...] = ()
    """the tests that must run and pass (node ids; {key} is the item's key, {item.test} a field)"""
    passing_at_base: bool = False
    """every test that passes at the base (in a land rule: on the integration before the
    merge) must still pass"""
    args: tuple[str, ...] = ()
    """pytest's arguments: which files to collect, -m, -k, -p PLUGIN (default: all of them)"""
    timeout: float = 300.0
    """seconds before the run is killed (a fact)"""


def _build(params: PytestParams) -> BuiltCheck:
    if params.timeout <= 0:
        raise ParamValueError(NAME, "timeout", "expected a number of seconds above 0")
    if any(not t.strip() for t in params.tests):
        raise ParamValueError(NAME, "tests", "expected node ids such as tests/test_a.py::test_b")
    return Pytest(params.tests, params.passing_at_base, params.args, params.timeout)


@dataclass(frozen=True, slots=True)
class Pytest:
    """The built check."""

    tests: tuple[str, ...]
    passing_at_base: bool
    args: tuple[str, ...]
    timeout: float

    def __call__(self, ctx: Context) -> list[Fact] | None:
        tree = ctx.workspace
        if tree is None:
            raise JudgeError(
                NAME,
                "this rule runs pytest in the judge's tree of a coding item, and this turn has "
                "none: only `reins loop` with a coding agent makes one",
            )
        report = self._report(tree)
        if isinstance(report, Fact):
            return [report]
        facts: list[Fact] = []
        if self.tests:
            facts += self._named(report, [filled(t, ctx, check=NAME) for t in self.tests], tree)
        if self.passing_at_base:
            facts += self._kept(report, self._base(tree))
        if not self.tests and not self.passing_at_base:
            facts += self._all(report)
        self._refuse_environment(tree, report, facts)
        from reins.checks._doctests import doctest_facts

        return within([*facts, *_bounded(doctest_facts(tree, report.tests))], tree.path) or None

    @property
    def shown(self) -> str:
        return excerpt(" ".join(["pytest", *self.args]), 160)

    # -- running ---------------------------------------------------------------------------

    def run_in(
        self, folder: str, *, python: str = "", readable: tuple[str, ...] = (),
        plugins: tuple[str, ...] = (), at: str = "at the base",
    ) -> Report:  # fmt: skip
        """One run in ``folder`` (with the project's ``python``, seeing ``readable``), judged
        as a base is: its report (``reins scan``'s failing tests). pytest finds the tests and
        configuration there itself (the base is the user's, not a generator's); ``at`` says
        where, in its errors ("at the base", "on the integration").

        Raises:
            JudgeError: the run left no report, timed out, or pytest could not run.
        """
        run = Judged(folder, readable=readable, unconfined=True, python=python, plugins=plugins)
        try:
            return self._run(run, (), None, base=at)
        except _Failed as exc:
            raise JudgeError(NAME, f"{exc.fact.where}: {exc.fact.actual}") from None

    def _report(self, tree: JudgeTree) -> Report | Fact:
        """This judgment's run, shared by every rule with the same arguments (its report, or
        the fact of a run that left none): the visible tests in the tree, then the hidden ones
        in a tree of their own, their results carrying no message."""
        key = (NAME, *self.args, f"{self.timeout:g}")
        found = tree.runs.get(key)
        if not isinstance(found, Report | Fact):
            try:
                run = _judged(tree.path, tree)
                found = self._run(run, self._files(tree, tree.tests), tree.config, base="")
                hidden = self._hidden_files(tree)
                if hidden:
                    from reins.workspace.judgetree import JudgeTrees

                    with JudgeTrees.of(tree).built(
                        tree.target, hidden=True, lender=tree.path
                    ) as folder:
                        apart = self._run(_judged(folder, tree), hidden, tree.config, base="")
                    found = joined(found, unsaid(apart))
            except _Failed as exc:
                found = exc.fact
            tree.runs[key] = found
        return found

    def _files(self, tree: JudgeTree, files: tuple[str, ...] | list[str]) -> tuple[str, ...]:
        """What the run collects: ``files``, unless ``args`` names paths of its own."""
        return () if self._names_paths(tree) else tuple(files)

    def _names_paths(self, tree: JudgeTree) -> bool:
        """Whether ``args`` names paths to collect (a file or folder of the tree)."""
        return any(os.path.lexists(os.path.join(tree.path, a.split("::")[0]))
                   for a in self.args if not a.startswith("-"))  # fmt: skip

    def _hidden_files(self, tree: JudgeTree) -> tuple[str, ...]:
        """The hidden tests' files their own run collects (none when ``args`` names paths)."""
        if not tree.hidden or self._names_paths(tree):
            return ()
        from reins.workspace.judgetree import JudgeTrees
        from reins.workspace.treefacts import TEST_FILE

        return tuple(f for f in JudgeTrees.of(tree).hidden_files() if TEST_FILE.search(f))

    def _refuse_environment(self, tree: JudgeTree, report: Report, facts: list[Fact]) -> None:
        """Raise the judge's error when the verdict would be the environment's, not the
        tree's: the tests imported the project from outside the tree; nothing changed, yet a
        named test that failed at the base passes; a fact comes of a collection error for a
        module the tree does not hold, which the base has too (the judge's Python lacks it)."""
        if report.outside:
            name, where = report.outside[0]
            raise JudgeError(NAME, f"the tests imported {name} from {where}, outside the "
                             "judge's tree: the environment holds a copy of the project (an "
                             "editable install?); its setup must install what it depends on, "
                             "not the project itself")  # fmt: skip
        unchanged = not tree.changed and self.tests and not facts
        if unchanged and report.passed() - self._base(tree).passed():
            raise JudgeError(NAME, "nothing changed, yet a test that fails at the base passes "
                             "in the judge's tree: the environment was judged, not the change "
                             "(it differs between runs)")  # fmt: skip
        for where, message in report.errors:
            missing = _MISSING_MODULE.search(message)
            if missing is None or _holds(tree.path, missing.group(1)):
                continue
            if not any(f"collecting {where}" in f.actual or f.where == f"collecting {where}"
                       for f in facts):  # fmt: skip
                continue
            if (where, message) in self._base(tree).errors:
                raise JudgeError(
                    NAME,
                    f"collecting {where} fails at the base too, for a module the judge's "
                    f"Python lacks ({missing.group(1)}): install it there",
                )

    def _base(self, tree: JudgeTree) -> Report:
        """The run in a tree of what the change goes onto: the base, or for a land rule the
        integration before the merge (``tree.before``); kept for the process."""
        before = hashlib.sha256(tree.before.encode()).hexdigest() if tree.before else ""
        key = (tree.root, tree.base, before, tree.hidden or "", *self.args, f"{self.timeout:g}")
        with _BASE_LOCK:
            if key not in _BASE_REPORTS:
                files = self._files(tree, [*tree.tests, *self._hidden_files(tree)])
                try:
                    with _tree_before(tree) as folder:
                        run = _judged(folder, tree)
                        _BASE_REPORTS[key] = self._run(run, files, tree.config,
                                                       base="at the base")  # fmt: skip
                except WorkspaceError as exc:
                    raise JudgeError(NAME, f"cannot make a tree of the base: {exc}") from None
            return _BASE_REPORTS[key]

    def _run(self, run: Judged, files: tuple[str, ...], config: str | None, *, base: str) -> Report:
        """One pytest run in ``run.folder`` collecting ``files`` (pytest's own discovery when
        there are none), configured by the tree's ``config`` alone ("": none; None: pytest
        finds its configuration itself, for a scan of the user's base). ``base`` says where a
        run that is not a judgment's is ("at the base"; "": a judgment's). Each passing test
        not collected from the judge's file its id names is a test that stood in."""
        folder = run.folder
        pinned = [] if config is None else [
            "-c", os.path.join(folder, config) if config else os.devnull,
            f"--rootdir={folder}", f"--confcutdir={folder}"]  # fmt: skip
        env = {"PYTHONDONTWRITEBYTECODE": "1", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
               processes.MARKER: processes.marker(folder, secrets.token_hex(6))}  # fmt: skip
        with channel() as way:
            argv = [run.python or sys.executable, "-P", "--check-hash-based-pycs", "always",
                    "-c", BOOT,
                    str(way.nonce_fd), str(way.report_fd), folder,
                    *pinned, "-p", "no:cacheprovider", *_loading(run.plugins),
                    "--continue-on-collection-errors", "-q", *self.args,
                    *(["--", *files] if files else [])]  # fmt: skip
            ran = run_judged(argv, run, timeout=self.timeout, keep=2000, check=NAME, env=env,
                             pass_fds=(way.nonce_fd, way.report_fd))  # fmt: skip
        report = self._checked(ran, read(bytes(way.received), way.nonce), base=base)
        return _verified(report, folder)

    def _checked(self, ran: Ran, report: Report | None, *, base: str) -> Report:
        """The report, or the fact (raised as a verdict's) or judge's error of a run without."""
        if ran.timed_out:
            raise _Failed(Fact(where=f"{self.shown} {base}".strip(),
                               expected=f"to finish within {self.timeout:g} s",
                               actual="still running, killed"))  # fmt: skip
        if re.search(r"No module named '?pytest'?\s*$", ran.err, re.M):
            raise JudgeError(NAME, "the judge's Python has no pytest: install it there (in "
                             "[workspace] setup, for the project's environment)")  # fmt: skip
        if ran.code in (3, 4):
            raise JudgeError(NAME, f"pytest could not run (exit code {ran.code}): "
                                   f"{ran.first_line()}")  # fmt: skip
        if report is None:
            said = f"no report: pytest ended with exit code {ran.code} before writing it"
            if base:
                raise JudgeError(NAME, f"{base}, {said}: {ran.first_line()}")
            tail = ran.err.strip()[-600:] or ran.out.strip()[-600:]
            raise _Failed(Fact(where=self.shown, expected="pytest's report of the tests it ran",
                               actual=said + (f"\nstderr: {tail}" if tail else "")))  # fmt: skip
        return report

    # -- judging ---------------------------------------------------------------------------

    def _named(self, report: Report, names: list[str], tree: JudgeTree) -> list[Fact]:
        facts = []
        for name in names:
            found = {n: r for n, r in report.tests.items() if _names(name, n)}
            if not found:
                facts.append(_fact(name, _missing(report, name)))
            unpassed = {n: r for n, r in found.items() if r.outcome != "passed"}
            if unpassed and set(found) != {name}:  # a function's parametrisations, a file
                unpassed = self._not_as_at_base(unpassed, tree)
                if not unpassed and not found.keys() & report.passed():
                    none = "none passed (each skipped as at the base)"
                    facts.append(
                        Fact(where=f"test {name}", expected="one of its tests passes", actual=none)
                    )
            facts += [_fact(n, r) for n, r in unpassed.items()]
        return _bounded(facts)

    def _not_as_at_base(self, unpassed: dict[str, Result], tree: JudgeTree) -> dict[str, Result]:
        """Of the tests a name selects among others, those that did not pass, less each that
        skipped (or failed as expected) at the base the same way: a parametrisation the project
        always skips is not the item's to pass, and code that makes a test skip is."""
        quiet = ("skipped", "xfailed")
        if not any(r.outcome in quiet for r in unpassed.values()):
            return unpassed
        base = self._base(tree).tests
        return {n: r for n, r in unpassed.items() if r.outcome not in quiet or base.get(n) != r}

    def _kept(self, report: Report, base: Report) -> list[Fact]:
        facts = []
        for name in sorted(base.passed()):
            result = report.tests.get(name)
            if result is None:
                facts.append(_fact(name, _missing(report, name)))
            elif result.outcome != "passed":
                facts.append(_fact(name, result))
        return _bounded(facts)

    def _all(self, report: Report) -> list[Fact]:
        facts = [
            Fact(where=f"collecting {where}", expected="it collects", actual=message)
            for where, message in report.errors
        ]
        bad = ("failed", "error", "xpassed", STOOD_IN)
        facts += [_fact(n, r) for n, r in report.tests.items() if r.outcome in bad]
        if not report.passed() and not facts:
            facts.append(Fact(where=self.shown, expected="at least one test runs and passes",
                              actual="no test passed (none ran, or all were skipped)"))  # fmt: skip
        return _bounded(facts)


def _judged(folder: str, tree: JudgeTree) -> Judged:
    """A run in ``folder`` for a judgment in ``tree``, with the project's interpreter where it
    has one: unconfined only where its run said so."""
    from reins.workspace.environment import Environment

    env = Environment.of(tree.python, tree.environment, tree.generated)
    readable = env.readable if env is not None else ()
    return Judged(folder, readable=readable, unconfined=tree.sandbox == "none",
                  python=tree.python, plugins=tree.plugins)  # fmt: skip


@contextlib.contextmanager
def _tree_before(tree: JudgeTree) -> Iterator[str]:
    """The folder of a tree of what ``tree``'s change goes onto, with the hidden tests: the
    base, or the base with ``tree.before`` applied (the integration a land merge goes onto).

    Raises:
        WorkspaceError: the tree cannot be made.
    """
    from reins.workspace import hidden_tests
    from reins.workspace.judgetree import JudgeTrees

    trees = JudgeTrees.of(tree)
    if not tree.before:
        with trees.base_tree() as folder:
            yield folder
        return
    with trees.tree(tree.before, branch="") as made:
        if made.facts:  # reins' own integration, refused as a change would be
            raise WorkspaceError(f"the integration before the merge: {made.facts[0].actual}")
        if tree.hidden:
            hidden_tests.place(tree.hidden, made.path)
        yield made.path


def _loading(plugins: tuple[str, ...]) -> list[str]:
    """pytest's arguments that load ``plugins`` (autoload is off)."""
    return [arg for name in plugins for arg in ("-p", name)]


class _Failed(Exception):
    """A run that could not be read: its fact is the rule's."""

    def __init__(self, fact: Fact) -> None:
        super().__init__(fact.actual)
        self.fact = fact


_BASE_REPORTS: dict[tuple[str, ...], Report] = {}
_BASE_LOCK = threading.Lock()

PYTEST = CheckSpec(
    name=NAME,
    summary="the tests a coding item must pass, read from pytest's own report in the judge's tree",
    params=PytestParams,
    build=_build,
)
