"""Judge: decode a raw submission, let the quest prepare it, and let only the gate pass it.

The judge's own failures — a ``prepare``, rule, ground or AI check that raises — come back as a
:class:`JudgeFailure`, never as a verdict: the generator did nothing wrong.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from reins.errors import JudgeError, cause_of
from reins.gate import Context, Fact, Outcome, Rule, Verdict, evaluate, excerpt
from reins.quest import Quest
from reins.store.model import Item
from reins.turn.failures import JudgeFailure
from reins.values import JudgeTree

DEFAULT_LIMIT = 1024 * 1024

# Facts and judge errors reins itself names; no quest rule may take these ids.
SUBMISSION_RULE = "reins:submission"
PREPARE_RULE = "quest.prepare"
GATE_RULE = "reins:gate"


def decode(raw: bytes | str, *, limit: int = DEFAULT_LIMIT) -> tuple[str, Verdict | None]:
    """The submission as text, and a FAIL verdict if it is too large or not UTF-8."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if len(data) > limit:
        fact = Fact(
            rule=SUBMISSION_RULE,
            where="submission",
            expected=f"at most {limit} bytes",
            actual=f"{len(data)} bytes or more",
        )
        return data[:limit].decode("utf-8", "replace"), Verdict.short(Outcome.FAIL, fact)
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", "backslashreplace")
        fact = Fact(
            rule=SUBMISSION_RULE,
            where=f"submission byte {exc.start}",
            expected="UTF-8 text",
            actual=excerpt(text[max(0, exc.start - 20) :], 80),
        )
        return text, Verdict.short(Outcome.FAIL, fact)


def judge(
    quest: Quest,
    item: Item,
    raw: bytes | str,
    *,
    limit: int = DEFAULT_LIMIT,
    workspace: JudgeTree | None = None,
) -> tuple[Verdict | JudgeFailure, str]:
    """Judge one submission for ``item``. Deterministic; never raises for a bad submission.

    ``workspace``: the judge's tree of a coding item, built by reins from the submission's
    patch; the gate's context carries it, so a check can run the tests there. The facts reins
    found building it (a judge's file changed) each make the verdict a FAIL, whatever the
    rules say.

    Returns:
        The verdict, or the judge's own failure (a ``prepare``, rule, ground or AI check that
        raised or could not answer: the generator is not to blame), and the submission as text
        (what the log keeps).
    """
    text, refused = decode(raw, limit=limit)
    if refused is not None:
        return refused, text
    land = land_rules_of(quest, item)
    if land is not None:  # a land item is judged as the item whose change it lands
        item = land[0]
    try:
        prepared = quest.prepare(item, text)
    except JudgeError as exc:
        return JudgeFailure(exc.where, exc.cause), text
    except Exception as exc:
        return _broken(PREPARE_RULE, exc), text
    if isinstance(prepared, Verdict):
        if prepared.outcome is Outcome.PASS:
            cause = "returned a PASS verdict: only the gate's aggregation may pass an item"
            return JudgeFailure(PREPARE_RULE, cause), text
        return prepared, text
    if not isinstance(prepared, Context):
        cause = f"returned {excerpt(repr(prepared), 80)}, not a Context or a Verdict"
        return JudgeFailure(PREPARE_RULE, cause), text
    if workspace is not None:
        prepared = dataclasses.replace(prepared, workspace=workspace)
    try:
        verdict = quest.judge.evaluate(prepared)
        if land is not None and verdict.outcome is Outcome.PASS and land[1]:
            verdict = evaluate(land[1], prepared)  # then by the land rules
    except JudgeError as exc:
        failure = JudgeFailure(exc.where, exc.cause)
        return _with_tree_facts(failure, workspace), text
    except Exception as exc:
        return _with_tree_facts(_broken(GATE_RULE, exc), workspace), text
    return _with_tree_facts(verdict, workspace), text


def land_rules_of(quest: Quest, item: Item) -> tuple[Item, Sequence[Rule]] | None:
    """For a land item of a coding quest (:mod:`reins.workspace.landtask`): the item whose
    change it lands, as the gate judges it (that key and payload), and the land rules judged
    after the gate passes it. None for any other item."""
    if quest.workspace is None:
        return None
    from reins.workspace.landtask import LandTask  # only a coding quest's judgment loads it

    task = LandTask.of(item.payload)
    if task is None:
        return None
    return dataclasses.replace(item, key=task.item, payload=task.payload), quest.land_rules


def judge_landing(
    quest: Quest, item: Item, raw: str, *, workspace: JudgeTree
) -> Verdict | JudgeFailure:
    """The land rules' verdict on a merge ``reins land`` made: ``item`` is the one whose
    change was merged, ``raw`` the merge's submission (its patch from the base), judged in
    ``workspace``, the judge's tree of the merged commit. PASS when every land rule passes
    (and the quest has none); deterministic, never raises for the merge's sake."""
    text, _ = decode(raw, limit=len(raw.encode("utf-8", "surrogatepass")) + 1)
    try:
        prepared = quest.prepare(item, text)
    except JudgeError as exc:
        return JudgeFailure(exc.where, exc.cause)
    except Exception as exc:
        return _broken(PREPARE_RULE, exc)
    if isinstance(prepared, Verdict):  # the quest refused the merge's text: it cannot pass
        return prepared if prepared.outcome is not Outcome.PASS else _passed_by_prepare()
    if not isinstance(prepared, Context):
        return JudgeFailure(PREPARE_RULE, f"returned {excerpt(repr(prepared), 80)}")
    prepared = dataclasses.replace(prepared, workspace=workspace)
    try:
        verdict = evaluate(quest.land_rules, prepared)
    except JudgeError as exc:
        return _with_tree_facts(JudgeFailure(exc.where, exc.cause), workspace)
    except Exception as exc:
        return _with_tree_facts(_broken(GATE_RULE, exc), workspace)
    return _with_tree_facts(verdict, workspace)


def _passed_by_prepare() -> JudgeFailure:
    cause = "returned a PASS verdict: only the gate's aggregation may pass an item"
    return JudgeFailure(PREPARE_RULE, cause)


def _with_tree_facts(
    verdict: Verdict | JudgeFailure, tree: JudgeTree | None
) -> Verdict | JudgeFailure:
    """The verdict with the facts of the judge's tree first: any makes it a FAIL (a judge's
    failure too: the agent's change alone is at fault then)."""
    facts = tree.facts if tree is not None else ()
    if not facts:
        return verdict
    if isinstance(verdict, JudgeFailure):
        return Verdict.short(Outcome.FAIL, *facts)
    # No walkthrough: a graph gate's would not name these facts, and the feedback must.
    return Verdict(Outcome.FAIL, (*facts, *verdict.facts), facts[0].rule)


def _broken(where: str, exc: Exception) -> JudgeFailure:
    return JudgeFailure(where, excerpt(cause_of(exc)))
