"""What the ifeval pack costs on two real models: at list price, batch, cache, batch + cache.

Usage (from the repository root; needs ``pip install -e '.[ifeval]'``)::

    .venv/bin/python bench/bench_cost.py            # prints the table bench/README.md quotes
    .venv/bin/python bench/bench_cost.py --quick    # the first 100 prompts
    .venv/bin/python bench/bench_cost.py --keep DIR # and keep each run's ledger for `reins report`

The loop works the pack's 541 prompts through the real ``openai`` and ``anthropic`` backends
(request building, the Anthropic cache marker, usage parsing, pricing from
``reins.backends.prices``) and records every turn in a fresh SQLite ledger. Only the wire is
scripted: each backend's POST is answered in process by a provider stand-in that

- answers every turn of an item with GPT-4's archived response to its prompt
  (``tests/data/ifeval/``), so an item that fails the gate fails again on each retry and
  locks DONE after three tries: the most retries a run can pay for;
- counts tokens as characters / 4 (English under both providers' tokenizers runs near that);
- caches as each provider documents: OpenAI the shared system text on its own from 1,024
  tokens, Anthropic only up to a ``cache_control`` marker, from the model's minimum; the first
  request writes the prefix, every later one reads it (a steady run keeps it warm), and only the
  system text counts (the cache may reach into an item's own text on its retries: not counted).

Two quests: the pack as shipped (its manual is about 80 tokens, under every minimum) and the
same pack with worked examples, the first GPT-4 responses that pass the gate, added until the
system text passes the minimum. Batch prices are the same recorded tokens at the batch share
(``BATCH_PRICE``); batch + cache assumes the same cache reads inside a batch, which neither
provider promises (hits in a batch are best effort): an upper bound on that saving.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO / "src") not in sys.path:
    sys.path.insert(0, str(REPO / "src"))

from reins import SQLiteStore  # noqa: E402
from reins.backends import registry  # noqa: E402
from reins.backends.batch import BATCH_PRICE  # noqa: E402
from reins.backends.cache import OPENAI_MINIMUM, anthropic_minimum  # noqa: E402
from reins.backends.prices import TABLE_DATE, lookup  # noqa: E402
from reins.gate import Outcome, Verdict  # noqa: E402
from reins.loop import LoopOptions, TextGenerator, run  # noqa: E402
from reins.quest import Example, Quest, Seed  # noqa: E402
from reins.quests.find import load_quest  # noqa: E402
from reins.store.model import Item, State  # noqa: E402
from reins.turn.compose import shared_text  # noqa: E402
from reins.turn.judge import judge  # noqa: E402

DATA = REPO / "tests" / "data" / "ifeval"
INPUTS = DATA / "input_data_gpt4_20231107_145030.jsonl"
RESPONSES = DATA / "input_response_data_gpt4_20231107_145030.jsonl"
# Two current models, and one whose minimum cacheable prefix (4,096 tokens) the examples miss.
MODELS = ("openai:gpt-6.2-sol", "anthropic:claude-sonnet-5-5", "anthropic:claude-haiku-4-5")
EXAMPLE_CHARS = 6_000  # about 1,500 tokens: over OpenAI's minimum and the default Anthropic one


def tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


class Provider:
    """The provider's side of the wire: GPT-4's answer, usage counted, the prefix cached."""

    def __init__(self, answers: dict[str, str], kind: str, minimum: int) -> None:
        self.answers, self.kind, self.minimum = answers, kind, minimum
        self.cached: set[str] = set()

    def answer(self, user: str) -> str:
        """GPT-4's answer to the prompt the user text opens with (a retry adds to it)."""
        if user in self.answers:
            return self.answers[user]
        return max(((p, a) for p, a in self.answers.items() if user.startswith(p)))[1]

    def cache(self, prefix: str, marked: bool) -> tuple[int, int]:
        """(tokens read, tokens written) of the shared prefix on this request."""
        size = tokens(prefix)
        if not marked or size < self.minimum:
            return 0, 0
        if prefix in self.cached:
            return size, 0
        self.cached.add(prefix)
        return 0, size

    def reply(self, body: dict[str, Any]) -> dict[str, Any]:
        if self.kind == "openai":
            system = next((m["content"] for m in body["messages"] if m["role"] == "system"), "")
            user = body["messages"][-1]["content"]
            text = self.answer(user)
            read, write = self.cache(system, marked=True)  # automatic: no marker needed
            usage = {
                "prompt_tokens": tokens(system) + tokens(user),
                "completion_tokens": tokens(text),
                "prompt_tokens_details": {"cached_tokens": read, "cache_write_tokens": write},
            }
            return {"choices": [{"message": {"content": text}}], "usage": usage}
        system = body.get("system", "")
        marked = isinstance(system, list)
        prefix = "".join(b["text"] for b in system) if marked else system
        user = body["messages"][-1]["content"]
        text = self.answer(user)
        read, write = self.cache(prefix, marked)
        usage = {
            "input_tokens": tokens(prefix) + tokens(user) - read - write,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": write,
            "output_tokens": tokens(text),
        }
        return {"type": "message", "content": [{"type": "text", "text": text}], "usage": usage}


