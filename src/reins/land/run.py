"""What a ``reins land`` run says: each change's step (landed, conflict, red, …) and the run's
summary, read by the CLI's lines and ``--json`` and by ``reins status``."""

from __future__ import annotations

from dataclasses import dataclass

from reins.land.integration import Landed
from reins.land.plan import EMPTY, STUCK, WAITING, Change, Held
from reins.land.wholesuite import Suite
from reins.values import Fact

LANDED, BEFORE, CONFLICT, RED = "landed", "landed-before", "conflict", "red"
OUTCOMES = (LANDED, BEFORE, CONFLICT, RED, WAITING, STUCK, EMPTY)
SETTLED = (LANDED, BEFORE, EMPTY)
"""The outcomes of a change that needs nothing more."""
LAND_META = "land.last"
"""The ledger's meta key for what the last ``reins land`` left, in words (``reins status``)."""


@dataclass(frozen=True, slots=True)
class Step:
    """What became of one PASS item's change: ``outcome`` (one of the names above), the
    change's ``commit``, the ``merge`` commit it landed as, the land item it came ``via``, the
    land item ``added`` for it, the ``files`` that conflicted, the land rules' ``facts``, and a
    ``note`` for the person."""

    key: str
    outcome: str
    commit: str | None = None
    merge: str | None = None
    via: str | None = None
    added: str | None = None
    files: tuple[str, ...] = ()
    facts: tuple[Fact, ...] = ()
    note: str = ""

    def line(self, dry_run: bool = False) -> str:
        """The step as ``reins land`` prints it."""
        added = f"{'would add' if dry_run else 'added'} item {self.added}"
        if self.outcome == LANDED:
            through = f" (through {self.via})" if self.via else ""
            return f"{'would land' if dry_run else 'landed'} {self.key}{through}"
        if self.outcome == CONFLICT:
            return f"conflict in {', '.join(self.files) or 'the merge'}: {added}"
        if self.outcome == RED:
            rules = ", ".join(dict.fromkeys(f.rule for f in self.facts)) or "a land rule"
            return f"red: {rules} failed on {self.key}: {added}"
        if self.outcome == BEFORE:
            return f"landed before: {self.key}"
        return f"{self.outcome}: {self.note}"


@dataclass(frozen=True, slots=True)
class LandRun:
    """One ``reins land``: the ``branch``, the ``base``, the integration's commit at the end
    (``tip``), the order and whether it was a dry run, a step per PASS item, the user's
    branch before (``was``; None: there was none) and whether it moved."""

    branch: str
    base: str
    tip: str
    order: str
    dry_run: bool
    steps: tuple[Step, ...]
    was: str | None
    moved: bool
    suite: Suite | None = None
    """the project's whole suite on the integration's commit (None: not run, nothing new)"""

    @property
    def settled(self) -> bool:
        """Whether every PASS is landed (now or before) and the whole suite passes on them:
        nothing is left to do."""
        return all(s.outcome in SETTLED for s in self.steps) and self.proven

    @property
    def proven(self) -> bool:
        """Whether the whole suite did not fail (it passed, found nothing, or had no need)."""
        return self.suite is None or self.suite.passed

    def said(self) -> str:
        """The run in a line: the branch, its commit, what landed and what did not."""
        landed = sum(s.outcome in (LANDED, BEFORE) for s in self.steps)
        left = [s.added or s.key for s in self.steps if s.outcome not in SETTLED]
        shown = ", ".join(left[:5]) + (f" and {len(left) - 5} more" if len(left) > 5 else "")
        rest = f"; not landed: {shown}" if left else ""
        if not self.proven:
            return (f"{self.branch} not moved: the whole suite fails on the integration at "
                    f"{self.tip[:12]}{rest}")  # fmt: skip
        return f"{self.branch} at {self.tip[:12]}: {landed} landed{rest}"


def landed_before(key: str, landed: Landed, change: Change | Held) -> Step:
    """An item that landed before: nothing to do, unless its PASS is another change now (a
    person reopened it since, and it passed again), which reins does not land over the old."""
    now = change.commit if isinstance(change, Change) else None
    if now is None or now == landed.commit:
        return Step(key, BEFORE, commit=landed.commit, merge=landed.merge, via=landed.item)
    return Step(key, STUCK, commit=now, note=(
        f"{key} landed as {landed.commit[:12]} (merge {landed.merge[:12]}), and its PASS is "
        f"{now[:12]} now (it was reopened since): reins lands an item's change once, so land "
        "the new one by hand, or land onto a new branch"
    ))  # fmt: skip
