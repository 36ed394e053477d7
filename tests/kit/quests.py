"""The tiny quest every test steers: three one-word items, a gate that is easy to move.

An answer with "bad" in it FAILs (rule ``not-bad``), one with "meh" goes to REVIEW (``not-meh``);
``prepare`` turns "skip", "block" and "explode" into a SKIPPED or BLOCKED verdict or an error.
The CLI finds these by reference: ``--quest tests.kit:TINY`` (:data:`tests.kit.TINY_REF`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence

from reins import Context, Fact, Item, Level, Outcome, Quest, Seed, Verdict, rule


def tiny_seed(args: Sequence[str]) -> Iterator[Seed]:
    for word in args or ["a", "b", "c"]:
        yield Seed(word, {"word": word})


def tiny_render(item: Item) -> str:
    return f"Say 'good' for {item.key}."


def tiny_prepare(item: Item, raw: str) -> Context | Verdict:
    text = raw.strip()
    if text == "skip":
        return Verdict.short(
            Outcome.SKIPPED, Fact(rule="skip", where="x", expected="y", actual="z")
        )
    if text == "block":
        return Verdict.short(Outcome.BLOCKED)
    if text == "explode":
        raise RuntimeError("prepare blew up")
    return Context(key=item.key, submission=text, payload=item.payload)


@rule("not-bad", Level.FAIL, "the answer is not 'bad'")
def not_bad(ctx: Context) -> Fact | None:
    if isinstance(ctx.submission, str) and "bad" in ctx.submission:
        return Fact(where="answer", expected="good", actual=ctx.submission)
    return None


@rule("not-meh", Level.REVIEW, "the answer is not 'meh'")
def not_meh(ctx: Context) -> Fact | None:
    if isinstance(ctx.submission, str) and "meh" in ctx.submission:
        return Fact(where="answer", expected="good", actual=ctx.submission)
    return None


TINY = Quest(
    name="tiny",
    seed=tiny_seed,
    render=tiny_render,
    prepare=tiny_prepare,
    rules=[not_bad, not_meh],
    manual="Answer in one word.",
    coaching={"not-bad": "Never answer 'bad'."},
)


def wordy_render(item: Item) -> str:
    """The tiny quest's text, and the item's own words under it (as long as its payload)."""
    words = item.payload.get("text", "") if isinstance(item.payload, dict) else ""
    return f"{tiny_render(item)}\n{words}".rstrip("\n")


# The tiny quest, showing each item's own words too: an item text as long as its input.
WORDY = dataclasses.replace(TINY, render=wordy_render)

# The tiny quest, with agents allowed to propose items (the MCP server's propose_item).
PROPOSING = dataclasses.replace(TINY, allow_proposals=True)

# The same quest after its gate changed: "meh" no longer raises doubt (what rejudge is for).
LENIENT = dataclasses.replace(TINY, rules=[not_bad])

# The tiny quest, escalating to the strong model on its FAIL rule.
ESCALATING = dataclasses.replace(TINY, escalate_on=frozenset({"not-bad"}))
