"""A tiny quest for benchmarks: ``counter`` seeds N numbered items whose answer is their number.

``reins --quest bench.quests:counter scan 1000000`` seeds a million items lazily (nothing is held
in memory), so the cost measured is reins', not the quest's. The answer to item ``c0000042`` is
``42``; anything else is a FAIL. Run the CLI from the repository root, or with the repository
root on ``PYTHONPATH``, so that ``bench.quests`` imports.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from reins import Context, Fact, Level, Outcome, Quest, Seed, Verdict, rule
from reins.errors import ConfigError
from reins.store import Item

MAX_DIGITS = 9


def key_of(n: int) -> str:
    """The key of item number ``n``: fixed width, so keys sort like numbers."""
    return f"c{n:07d}"


def seed(args: Sequence[str]) -> Iterator[Seed]:
    """``[N]`` → items ``c0000000`` … ``c{N-1}``, payload ``{"n": i}``; lazily."""
    if len(args) != 1 or not args[0].isdigit():
        raise ConfigError("counter quest: give one argument, the number of items (e.g. 1000)")
    for n in range(int(args[0])):
        yield Seed(key_of(n), {"n": n})


def render(item: Item) -> str:
    return f"Answer with the number of item {item.key}: {item.payload['n']}"


def prepare(item: Item, raw: str) -> Context | Verdict:
    text = raw.strip()
    if not text.lstrip("-").isdigit():
        fact = Fact(rule="integer", where="submission", expected="an integer", actual=text[:40])
        return Verdict.short(Outcome.FAIL, fact)
    return Context(key=item.key, submission=int(text), payload=item.payload)


@rule("equals", Level.FAIL, "the answer is the item's number")
def equals(ctx: Context) -> Fact | None:
    if ctx.submission != ctx.payload["n"]:
        return Fact(where="answer", expected=str(ctx.payload["n"]), actual=str(ctx.submission))
    return None


@rule("short", Level.REVIEW, f"the answer has at most {MAX_DIGITS} digits")
def short(ctx: Context) -> Fact | None:
    if len(str(abs(ctx.submission))) > MAX_DIGITS:
        return Fact(where="answer", expected=f"≤ {MAX_DIGITS} digits", actual=str(ctx.submission))
    return None


counter = Quest(
    name="counter",
    description="benchmark quest: answer each item with its number",
    seed=seed,
    render=render,
    prepare=prepare,
    rules=(equals, short),
    manual="Answer with the number only.",
)
