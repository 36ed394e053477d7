"""The workspace side of a loop run: a coding agent's turn in the item's own worktree.

On a quest with a ``[workspace]`` the generate step of a turn is: make (or reset) the item's
worktree, on its branch, at the commit the turn starts from; run the agent there
(:func:`reins.coders.runner.run_agent`, watched and metered); commit what it changed on the
branch; and hand the gate the diff and the final message as the submission, and the worktree
as its context. Where a turn starts is read from the log, like its prompt: under ``continue``
the commit of the last judged try (a try that ended in a generation error leaves nothing
behind), under ``fresh`` and on the first try the base. So a restarted run, on any worktree a
crash left, starts each item where the ledger says it stands.

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
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from reins.coders.protocol import Agent, Session, Spent
from reins.coders.runner import Limits, Outcome, Switch, run_agent
from reins.errors import ConfigError, WorkspaceError
from reins.loop.options import LoopOptions
from reins.loop.spend import item_over, item_spent
from reins.loop.tally import Tally
from reins.quest import Quest
from reins.store.model import Attempt, Item, State, Usage
from reins.store.protocol import Store
from reins.values import Prompt, Worktree
from reins.workspace.names import slug
from reins.workspace.spec import Workspace
from reins.workspace.trees import OWN, Repository, Worktrees

BASE_META = "workspace.base"
RUN_TOKENS, RUN_COST, ITEM = "run-tokens", "run-cost", "item"


@dataclass(frozen=True, slots=True)
class AgentTurn:
    """What an agent's turn made: the submission (None when it failed), or the error."""

    submission: str | None
    error: str | None
    usage: Usage
    tree: Worktree | None
    commit: str | None = None
    model: str | None = None
    budget: str | None = None  # which cap killed it: run-tokens, run-cost or item


def default_root(workspace: Workspace, quest: str, preferred: str | None) -> str:
    """Where the worktrees go: ``preferred`` (the CLI's: beside the ledger) unless it lies in the
    repository's checkout, else ``.reins-worktrees/<quest>`` beside the repository."""
    from pathlib import Path

    found = Repository.find(workspace.repo)
    repo = Path(found.top or found.common).resolve()
    if preferred is not None and not Path(preferred).resolve().is_relative_to(repo):
        return str(Path(preferred).resolve())
    return str(repo.parent / ".reins-worktrees" / quest)


def start_of(log: Sequence[Attempt], retry: str, base: str) -> str:
    """The commit the next turn starts from: the last judged try's, or the base."""
    if retry == "continue":
        for attempt in reversed(log):
            if attempt.judged:
                if attempt.notes.commit and attempt.notes.base == base:
                    return attempt.notes.commit
                break
    return base


