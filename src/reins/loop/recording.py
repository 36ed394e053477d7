"""Judging and recording the loop's turns: where the gate runs, and what each attempt records.

A quick gate judges on the ledger thread, in the same hop as the record; once a judgment takes
longer than :data:`QUICK_JUDGE`, the gate moves to its own threads so that slow checks
(fetches) neither stall the ledger nor each other. Every record is one transaction on the
ledger thread, claimed for the lease the slot holds.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from reins.errors import WorkspaceError
from reins.gate import Outcome, Verdict
from reins.loop.generate import GenerationError, usage_of
from reins.loop.ledger_thread import LedgerThread
from reins.quest import Quest
from reins.store.model import Item
from reins.store.protocol import Store
from reins.turn.drivers import DRIVERS
from reins.turn.failures import GenerationFailure, JudgeFailure, Result
from reins.turn.judge import judge
from reins.turn.record import Origin, Recorded, record, storable
from reins.values import Completion, Prompt

if TYPE_CHECKING:
    from reins.loop.agentturn import AgentTurn
    from reins.workspace.submission import Submission

DRIVER = DRIVERS["loop"]
JUDGE_TREE = "reins:judge-tree"
# A gate slower than this (seconds) is judged on its own threads, not the ledger thread.
QUICK_JUDGE = 0.005


class Recorder:
    """Judges and records one run's turns as ``driver``, with ``policy`` composing them."""

    def __init__(
        self, store: Store, quest: Quest, db: LedgerThread, *, driver: str, policy: str
    ) -> None:
        self.store, self.quest, self.db = store, quest, db
        self.driver, self.policy = driver, policy
        self._judges: ThreadPoolExecutor | None = None
        self._quick_gate = True

    def start(self, workers: int) -> None:
        """Open the gate's own threads (used once the gate proves slow)."""
        self._judges = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="reins-judge")

    def close(self) -> None:
        if self._judges is not None:
            self._judges.shutdown(wait=True)

    def origin(
        self,
        prompt: Prompt,
        generator: str,
        result: Completion | GenerationError,
        started_at: str,
        cause: str | None,
    ) -> Origin:
        """How this turn was made: policy, prompt, usage, seed, escalation and model."""
        model = None
        if isinstance(result, Completion) and result.model and result.model != generator:
            model = result.model
        return Origin(
            policy=self.policy,
            prompt_digest=prompt.digest(),
            usage=usage_of(generator, result),
            started_at=started_at,
            notes=DRIVER.notes(
                seed=prompt.seed, temperature=prompt.temperature, escalated_by=cause, model=model
            ),
            gate_digest=self.quest.gate_digest,
        )

    async def turn(
        self,
        owner: str,
        item: Item,
        result: Completion | GenerationError | AgentTurn,
        prompt: Prompt,
        generator: str,
        started_at: str,
        cause: str | None,
    ) -> Recorded:
        """Judge (unless it failed) and record one turn's result, however it was generated."""
        if not isinstance(result, Completion | GenerationError):
            return await self.agent(owner, item, result, prompt, started_at, cause)
        origin = self.origin(prompt, generator, result, started_at, cause)
        if isinstance(result, GenerationError):
            return await self.failed(owner, item, result, origin)
        return await self.judged(owner, item, result, origin)

    async def agent(
        self,
        owner: str,
        item: Item,
        made: AgentTurn,
        prompt: Prompt,
        started_at: str,
        cause: str | None,
    ) -> Recorded:
        """Record a coding agent's turn: judged in a judge's tree built from its patch, refused
        for its size, or its generation error.

        The attempt notes the item's branch, the commit of this turn's work, the base, the
        sandbox it ran in, the connections its proxy refused, and where the patch lies in the
        submission as recorded (the span the export and a retry read it at); its usage is what
        the agent's stream reported (a killed agent's too). With a remote, the turn is recorded
        only once its commit is there (pushed beside the judgment)."""
        from reins.loop.agentturn import pushed  # a text quest's run never imports workspaces

        origin = self._agent_origin(made, prompt, started_at, cause)
        if made.submission is None:
            unpushed = await pushed(made)
            failure = GenerationFailure(made.error or unpushed or "the agent made nothing")
            return await self.db(self._record, owner, item, failure, origin)
        submission = made.submission
        if made.refused is not None:
            verdict: Result = Verdict.short(Outcome.FAIL, made.refused)
            raw = submission.text
        else:
            verdict, raw = await self._judge_agent(item, made, submission)
        unpushed = await pushed(made)  # pushed beside the judgment, recorded only once there
        if unpushed is not None:
            return await self.db(self._record, owner, item, GenerationFailure(unpushed), origin)
        text = storable(raw)
        spanned = _spanned(origin, submission.span_in(text))
        return await self.db(self._record, owner, item, verdict, spanned, text)

    def _agent_origin(
        self, made: AgentTurn, prompt: Prompt, started_at: str, cause: str | None
    ) -> Origin:
        """How an agent's turn was made, with where its work is (see :meth:`agent`)."""
        notes = DRIVER.notes(seed=prompt.seed, escalated_by=cause, model=made.model)
        refusals = made.refusals
        notes = dataclasses.replace(
            notes, branch=made.branch, commit=made.commit, base=made.base, sandbox=made.sandbox,
            refused=refusals.count if refusals is not None else None,
            refused_to=", ".join(refusals.destinations) if refusals and refusals.count else None,
        )  # fmt: skip
        return Origin(
            policy=self.policy,
            prompt_digest=prompt.digest(),
            usage=made.usage,
            started_at=started_at,
            notes=notes,
            gate_digest=self.quest.gate_digest,
        )

    async def _judge_agent(
        self, item: Item, made: AgentTurn, submission: Submission
    ) -> tuple[Verdict | JudgeFailure, str]:
        """The gate's verdict on an agent's change, in a judge's tree built from its patch."""
        judges, branch = made.judges, made.branch or ""
        assert judges is not None and self._judges is not None

        def judged() -> tuple[Verdict | JudgeFailure, str]:
            try:
                with judges.tree(submission.patch, branch=branch) as tree:
                    return judge(self.quest, item, submission.text, workspace=tree,
                                 limit=made.limit)  # fmt: skip
            except (WorkspaceError, OSError) as exc:  # the base itself: reins', not the agent's
                return JudgeFailure(JUDGE_TREE, f"the judge's tree: {exc}"), submission.text

        # An agent's gate runs its tests: never on the ledger thread.
        return await asyncio.get_running_loop().run_in_executor(self._judges, judged)

    async def failed(
        self, owner: str, item: Item, error: GenerationError, origin: Origin
    ) -> Recorded:
        """Record a generation error: no try used, nothing locked."""
        return await self.db(self._record, owner, item, GenerationFailure(error.error), origin)

    async def judged(
        self, owner: str, item: Item, completion: Completion, origin: Origin
    ) -> Recorded:
        """Judge the completion, then record the verdict (or the judge's own failure)."""

        def judged_and_recorded() -> Recorded:
            started = time.perf_counter()
            verdict, text = judge(self.quest, item, completion.text)
            if time.perf_counter() - started > QUICK_JUDGE:
                self._quick_gate = False
            return self._record(owner, item, verdict, origin, text)

        if self._quick_gate:
            return await self.db(judged_and_recorded)
        assert self._judges is not None
        verdict, text = await asyncio.get_running_loop().run_in_executor(
            self._judges, judge, self.quest, item, completion.text
        )
        return await self.db(self._record, owner, item, verdict, origin, text)

    def _record(
        self, owner: str, item: Item, result: Result, origin: Origin, submission: str | None = None
    ) -> Recorded:
        """Record one turn of a leased item (on the ledger thread)."""
        return record(
            self.store,
            self.quest,
            item,
            result,
            origin,
            driver=self.driver,
            owner=owner,
            submission=submission,
        )


def _spanned(origin: Origin, span: tuple[int, int]) -> Origin:
    """``origin`` noting where the patch lies in the submission it is recorded with."""
    start, end = span
    notes = dataclasses.replace(origin.notes, patch_start=start, patch_end=end)
    return dataclasses.replace(origin, notes=notes)
