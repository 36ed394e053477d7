"""Shared fixtures: a tiny quest whose gate is easy to steer, and a fresh ledger."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from reins import Context, Fact, Item, Level, Outcome, Quest, Seed, SQLiteStore, Verdict, rule


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


@pytest.fixture
def quest() -> Quest:
    return TINY


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[SQLiteStore]:
    with SQLiteStore.open(tmp_path / "t.reins.db", create=True) as led:
        led.add((s[0], s[1]) for s in TINY.seed([]))
        yield led


from tests.pgserver import postgres_harness, postgres_url  # noqa: E402, F401

# The tiny quest, with agents allowed to propose items (tests/test_mcp.py).
PROPOSING = Quest(
    name="tiny",
    seed=tiny_seed,
    render=tiny_render,
    prepare=tiny_prepare,
    rules=[not_bad, not_meh],
    manual="Answer in one word.",
    coaching={"not-bad": "Never answer 'bad'."},
    allow_proposals=True,
)