def scripted(spec: str, provider: Provider) -> Any:
    """The real backend for ``spec``, its POST answered by ``provider`` in process."""
    os.environ.setdefault("ANTHROPIC_API_KEY", "bench-no-key")  # nothing is sent anywhere
    base = "http://127.0.0.1:9" + ("/v1" if spec.startswith("openai:") else "")
    backend = registry.resolve(f"{spec}?base_url={base}")

    async def post(url: str, headers: dict[str, str], payload: bytes, timeout: float) -> Any:
        return provider.reply(json.loads(payload))

    backend.post = post  # type: ignore[attr-defined]
    return backend


def archived_answers(items: list[Item]) -> dict[str, str]:
    """The pack's prompt → GPT-4's archived response, matched by key (Google has since reworded
    one prompt, 2785, whose archived answer is to the older wording)."""

    def rows(path: Path) -> list[dict[str, Any]]:
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

    responses = {r["prompt"]: r["response"] for r in rows(RESPONSES)}
    asked = {str(r["key"]): r["prompt"] for r in rows(INPUTS)}
    return {str(dict(i.payload)["prompt"]): responses[asked[i.key]] for i in items}  # type: ignore[arg-type]


def with_examples(quest: Quest, items: list[Item], answers: dict[str, str]) -> Quest:
    """``quest`` with the first GPT-4 responses that pass its gate as worked examples."""
    examples: list[Example] = []
    size = len(quest.manual)
    for item in items:
        answer = answers[str(dict(item.payload)["prompt"])]  # type: ignore[arg-type]
        verdict = judge(quest, item, answer)[0]
        if isinstance(verdict, Verdict) and verdict.outcome is Outcome.PASS:
            examples.append(Example(item.payload, answer, key=item.key))
            size += len(answer) + len(quest.render(item))
            if size >= EXAMPLE_CHARS:
                break
    return dataclasses.replace(quest, examples=tuple(examples))


def work(quest: Quest, items: list[Item], backend: Any, path: Path) -> dict[str, Any]:
    """Loop the quest over ``items`` on a fresh ledger; the ledger's usage totals and turns."""
    with SQLiteStore.open(path, create=True) as store:
        store.add((i.key, i.payload) for i in items)
        options = LoopOptions(export_every=3600)
        run(store, quest, TextGenerator(backend), options=options, handle_signals=False)
        s = store.stats()
        return {
            "turns": s.attempts, "in": s.input_tokens, "out": s.output_tokens,
            "read": s.cache_read_tokens, "write": s.cache_write_tokens, "cost": s.cost,
            "list": s.list_cost, "done": {k.value: v for k, v in s.counts.items() if v},
        }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--keep", metavar="DIR", help="keep each run's ledger in DIR")
    parser.add_argument("--quick", action="store_true", help="the first 100 prompts only")
    args = parser.parse_args()
    quest = load_quest("ifeval")
    items = [Item(s.key, State.TODO, 0, s.payload) for s in map(Seed._make, quest.seed([]))]
    items = items[:100] if args.quick else items
    answers = archived_answers(items)
    shots = with_examples(quest, items, answers)
    quests = {"as shipped": quest, f"+ {len(shots.examples)} examples": shots}
    print(f"prices: reins.backends.prices, a snapshot of {TABLE_DATE}")
    for name, q in quests.items():
        print(f"quest {name}: shared system text {tokens(shared_text(q)):,} tokens (chars / 4)")
    print("| model | quest | turns | tokens in (cache read) | out | list | batch | cache |"
          " batch + cache |")  # fmt: skip
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(args.keep or tmp)
        where.mkdir(parents=True, exist_ok=True)
        for spec in MODELS:
            kind, model = spec.split(":", 1)
            assert lookup(kind, model) is not None, f"{spec} is not in the price table"
            minimum = OPENAI_MINIMUM if kind == "openai" else anthropic_minimum(model)
            for n, (name, q) in enumerate(quests.items()):
                path = where / f"{model}-{n}.reins.db"
                r = work(q, items, scripted(spec, Provider(answers, kind, minimum)), path)
                share = 100 * r["read"] / r["in"] if r["in"] else 0.0
                print(
                    f"| {model} | {name} | {r['turns']} | {r['in']:,} ({share:.0f}%)"
                    f" | {r['out']:,} | ${r['list']:.2f} | ${r['list'] * BATCH_PRICE:.2f}"
                    f" | ${r['cost']:.2f} | ${r['cost'] * BATCH_PRICE:.2f} |"
                )
                print(f"  {path.name}: {r['done']}, cache writes {r['write']:,}", file=sys.stderr)


if __name__ == "__main__":
    main()
