"""``reins land BRANCH``: every PASS of a coding quest merged onto one integration branch, in
reins' own store, judged by the quest's land rules after each merge.

For each PASS item, in the stated order (:mod:`reins.land.plan`), its change (or the PASS
of the land item standing for it) is brought into reins' land store and merged onto the
integration commit there (:mod:`reins.land.integration`: ``merge-tree``, no work tree);
the merged commit's patch from the base is judged in a judge's tree by the land rules
(:func:`reins.turn.judge.judge_landing`); green, the integration's ref moves onto it, and then
the user's BRANCH, fast-forward only. A conflict or a red land rule moves nothing: the PASS
item stays as it is (only a person moves a locked item), and the change becomes a land item, a
new TODO item that starts from the integration commit and asks an agent to land it
(:mod:`reins.workspace.landtask`).

The journal of what landed is in the ledger (:mod:`reins.land.journal`, agreeing with the
integration's history, where each merge commit names what it landed), so a rerun skips what
landed and goes on; a SIGKILL at any step (the crash points ``land-merged``, ``land-ref``,
``land-branch``, ``land-item`` of :mod:`reins.loop.crashpoint`) loses nothing and lands
nothing twice, and a land item added before a crash makes its item wait for it, so it is never
added twice. One ``reins land`` runs at a time per ledger (its land lease). With ``[workspace]
remote`` the integration and BRANCH are the remote's, and a land killed on one host is
finished on any other.
"""

from __future__ import annotations

from collections.abc import Callable

from reins.errors import ConfigError, JudgeError, WorkspaceError
from reins.gate import Outcome, Verdict
from reins.land.integration import Integration, Landed, Merged, sealed
from reins.land.journal import Journal, LandLease
from reins.land.plan import (
    EMPTY,
    Candidate,
    Change,
    Held,
    candidates,
    change_of,
)
from reins.land.run import CONFLICT, LAND_META, LANDED, RED, LandRun, Step, landed_before
from reins.land.wholesuite import Suite, whole_suite
from reins.loop.branching import settle_branches
from reins.loop.crashpoint import crash_point
from reins.quest import Quest
from reins.store.protocol import Store
from reins.turn.failures import JudgeFailure
from reins.turn.judge import judge_landing
from reins.workspace.git import git
from reins.workspace.judgetree import JudgeTrees
from reins.workspace.landtask import LandTask
from reins.workspace.site import BASE_META, equip, hidden_folder
from reins.workspace.spec import Workspace
from reins.workspace.submission import compose
from reins.workspace.workspaces import Workspaces

Say = Callable[[Step], None]


def land(
    store: Store, quest: Quest, *, root: str, branch: str, order: str = "locked",
    dry_run: bool = False, say: Say | None = None,
) -> LandRun:  # fmt: skip
    """Land every PASS of ``quest``'s ledger ``store`` onto ``branch`` (see the module).

    Raises:
        ConfigError: not a coding quest, nothing ran yet, no PASS, a bad branch name, the
            branch checked out or holding commits reins did not land, another land running.
        JudgeError: a land rule could not judge a merge (nothing of it moved).
        WorkspaceError: git failed, or a change is in no store and has no recorded patch.
    """
    workspace = quest.workspace
    if workspace is None:
        raise ConfigError(
            f"quest {quest.name} is not a coding quest (it has no [workspace]): `reins land` "
            "merges the commits of coding items"
        )
    base = store.meta(BASE_META)
    if base is None:
        raise ConfigError("nothing to land: no item of this ledger has run (`reins loop` first)")
    workspace = settle_branches(store, workspace, quest.name)  # the land items' branches
    check_land_branch(branch, workspace)
    lease = LandLease.take(store)
    try:
        spaces = Workspaces.open(workspace, root=root, base=base)
        lander = Lander(store, quest, spaces, branch, dry_run=dry_run, say=say)
        lander.lease = lease
        return lander.run(order)
    finally:
        lease.release()


def check_land_branch(branch: str, workspace: Workspace) -> None:
    """Refuse a branch ``reins land`` may not land on: a name git refuses, or one under the
    first folder of the items' own branches (``reins/``: every quest's, by default).

    Raises:
        ConfigError: it is such a branch.
    """
    if git(["check-ref-format", f"refs/heads/{branch}"], cwd="/", check=False).returncode:
        raise ConfigError(f"{branch!r} is not a branch name git accepts")
    folder = workspace.branch.split("/", 1)[0] + "/"
    if branch.startswith(folder):
        raise ConfigError(
            f"branch {branch} is under {folder}, where the items' own branches are "
            f"([workspace] branch = {workspace.branch!r}): land on a branch of its own"
        )


