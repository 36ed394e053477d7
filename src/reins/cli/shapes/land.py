"""The ``--json`` of ``reins land``: the run, and a step per PASS item."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from reins.cli.shapes import Plain
from reins.values import Fact

if TYPE_CHECKING:
    from reins.land.run import LandRun, Step


@dataclass(frozen=True, slots=True)
class LandStep(Plain):
    """What became of one PASS item's change: ``outcome`` is ``landed``, ``landed-before``,
    ``conflict``, ``red``, ``waiting``, ``stuck`` or ``empty``; ``commit`` the change merged,
    ``merge`` the merge commit it landed as, ``via`` the land item it came through, ``added``
    the land item added for it (or, in a dry run, that would be), ``files`` the files that
    conflicted, ``facts`` the land rules' facts, ``note`` what the person must know."""

    key: str
    outcome: str
    commit: str | None
    merge: str | None
    via: str | None
    added: str | None
    files: tuple[str, ...]
    facts: tuple[Fact, ...]
    note: str

    @classmethod
    def of(cls, step: Step) -> LandStep:
        return cls(step.key, step.outcome, step.commit, step.merge, step.via, step.added,
                   step.files, step.facts, step.note)  # fmt: skip


@dataclass(frozen=True, slots=True)
class SuiteRun(Plain):
    """The project's whole suite on the integration: ``passed``; ``ran`` False when none ran
    (pytest found no test, or the quest has no test command), with the ``note`` saying why;
    ``fact`` where and how it failed."""

    passed: bool
    ran: bool
    fact: Fact | None
    note: str


@dataclass(frozen=True, slots=True)
class Landing(Plain):
    """``reins land``'s document: the branch, the base, the integration's commit at the end
    (``tip``), the order, a dry run or not, whether every PASS is landed (``settled``), the
    user's branch before (``was``) and whether it moved, the steps counted by outcome, each
    step, and the whole suite run before the branch moved (``suite``; None: no run was due)."""

    branch: str
    base: str
    tip: str
    order: str
    dry_run: bool
    settled: bool
    was: str | None
    moved: bool
    counts: dict[str, int]
    steps: tuple[LandStep, ...]
    suite: SuiteRun | None

    @classmethod
    def of(cls, run: LandRun) -> Landing:
        counts: dict[str, int] = {}
        for step in run.steps:
            counts[step.outcome] = counts.get(step.outcome, 0) + 1
        suite = run.suite
        ran = None if suite is None else SuiteRun(suite.passed, suite.ran, suite.fact, suite.note)
        return cls(run.branch, run.base, run.tip, run.order, run.dry_run, run.settled, run.was,
                   run.moved, counts, tuple(LandStep.of(s) for s in run.steps), ran)  # fmt: skip
