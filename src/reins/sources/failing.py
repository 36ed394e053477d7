"""``from = "pytest"``: one item per test function that fails at the base (``group``).

The suite runs once, in a tree of the base, the way the judge's ``pytest`` check runs it
(``python -P``, plugin autoload off, no network where the host allows, pytest's own report
read, never its output). A test whose outcome is ``failed`` or ``error`` is found, and so is a
file that does not collect (its item names the file, once however many of pytest's collectors
failed on it): exactly what pytest itself reports as FAILED and ERROR. ``group`` says what one
item is: ``function`` (the default: every failing parametrisation of one test function, since
one bug fails them all), ``test`` (each node id) or ``file``. Each item's key is what it
groups (the node id without its ``[…]``, the node id, the file); its payload gives the
template and the rules ``test`` (that same name: the ``pytest`` check runs every test it
names), ``path`` (its file), ``outcome`` and ``message`` (what pytest said of the first, cut
at 1,500 characters, with how many more failed) and ``tests`` (the failing node ids, at most
:data:`LISTED`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from reins.checks.pytestrun import Pytest
from reins.errors import ConfigError, JudgeError
from reins.quest import Seed
from reins.values import JSON
from reins.workspace.site import BaseTree

FAILING = ("failed", "error")
GROUPS = ("function", "test", "file")
LISTED = 50


@dataclass(frozen=True, slots=True)
class FailingTests:
    """The tests that fail at the base; ``args`` are pytest's (which files, ``-m``, ``-k``)."""

    args: Sequence[str] = ()
    timeout: float = 900.0
    kind: str = "pytest"
    group: str = "function"

    def scan(self, tree: BaseTree) -> Iterator[Seed]:
        try:
            check = Pytest((), False, tuple(self.args), self.timeout)
            report = check.run_in(tree.path, python=tree.python, readable=tree.readable,
                                  plugins=tree.plugins)  # fmt: skip
        except JudgeError as exc:
            raise ConfigError(f"items from pytest at the base {tree.commit[:12]}: {exc}") from None
        # One file can fail several collectors (its tests, and with --doctest-modules its
        # doctests): one item, with what the first said.
        errors: dict[str, str] = {}
        for where, message in report.errors:
            errors.setdefault(where, message)
        for where, message in errors.items():
            yield Seed(where, _payload(where, "error", f"collecting it failed: {message}",
                                       [where]))  # fmt: skip
        found: dict[str, list[tuple[str, str, str]]] = {}
        for test, result in sorted(report.tests.items()):
            if result.outcome in FAILING and test not in errors:
                found.setdefault(self._name(test), []).append((test, result.outcome,
                                                               result.message))  # fmt: skip
        for name, tests in found.items():
            if name in errors:
                continue  # its file's item stands for it
            outcome = "error" if any(t[1] == "error" for t in tests) else "failed"
            more = f" (and {len(tests) - 1} more of {name} failing)" if len(tests) > 1 else ""
            yield Seed(name, _payload(name, outcome, tests[0][2] + more, [t[0] for t in tests]))

    def _name(self, test: str) -> str:
        """What ``test`` is grouped under: its function (no ``[…]``), itself, or its file."""
        if self.group == "file":
            return test.split("::", 1)[0]
        if self.group == "function" and test.endswith("]") and "[" in test:
            return test[: test.index("[", test.rindex("::"))]
        return test


def _payload(test: str, outcome: str, message: str, tests: list[str]) -> JSON:
    return {"test": test, "path": test.split("::", 1)[0], "outcome": outcome, "message": message,
            "tests": list[JSON](tests[:LISTED])}  # fmt: skip
