"""Judge: decode a raw submission, let the quest prepare it, and let only the gate pass it."""

from __future__ import annotations

from reins.gate import Context, Fact, Outcome, Verdict, excerpt
from reins.quest import Quest
from reins.store.model import Item

DEFAULT_LIMIT = 1024 * 1024

# Facts reins itself leaves; no quest rule may take these ids.
SUBMISSION_RULE = "reins:submission"
PREPARE_RULE = "reins:prepare"
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
    quest: Quest, item: Item, raw: bytes | str, *, limit: int = DEFAULT_LIMIT
) -> tuple[Verdict, str]:
    """Judge one submission for ``item``. Deterministic; never raises for a bad submission.

    Returns:
        The verdict, and the submission as text (what the log keeps).
    """
    text, refused = decode(raw, limit=limit)
    if refused is not None:
        return refused, text
    try:
        prepared = quest.prepare(item, text)
    except Exception as exc:
        return _broken(PREPARE_RULE, "quest.prepare", "prepare to decode or refuse", exc), text
    if isinstance(prepared, Verdict):
        if prepared.outcome is Outcome.PASS:
            fact = Fact(
                rule=PREPARE_RULE,
                where="quest.prepare",
                expected="a context for the gate, or a FAIL/SKIPPED/BLOCKED/REVIEW verdict",
                actual="a PASS verdict: only the gate's aggregation may pass an item",
            )
            return Verdict.short(Outcome.FAIL, fact), text
        return prepared, text
    if not isinstance(prepared, Context):
        fact = Fact(
            rule=PREPARE_RULE,
            where="quest.prepare",
            expected="a Context or a Verdict",
            actual=excerpt(repr(prepared), 80),
        )
        return Verdict.short(Outcome.FAIL, fact), text
    try:
        verdict = quest.judge.evaluate(prepared)
    except Exception as exc:
        return _broken(GATE_RULE, "gate", "the gate to evaluate", exc), text
    return verdict, text


def _broken(rule: str, where: str, expected: str, exc: Exception) -> Verdict:
    fact = Fact(
        rule=rule, where=where, expected=expected, actual=excerpt(f"{type(exc).__name__}: {exc}")
    )
    return Verdict.short(Outcome.FAIL, fact)
