"""``from = "pytest"``: one item per test that fails at the base.

The suite runs once, in a tree of the base, the way the judge's ``pytest`` check runs it
(``python -P``, plugin autoload off, no network where the host allows, pytest's own report
read, never its output). A test whose outcome is ``failed`` or ``error`` is an item, and so is a
file that does not collect (its item names the file): exactly what pytest itself reports as
FAILED and ERROR. Each item's key is the test's node id; its payload gives the template and the
rules ``test`` (the node id), ``path`` (its file), ``outcome`` and ``message`` (what pytest said,
cut at 1,500 characters).
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


@dataclass(frozen=True, slots=True)
class FailingTests:
    """The tests that fail at the base; ``args`` are pytest's (which files, ``-m``, ``-k``)."""

    args: Sequence[str] = ()
    timeout: float = 900.0
    kind: str = "pytest"

    def scan(self, tree: BaseTree) -> Iterator[Seed]:
        try:
            report = Pytest((), False, tuple(self.args), self.timeout).run_in(tree.path)
        except JudgeError as exc:
            raise ConfigError(f"items from pytest at the base {tree.commit[:12]}: {exc}") from None
        for where, message in report.errors:
            yield Seed(where, _payload(where, "error", f"collecting it failed: {message}"))
        for test, result in sorted(report.tests.items()):
            if result.outcome in FAILING:
                yield Seed(test, _payload(test, result.outcome, result.message))


def _payload(test: str, outcome: str, message: str) -> JSON:
    return {"test": test, "path": test.split("::", 1)[0], "outcome": outcome, "message": message}
