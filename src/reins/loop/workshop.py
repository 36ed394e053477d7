"""The workspace side of a loop run: a coding agent's turn in the item's own workspace.

On a quest with a ``[workspace]`` the generate step of a turn is: reset the item's workspace
(a repository of its own, see :mod:`reins.workspace.workspaces`) to the commit the turn starts
from; run the agent there (:func:`reins.coders.runner.run_agent`, watched, metered, sandboxed
by default); once its whole process tree has ended, take what it changed
(:mod:`reins.workspace.change`: reins' own index, capped); and hand the gate the patch and the
final message as the submission. The gate then judges in a tree of reins' own built from that
patch (:mod:`reins.workspace.judgetree`, in :mod:`reins.loop.recording`). Where a turn starts is
read from the log, like its prompt (:func:`reins.loop.agentturn.start_of`: a try that ended in
a generation error leaves nothing behind; a first or fresh try starts from the item's origin,
the base or, for a land item (:mod:`reins.workspace.landtask`), the integration commit it lands
its change onto, which its store fetches from the land store with the change itself), so a
restarted run, on any workspace a crash left, starts each item where the ledger says it stands.
A locked item's last commit is fetched into
the user's repository onto its branch (:meth:`Workshop.locked`); where the workspaces go and
the walls of a sandboxed agent are :mod:`reins.loop.places`'s.

Budgets are enforced here by killing the agent, not by asking it: the item's caps count every
turn of its log, the run's caps every turn this run recorded plus what the agents in flight
have spent so far. An agent killed by a cap is a generation error with its usage recorded; the
item over its own cap is set aside (it stays TODO: a cap is the operator's, never the gate's
verdict), and a run over its cap stops.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import shutil
import threading
from collections.abc import Callable, Sequence

from reins.backends.process import Switch
from reins.coders.protocol import Agent, Session, Spent
from reins.coders.runner import AGENT_WATCHDOGS, RunEnd, Wrap, run_agent
from reins.errors import WorkspaceError
from reins.loop.agentturn import AgentTurn, publishing, start_of, usage_of
from reins.loop.branching import settle_branches
from reins.loop.landing import Landing
from reins.loop.options import LoopOptions
from reins.loop.places import confined, default_root, seen_by_agents, unconfined, walls_of
from reins.loop.spend import ITEM, cap_reached, item_spent
from reins.loop.tally import Tally
from reins.quest import Quest
from reins.sandbox import Policy
from reins.sandbox.allow import Allowance
from reins.sandbox.egress import Refusals
from reins.store.model import Attempt, Item, Usage
from reins.store.protocol import Store
from reins.values import Fact, Prompt
from reins.workspace import processes
from reins.workspace.judgetree import JudgeTrees
from reins.workspace.landtask import LandTask
from reins.workspace.site import BASE_META, equip, hidden_folder, settled_base
from reins.workspace.spec import Workspace
from reins.workspace.submission import MESSAGE_CAP, Submission, compose
from reins.workspace.workspaces import Workspaces

SANDBOX_META = "workspace.sandbox"
UNCONFINED = (
    "coding agents run UNCONFINED (--sandbox none): each can read, write and reach all you "
    "can; the judge still runs their code confined and proves its own trees before each "
    "judgment"
)
JUDGE_UNCONFINED = (
    "the judge runs the code under test UNCONFINED too: bubblewrap cannot run here ({})"
)


class Workshop:
    """The workspaces, the agents in flight and their budgets, for one loop run."""

    def __init__(self, quest: Quest, options: LoopOptions, tally: Tally) -> None:
        assert quest.workspace is not None
        sandbox = options.sandbox or quest.workspace.sandbox
        self.workspace: Workspace = dataclasses.replace(quest.workspace, sandbox=sandbox)
        self.quest, self.options, self.tally = quest, options, tally
        self.limits = dataclasses.replace(
            AGENT_WATCHDOGS, idle=options.agent_idle, wall=options.agent_timeout
        )
        self.spaces: Workspaces | None = None
        self.judges: JudgeTrees | None = None
        self.walls = Policy(view="host", network=True)
        self.allowed = Allowance.of(self.workspace.network)
        self.live: dict[Switch, Spent] = {}
        self.landing: Landing | None = None
        self.ahead: list[threading.Thread] = []
        self.run_over: str | None = None  # the run's cap that killed the agents in flight

    # -- the run's start and end (on the ledger thread) -----------------------------------

    def recorded(self) -> Spent:
        """What this run's recorded turns cost."""
        return Spent(self.tally.tokens_in, self.tally.tokens_out, self.tally.cost)

    def gate_threads(self, concurrency: int) -> int:
        """A thread per workspace: an agent's gate runs its tests."""
        return concurrency

    def slots(self, concurrency: int) -> int:
        """Twice as many as agents, so that an item is judged while the next one's agent runs;
        not with unconfined agents, which could rewrite a judge's tree under judgment."""
        return concurrency if self.workspace.sandbox == "none" else 2 * concurrency

    def open(self, store: Store) -> list[str]:
        """Check the sandbox, resolve the base against the ledger's, make the base store, end
        what crashed runs left running, tidy their workspaces. Returns notes for the person.

        Raises:
            ConfigError: the sandbox, the repository, the base or the hidden tests are unusable.
        """
        if self.workspace.sandbox == "bwrap":
            from reins.sandbox import require

            require()
        root = self.workspace.worktrees or default_root(
            self.workspace, self.quest.name, self.options.worktrees
        )
        self.workspace = settle_branches(store, self.workspace, self.quest.name)
        recorded = store.meta(BASE_META)
        spaces = Workspaces.open(self.workspace, root=root, base=recorded or None)
        repo = spaces.repo  # with a remote, this host's copy of it
        settled_base(recorded, repo.commit(self.workspace.base), self.workspace)
        if recorded is None:
            store.set_meta(BASE_META, spaces.base)
        hidden = hidden_folder(self.workspace, spaces)
        store.set_meta(SANDBOX_META, self.workspace.sandbox)
        self.tally.sandbox = self.workspace.sandbox
        self.spaces = spaces
        self.judges = JudgeTrees(spaces.places, spaces.base, judge=self.workspace.judge_globs,
                                 hidden=hidden, sandbox=self.workspace.sandbox)  # fmt: skip
        notes = [f"workspaces in {spaces.root}, from base {spaces.base[:12]}"]
        env = equip(self.judges, self.workspace, spaces, notes.append)  # the project's own
        self.walls = walls_of(spaces, repo, hidden, store.location, env)
        self.path: tuple[str, ...] = (os.path.dirname(env.python),) if env else ()  # on PATH
        ended = processes.end_leftovers(spaces.root + os.sep)
        self.landing = Landing(spaces, self.workspace.keep)
        tidied = self.landing.tidy(store)
        # The first items' folders (one spare: a locked item's comes back after the next item
        # has started), then the judge's trees, made while the first agents run.
        made = spaces.make_ahead(self.options.concurrency + 1)
        self.ahead = [*made, *self.judges.make_ahead(self.options.concurrency, after=made)]
        if self.workspace.sandbox == "bwrap":
            notes.append(seen_by_agents(self.walls, self.allowed))
        if self.workspace.sandbox == "none":
            from reins.sandbox import why_not

            notes.append(UNCONFINED)
            if reason := why_not():
                notes.append(JUDGE_UNCONFINED.format(reason))
        if ended:
            notes.append(f"ended {len(ended)} process(es) a crashed run left running")
        if tidied:
            notes.append(f"tidied {tidied} workspace(s) of items locked since a crashed run")
        return notes

    def locked(self, item: Item, attempt: Attempt | None, say: Callable[[str], None]) -> None:
        """Item ``item`` locked: landed off the turn's path (see :mod:`reins.loop.landing`)."""
        if self.landing is not None:
            self.landing.locked(item, attempt, say)

    def close(self) -> None:
        """Wait for the landings, the folders made ahead and the judge's trees being cleaned,
        still under way (the run's end)."""
        if self.landing is not None:
            self.landing.close()
        for thread in self.ahead:
            thread.join()
        if self.judges is not None:
            self.judges.settle()

    def stop(self, reason: str) -> None:
        """A hard stop: kill every agent in flight (each turn is recorded as an error)."""
        for switch in list(self.live):
            switch.trip(reason)

    # -- one turn --------------------------------------------------------------------------

    async def turn(
        self, item: Item, log: Sequence[Attempt], agent: Agent, prompt: Prompt
    ) -> AgentTurn:
        """Run ``agent`` on ``item`` in its workspace; what it made, or why it failed."""
        spaces = self.spaces
        assert spaces is not None
        branch = spaces.branch_of(item.key)
        task = LandTask.of(item.payload)  # a land item starts from its integration commit
        origin = task.onto if task is not None else spaces.base
        start, patch = start_of(log, self.workspace.retry, spaces.base, origin)
        blank = AgentTurn(None, None, Usage(backend=agent.name), branch=branch,
                          base=spaces.base, sandbox=self.workspace.sandbox)  # fmt: skip
        try:
            start = await asyncio.to_thread(self._prepare, item.key, start, patch, task)
        except (WorkspaceError, OSError) as exc:
            return dataclasses.replace(blank, error=f"workspace: {exc}")
        home = spaces.places.home(item.key)
        shutil.rmtree(home, ignore_errors=True)
        os.makedirs(home)
        outcome, budget, refusals = await self._run(agent, prompt, item.key, home,
                                                    item_spent(log))  # fmt: skip
        shutil.rmtree(home, ignore_errors=True)
        usage = usage_of(agent.name, outcome)
        try:
            made = await asyncio.to_thread(self._take, item, start, prompt.turn, outcome.message,
                                           origin)  # fmt: skip
        except (WorkspaceError, OSError) as exc:
            error = outcome.error or f"workspace: {exc}"
            return dataclasses.replace(blank, error=error, usage=usage, budget=budget,
                                       refusals=refusals)  # fmt: skip
        commit, submission, refused, carried = made
        ran = dataclasses.replace(blank, usage=usage, commit=commit, model=outcome.model,
                                  refusals=refusals)  # fmt: skip
        if self.workspace.remote is not None:  # beside the judgment; the record waits for it
            ran = dataclasses.replace(ran, published=publishing(spaces, item.key, commit))
        if outcome.error is not None:
            return dataclasses.replace(ran, error=outcome.error, budget=budget)
        limit = self.workspace.max_bytes + carried + 4 * MESSAGE_CAP + 4096
        return dataclasses.replace(ran, submission=submission, refused=refused, judges=self.judges,
                                   limit=limit)  # fmt: skip

    def _prepare(self, key: str, start: str, patch: str | None, task: LandTask | None) -> str:
        assert self.spaces is not None
        # What a crashed reins left running on this workspace must not work on it meanwhile.
        processes.kill_tree(None, f"{self.spaces.path_of(key)}#", grace=1.0)
        if task is None:
            started = self.spaces.prepare(key, start, patch=patch)
        else:
            # A land item's store gets its integration commit and change from the land store
            # (the base store, which every agent borrows, holds the base alone).
            self.spaces.borrow(key, (task.onto, task.commit))
            started = self.spaces.prepare(key, start, patch=patch, origin=task.onto)
        env = self.judges.environment if self.judges is not None else None
        if env is not None:  # what the project's build made (a version file), as the judge has it
            env.place(self.spaces.path_of(key))
        return started

    def _take(
        self, item: Item, start: str, turn: int, said: str, origin: str
    ) -> tuple[str | None, Submission, Fact | None, int]:
        """The agent's change, committed in the item's store: the commit, the turn's
        submission, the fact of a change refused for its size, and the bytes of its patch
        carried from ``origin`` (a land item's integration commit)."""
        from reins.workspace.change import take

        spaces = self.spaces
        assert spaces is not None
        # Nothing the agent started may still be writing while the change is read.
        processes.kill_tree(None, f"{spaces.path_of(item.key)}#", grace=1.0)
        message = f"reins: turn {turn} of {item.key}\n\nReins-Quest: {self.quest.name}\n"
        change = take(spaces, item.key, start, message=message, origin=origin)
        refused = change.refused.actual if change.refused is not None else None
        made = compose(said, change.patch, files=change.files, base=spaces.base,
                       commit=change.commit, branch=spaces.branch_of(item.key),
                       refused=refused)  # fmt: skip
        return change.commit, made, change.refused, change.carried

    async def _run(
        self, agent: Agent, prompt: Prompt, key: str, home: str, before: Spent
    ) -> tuple[RunEnd, str | None, Refusals | None]:
        assert self.spaces is not None
        cwd = self.spaces.path_of(key)
        session = Session(prompt=prompt, cwd=cwd, home=home, sandbox=self.workspace.sandbox,
                          seed=prompt.seed, timeout=self.limits.wall)  # fmt: skip
        switch = Switch()
        self.live[switch] = Spent()
        hit: list[str] = []

        def guard(spent: Spent) -> str | None:
            self.live[switch] = spent
            reason, kind = self._over(before + spent)
            if reason is not None and kind is not None:
                hit.append(kind)
                if kind != ITEM:
                    self.run_over = kind
                    self.stop(reason)
            return reason

        wrap: Wrap = unconfined
        egress = None
        if self.workspace.sandbox == "bwrap":  # its only way out: a proxy of its own
            wrap, egress = confined(self.spaces, self.walls, key, home, self.allowed)
        try:
            if egress is not None:
                await egress.start()
            outcome = await run_agent(agent, session, limits=self.limits, guard=guard,
                                      switch=switch, wrap=wrap, path=self.path)  # fmt: skip
        finally:
            del self.live[switch]
            if egress is not None:
                await egress.close()
        budget = hit[0] if hit else (self.run_over if outcome.killed == "stop" else None)
        return outcome, budget, egress.refusals() if egress is not None else None

    def _over(self, item_total: Spent) -> tuple[str | None, str | None]:
        """The cap reached, by the item (``item_total``) or by the run, and which."""
        run = self.recorded()
        for spent in self.live.values():
            run = run + spent
        return cap_reached(self.options.budget, item_total, run)