class Workshop:
    """The worktrees, the agents in flight and their budgets, for one loop run."""

    def __init__(
        self,
        quest: Quest,
        options: LoopOptions,
        agents: Sequence[object | None],
        tally: Tally,
    ) -> None:
        assert quest.workspace is not None
        for agent in agents:
            if agent is not None and not hasattr(agent, "launch"):
                raise ConfigError(
                    f"quest {quest.name} has a [workspace]: it needs a coding agent (cmd:, "
                    f"claude-code:, codex:, aider:), and {getattr(agent, 'name', agent)!r} is a "
                    "text backend (see `reins backends`)"
                )
        sandbox = options.sandbox or quest.workspace.sandbox
        self.workspace: Workspace = dataclasses.replace(quest.workspace, sandbox=sandbox)
        self.quest, self.options, self.tally = quest, options, tally
        self.limits = Limits(idle=options.agent_idle, wall=options.agent_timeout)
        self.trees: Worktrees | None = None
        self.live: dict[Switch, Spent] = {}
        self.run_over: str | None = None  # the run's cap that killed the agents in flight

    # -- the run's start and end (on the ledger thread) -----------------------------------

    def recorded(self) -> Spent:
        """What this run's recorded turns cost."""
        return Spent(self.tally.tokens_in, self.tally.tokens_out, self.tally.cost)

    def open(self, store: Store) -> list[str]:
        """Resolve the base, check it against the ledger's, tidy a crashed run's worktrees.

        Returns notes for the person watching.

        Raises:
            ConfigError: the repository or base is unusable, or the base moved.
        """
        if self.workspace.sandbox == "bwrap":
            from reins.coders.sandbox import bwrap

            bwrap()
        root = self.workspace.worktrees or default_root(
            self.workspace, self.quest.name, self.options.worktrees
        )
        trees = Worktrees.open(self.workspace, root=root)
        recorded = store.meta(BASE_META)
        if recorded is None:
            store.set_meta(BASE_META, trees.base)
        elif recorded != trees.base:
            raise ConfigError(
                f"the workspace base moved: this ledger's items start from {recorded[:12]}, and "
                f"{self.workspace.base!r} now names {trees.base[:12]}. Every item and every "
                f'restart must start from one base: set [workspace] base = "{recorded}" to go '
                "on, or start a new ledger for the new base"
            )
        self.trees = trees
        tidied = self._tidy(store)
        notes = [f"worktrees in {trees.root}, from base {trees.base[:12]}"]
        if tidied:
            notes.append(f"removed {tidied} worktree(s) of items locked since a crashed run")
        return notes

    def _tidy(self, store: Store) -> int:
        """Apply the keep policy to worktrees whose items locked while no run could."""
        from reins.errors import NotFound

        assert self.trees is not None
        removed = 0
        for key in self.trees.ours().values():
            try:
                item = store.get(key)
            except NotFound:
                continue
            if item.state.terminal and self._removes(item.state):
                self.trees.remove(key)
                removed += 1
        return removed

    def _removes(self, state: State) -> bool:
        keep = self.workspace.keep
        return keep == "none" or (keep == "failed" and state is State.PASS)

    def locked(self, item: Item) -> None:
        """Item ``item`` locked: remove its worktree if the keep policy says so."""
        if self.trees is not None and self._removes(item.state):
            self.trees.remove(item.key)

    def stop(self, reason: str) -> None:
        """A hard stop: kill every agent in flight (each turn is recorded as an error)."""
        for switch in list(self.live):
            switch.trip(reason)

    # -- one turn --------------------------------------------------------------------------

    async def turn(
        self, item: Item, log: Sequence[Attempt], agent: Agent, prompt: Prompt
    ) -> AgentTurn:
        """Run ``agent`` on ``item`` in its worktree; what it made, or why it failed."""
        trees = self.trees
        assert trees is not None
        start = start_of(log, self.workspace.retry, trees.base)
        try:
            tree = await asyncio.to_thread(self._prepare, trees, item.key, start)
        except WorkspaceError as exc:
            return AgentTurn(None, f"workspace: {exc}", Usage(backend=agent.name), None)
        home = os.path.join(trees.root, OWN, "home", slug(item.key))
        shutil.rmtree(home, ignore_errors=True)
        os.makedirs(home)
        outcome, budget = await self._run(agent, prompt, tree, home, item_spent(log))
        shutil.rmtree(home, ignore_errors=True)
        usage = Usage(
            backend=agent.name,
            input_tokens=outcome.usage.input_tokens,
            output_tokens=outcome.usage.output_tokens,
            cost=outcome.usage.cost,
            latency=outcome.latency,
            cache_read_tokens=outcome.usage.cache_read_tokens or None,
            cache_write_tokens=outcome.usage.cache_write_tokens or None,
        )
        try:
            snap = await asyncio.to_thread(
                self._snapshot, trees, tree, item, prompt.turn, outcome.message
            )
        except WorkspaceError as exc:
            return AgentTurn(
                None, outcome.error or f"workspace: {exc}", usage, tree, None, None, budget
            )
        if outcome.error is not None:
            return AgentTurn(None, outcome.error, usage, tree, snap[0], outcome.model, budget)
        return AgentTurn(snap[1], None, usage, tree, snap[0], outcome.model)

    def _prepare(self, trees: Worktrees, key: str, start: str) -> Worktree:
        from reins.coders.tree import kill_tree

        # What a crashed reins left running on this worktree must not work on it meanwhile.
        kill_tree(None, f"{trees.path_of(key)}#", grace=1.0)
        return trees.prepare(key, start)

    def _snapshot(
        self, trees: Worktrees, tree: Worktree, item: Item, turn: int, said: str
    ) -> tuple[str, str]:
        """Commit the worktree on its branch: the commit, and the turn's submission."""
        from reins.workspace.snapshot import snapshot
        from reins.workspace.submission import compose

        message = f"reins: turn {turn} of {item.key}\n\nReins-Quest: {self.quest.name}\n"
        snap = snapshot(trees, tree, message=message)
        text = compose(
            said,
            snap.diff,
            files=snap.files,
            base=tree.base,
            commit=snap.commit,
            branch=tree.branch,
        )
        return snap.commit, text

    async def _run(
        self, agent: Agent, prompt: Prompt, tree: Worktree, home: str, before: Spent
    ) -> tuple[Outcome, str | None]:
        session = Session(
            prompt=prompt,
            cwd=tree.path,
            home=home,
            sandbox=self.workspace.sandbox,
            seed=prompt.seed,
            timeout=self.limits.wall,
        )
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

        try:
            outcome = await run_agent(
                agent,
                session,
                limits=self.limits,
                guard=guard,
                switch=switch,
                wrap=self._wrap(tree, home),
            )
        finally:
            del self.live[switch]
        budget = hit[0] if hit else (self.run_over if outcome.killed == "stop" else None)
        return outcome, budget

    def _over(self, item_total: Spent) -> tuple[str | None, str | None]:
        """The cap reached, by the item (``item_total``) or by the run, and which."""
        budget = self.options.budget
        said = item_over(budget, item_total)
        if said is not None:
            return said, ITEM
        run = self.recorded()
        for spent in self.live.values():
            run = run + spent
        if budget.max_tokens is not None and run.tokens >= budget.max_tokens:
            return f"the run's budget of {budget.max_tokens} tokens is spent", RUN_TOKENS
        if budget.max_cost is not None and (run.cost or 0.0) >= budget.max_cost:
            return f"the run's budget of a cost of {budget.max_cost:g} is spent", RUN_COST
        return None, None

    def _wrap(self, tree: Worktree, home: str) -> Callable[[Sequence[str]], list[str]] | None:
        if self.workspace.sandbox != "bwrap":
            return None
        from reins.coders.sandbox import confine

        trees = self.trees
        assert trees is not None
        writable = [trees.admin(tree.path), os.path.join(trees.repo.common, "objects")]
        readable = [trees.repo.common, *([trees.repo.top] if trees.repo.top else [])]

        def wrap(argv: Sequence[str]) -> list[str]:
            return confine(argv, cwd=tree.path, home=home, writable=writable, readable=readable)

        return wrap