class Lander:
    """One run of ``reins land`` onto ``branch``, holding the integration's commit as it goes."""

    def __init__(self, store: Store, quest: Quest, spaces: Workspaces, branch: str, *,
                 dry_run: bool, say: Say | None) -> None:  # fmt: skip
        assert quest.workspace is not None
        self.store, self.quest, self.spaces, self.branch = store, quest, spaces, branch
        self.base, self.repo = spaces.base, spaces.repo
        self.dry_run, self.say = dry_run, say
        remote = quest.workspace.remote
        self.integration = Integration.open(spaces.places, self.base, branch, remote=remote,
                                            quest=quest.name)  # fmt: skip
        self.integration.sync()  # with a remote, where any host left it
        self.journal = Journal(store, branch, self.base)
        self.lease: LandLease | None = None
        hidden = hidden_folder(quest.workspace, spaces)
        self.judges = JudgeTrees(spaces.places, self.base, judge=quest.workspace.judge_globs,
                                 hidden=hidden, sandbox=quest.workspace.sandbox)  # fmt: skip
        equip(self.judges, quest.workspace, spaces)  # the project's environment, as the loop's
        self.tip = self.journal.settle(self.integration)
        self.moved = False

    def run(self, order: str) -> LandRun:
        plan = candidates(self.store, self.branch, order)
        if not plan:
            raise ConfigError("nothing to land: no item of this ledger locked PASS yet")
        was = self._check_branch()
        landed = {entry.key: entry for entry in self.journal.landed}
        steps = []
        try:
            for candidate in plan:
                step = self._step(candidate, landed)
                steps.append(step)
                if self.say is not None:
                    self.say(step)
            suite = self._proven(was)  # the whole suite, before your branch moves
            if suite is None or suite.passed:
                self._advance()
                crash_point("land-branch")
        finally:
            self.judges.settle()
        run = LandRun(self.branch, self.base, self.tip, order, self.dry_run, tuple(steps), was,
                      self.moved, suite)  # fmt: skip
        if not self.dry_run:
            self.store.set_meta(LAND_META, run.said())
        return run

    def _check_branch(self) -> str | None:
        """The user's branch as it is, refused when reins may not move it forward."""
        where = self.repo.checked_out(self.branch)
        if where is not None:
            raise ConfigError(
                f"branch {self.branch} is checked out in {where}: reins never moves a branch "
                "under your files; check out another branch there, or land on another branch"
            )
        here = self.repo.branch_commit(self.branch)
        if here is None or here == self.tip:
            return here
        merged = self.repo.holds(here, self.base)  # into the base since: moving it loses nothing
        if merged or (self.integration.holds(here, self.tip) and self.repo.holds(self.base, here)):
            return here
        raise ConfigError(
            f"branch {self.branch} exists and holds commits reins did not land: its tip "
            f"{here[:12]} is not on the integration reins keeps for it (from the base "
            f"{self.base[:12]}, at {self.tip[:12]}), and reins moves it forward only, over "
            f"its own landings. Land on another branch, or delete this one (`git branch -D "
            f"{self.branch}`) to have reins make it again"
        )

    def _step(self, candidate: Candidate, landed: dict[str, Landed]) -> Step:
        key = candidate.key
        change = change_of(self.store, candidate, self.base)
        if key in landed:
            return landed_before(key, landed[key], change)
        if self.lease is not None:
            self.lease.renew()
        if isinstance(change, Held):
            return Step(key, change.outcome, note=change.note)
        commit = self._bring(change)
        if commit == self.base:
            return Step(key, EMPTY, commit=commit, note=f"{key}: its PASS changes nothing")
        merged = self.integration.merge(self.tip, commit)
        if merged.tree is None:
            return self._conflict(candidate, change, commit, merged)
        merge = self.integration.commit(merged.tree, [self.tip, commit], key=key,
                                        commit=change.commit or commit, item=change.via,
                                        quest=self.quest.name)  # fmt: skip
        crash_point("land-merged")
        verdict = self._judged(candidate, merge)
        if verdict is not None and verdict.outcome is not Outcome.PASS:
            return self._red(candidate, change, commit, verdict)
        if not self.dry_run:
            self.integration.move(self.tip, merge)
            crash_point("land-ref")
            self.journal.append(Landed(key, merge, change.commit or commit, change.via))
        self.tip = merge
        return Step(key, LANDED, commit=commit, merge=merge, via=change.via)

    def _proven(self, was: str | None) -> Suite | None:
        """The project's whole suite on the integration, when it holds what your branch does
        not (None: nothing to prove, or a dry run)."""
        if self.dry_run or self.tip == self.base or self.tip == was:
            return None
        patch = self.integration.diff(self.tip).decode("utf-8")
        assert self.quest.workspace is not None
        return whole_suite(self.judges, patch, self.quest.workspace.test, commit=self.tip)

    def _bring(self, change: Change) -> str:
        """The change's commit, in the land store: fetched from reins' store of its item or
        from the user's repository (its ``reins/<key>`` branch holds it), else made again from
        its recorded patch.

        Raises:
            WorkspaceError: no store holds it and no patch is recorded.
        """
        owner = change.via or change.key
        if change.commit is not None:
            item_store = self.spaces.places.item_store(owner)
            sources = [*([item_store] if sealed(item_store) else []), self.repo.common]
            if self.integration.bring(owner, change.commit, sources):
                return change.commit
        if change.patch is None:
            raise WorkspaceError(
                f"the change of {owner} ({(change.commit or '?')[:12]}) is in no store of reins' "
                "or yours, and no patch of it is recorded"
            )
        return self.integration.rebuild(owner, change.patch, change.parent)

    def _judged(self, candidate: Candidate, merge: str) -> Verdict | None:
        """The land rules' verdict on ``merge`` (None: the quest has none).

        Raises:
            JudgeError: a land rule (or the quest's prepare) failed to judge.
        """
        if not self.quest.land_rules or self.integration.same_tree(merge, self.tip):
            return None  # no rules, or a merge that changes nothing: nothing to judge
        patch = self.integration.diff(merge)
        said = f"reins land: {candidate.key} merged onto {self.branch}"
        files = patch.count(b"\ndiff --git ") + patch.startswith(b"diff --git ")
        text = compose(said, patch, files=files, base=self.base, commit=merge,
                       branch=self.branch).text  # fmt: skip
        before = self.integration.diff(self.tip).decode("utf-8") if self.tip != self.base else ""
        with self.judges.tree(patch.decode("utf-8") or None, branch=self.branch,
                              before=before) as tree:  # fmt: skip
            found = judge_landing(self.quest, candidate.item, text, workspace=tree)
        if isinstance(found, JudgeFailure):
            raise JudgeError(found.where, f"judging {candidate.key} merged onto {self.branch}: "
                                          f"{found.cause} (nothing of it landed)")  # fmt: skip
        return found

    def _conflict(self, candidate: Candidate, change: Change, commit: str, merged: Merged) -> Step:
        task = LandTask(
            candidate.key, candidate.item.payload, self.branch, self.tip, commit, self.base,
            "conflict", candidate.next_number(self.store), merged.files, merged.messages,
            change=self.integration.delta(self.tip, commit),
        )  # fmt: skip
        self._add(task)
        return Step(candidate.key, CONFLICT, commit=commit, via=change.via, added=task.key,
                    files=merged.files)  # fmt: skip

    def _red(self, candidate: Candidate, change: Change, commit: str, verdict: Verdict) -> Step:
        task = LandTask(
            candidate.key, candidate.item.payload, self.branch, self.tip, commit, self.base,
            "red", candidate.next_number(self.store), facts=verdict.facts,
            change=self.integration.delta(self.tip, commit),
        )  # fmt: skip
        self._add(task)
        return Step(candidate.key, RED, commit=commit, via=change.via, added=task.key,
                    facts=verdict.facts)  # fmt: skip

    def _add(self, task: LandTask) -> None:
        """Add the land item (a present key is left as it is, as by every add)."""
        if self.dry_run:
            return
        self.store.add([(task.key, task.to_payload())])
        crash_point("land-item")

    def _advance(self) -> None:
        """The user's branch onto the integration's commit (fast-forward only)."""
        if self.dry_run or self.tip == self.base:
            return
        was = self.repo.branch_commit(self.branch)
        if was == self.tip:
            return
        if self.integration.remote is not None:  # the remote's branch, pinned to what it was
            self.integration.publish(self.tip, self.branch, was=was)
        else:
            self.repo.advance(self.integration.store, self.tip, self.branch)
        self.moved = True
        self.repo.repack()
