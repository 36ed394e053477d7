"""Judge: decode a raw submission, let the quest prepare it, and let only the gate pass it.

The judge's own failures — a ``prepare``, rule, ground or AI check that raises — come back as a
:class:`JudgeFailure`, never as a verdict: the generator did nothing wrong.
"""

from __future__ import annotations

import dataclasses

from reins.errors import JudgeError, cause_of
from reins.gate import Context, Fact, Outcome, Verdict, excerpt
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
    except JudgeError as exc:
        failure = JudgeFailure(exc.where, exc.cause)
        return _with_tree_facts(failure, workspace), text
    except Exception as exc:
        return _with_tree_facts(_broken(GATE_RULE, exc), workspace), text
    return _with_tree_facts(verdict, workspace), text


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
