"""Retry policies compared on the same items: passes after try 1, 2 and 3 for each policy.

Usage (from the repository root)::

    .venv/bin/python bench/bench_retry.py                      # simulated model, 200 items
    .venv/bin/python bench/bench_retry.py --quick              # 60 items
    .venv/bin/python bench/bench_retry.py --model ollama:qwen2.5:0.5b --items 60 -c 2

The quest asks for one sentence under four checkable constraints (a minimum word count, two
words to include, one to avoid, a closing mark); the gate checks each. Every policy runs the
loop on its own fresh ledger of the same items. With ``--model`` the generator is that backend,
resolved through ``reins.backends.registry``; without it, a FakeBackend plays a *simulated*
model whose behaviour is set by the constants below — its figures show the machinery, not how
any real model converges. The table says which generator ran.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from reins import Context, Fact, Item, Level, Quest, Seed, rule  # noqa: E402
from reins.backends.base import Backend  # noqa: E402
from reins.backends.registry import resolve  # noqa: E402
from reins.loop import LoopOptions  # noqa: E402
from reins.loop.compare import compare_retry  # noqa: E402
from reins.quest import RETRY_POLICIES  # noqa: E402
from reins.testing import FakeBackend, FakeCall  # noqa: E402
from reins.turn.compose import PREVIOUS_HEADER  # noqa: E402

VOCABULARY = ["river", "lamp", "orange", "window", "copper"]
VOCABULARY += ["garden", "silent", "thunder", "pocket", "marble"]
FILLER = ["the", "a", "of", "and", "to", "in", "with", "over", "under", "near", "by"]
MARKS = ".!?"

# The simulated model: each constraint is met with FRESH on a new sample; a constraint named
# in the feedback is fixed with FIX; shown its previous answer, the model keeps each part of it
# with ANCHOR and fixes a named constraint only with FIX_ANCHORED.
FRESH = 0.7
FIX = 0.8
ANCHOR = 0.85
FIX_ANCHORED = 0.5


def seed(args: Sequence[str]) -> list[Seed]:
    rng = random.Random(int(args[1]) if len(args) > 1 else 7)
    items = []
    for i in range(int(args[0])):
        include = rng.sample(VOCABULARY, 3)
        items.append(
            Seed(
                f"s{i:04d}",
                {
                    "words": rng.randint(8, 14),
                    "include": include[:2],
                    "exclude": include[2],
                    "end": rng.choice(MARKS),
                },
            )
        )
    return items


def render(item: Item) -> str:
    p = item.payload
    return (
        f"Write one sentence of at least {p['words']} words. It must contain the words "
        f"'{p['include'][0]}' and '{p['include'][1]}', must not contain the word "
        f"'{p['exclude']}', and must end with '{p['end']}'. Answer with the sentence only."
    )


def prepare(item: Item, raw: str) -> Context:
    return Context(key=item.key, submission=raw.strip(), payload=item.payload)


def words(text: str) -> list[str]:
    return [w.strip(".,!?;:'\"").lower() for w in text.split()]


@rule("length", Level.FAIL, "the sentence has at least the words asked for")
def length(ctx: Context) -> Fact | None:
    n = len(words(ctx.submission))
    if n < ctx.payload["words"]:
        return Fact(where="sentence", expected=f"≥ {ctx.payload['words']} words", actual=str(n))
    return None


@rule("include", Level.FAIL, "both required words appear")
def include(ctx: Context) -> Fact | None:
    missing = [w for w in ctx.payload["include"] if w not in words(ctx.submission)]
    if missing:
        return Fact(where="sentence", expected=f"the word {missing[0]!r}", actual="absent")
    return None


@rule("exclude", Level.FAIL, "the forbidden word does not appear")
def exclude(ctx: Context) -> Fact | None:
    if ctx.payload["exclude"] in words(ctx.submission):
        return Fact(where="sentence", expected=f"no {ctx.payload['exclude']!r}", actual="present")
    return None


@rule("ending", Level.FAIL, "the sentence ends with the mark asked for")
def ending(ctx: Context) -> Fact | None:
    if not ctx.submission.endswith(ctx.payload["end"]):
        return Fact(where="end", expected=ctx.payload["end"], actual=ctx.submission[-1:] or "''")
    return None


RULES = (length, include, exclude, ending)
quest = Quest(
    name="sentences",
    seed=seed,
    render=render,
    prepare=prepare,
    rules=RULES,
    manual="You follow writing instructions exactly.",
)


def met(constraint: str, text: str, p: dict[str, Any]) -> bool:
    ctx = Context(key="", submission=text.strip(), payload=p)
    return next(r for r in RULES if r.id == constraint).check(ctx) is None


def simulated(payloads: dict[str, dict[str, Any]]) -> FakeBackend:
    """A FakeBackend that reads its prompt the way the constants above say."""

    def answer(call: FakeCall) -> str:
        p = payloads[call.key]
        rng = random.Random(call.seed)
        user = call.prompt.user
        named = {r.id for r in RULES if f"- {r.id}:" in user}
        previous = user.split(PREVIOUS_HEADER, 1)[1].strip() if PREVIOUS_HEADER in user else None
        ok = {}
        for r in RULES:
            if previous is not None:
                kept = met(r.id, previous, p) if rng.random() < ANCHOR else rng.random() < FRESH
                ok[r.id] = rng.random() < FIX_ANCHORED if r.id in named else kept
            elif r.id in named:
                ok[r.id] = rng.random() < FIX
            else:
                ok[r.id] = rng.random() < FRESH
        pool = [w for w in FILLER]
        body = list(p["include"]) if ok["include"] else [p["include"][0]]
        if not ok["exclude"]:
            body.append(p["exclude"])
        target = p["words"] if ok["length"] else max(2, p["words"] - 4)
        while len(body) < target:
            body.insert(rng.randrange(len(body) + 1), rng.choice(pool))
        mark = p["end"] if ok["ending"] else rng.choice([m for m in MARKS if m != p["end"]])
        return " ".join(body).capitalize() + mark

    return FakeBackend(answer, name="simulated")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="a real backend spec; default: the simulated model")
    parser.add_argument("--items", type=int, default=None, help="items (default 200, quick 60)")
    parser.add_argument("--concurrency", "-c", type=int, default=8)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    n = args.items or (60 if args.quick or args.model else 200)
    seeds = seed([str(n)])
    payloads = {s.key: s.payload for s in seeds}
    if args.model:
        generator = f"{args.model} (resolved through reins.backends.registry)"
    else:
        generator = (
            f"FakeBackend, a simulated model (FRESH={FRESH}, FIX={FIX}, ANCHOR={ANCHOR}, "
            f"FIX_ANCHORED={FIX_ANCHORED}): figures show the machinery, not a real model"
        )
    print(f"# bench_retry · {n} items · generator: {generator}")
    print(f"{'policy':<16} {'try 1':>6} {'try 2':>6} {'try 3':>6}   passes after each try, of {n}")

    def backend() -> Backend:
        return resolve(args.model) if args.model else simulated(payloads)

    options = LoopOptions(concurrency=args.concurrency)
    items = [(s.key, s.payload) for s in seeds]
    for r in compare_retry(quest, items, backend, RETRY_POLICIES, options=options):
        if r.stopped != "done":
            print(f"  ({r.policy}: the run ended early: {r.stopped}: {r.message})")
        cumulative = r.cumulative
        print(f"{r.policy:<16} {cumulative[0]:>6} {cumulative[1]:>6} {cumulative[2]:>6}")


if __name__ == "__main__":
    main()
