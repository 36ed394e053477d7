"""Google's recorded IFEval responses as a ``reins replay`` file.

Upstream files pair a response with its prompt's text (``{"prompt", "response"}``), not its
key; the input file the responses answered (``input_data_gpt4_20231107_145030.jsonl`` for the
archived GPT-4 run) maps each prompt to its key. ``python -m reins.packs.ifeval.replayfile
INPUT RESPONSES > replay.jsonl`` writes ``{"key", "output"}`` lines in the input's order.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

from reins.errors import ConfigError

__all__ = ["replay_lines"]


def replay_lines(inputs: Path, responses: Path) -> Iterator[dict[str, str]]:
    """``{"key", "output"}`` for every prompt of ``inputs``, from ``responses``.

    Raises:
        ConfigError: a prompt of ``inputs`` has no response (upstream's "Missing responses").
    """
    by_prompt: dict[str, str] = {}
    with responses.open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            by_prompt[record["prompt"]] = record["response"]
    with inputs.open(encoding="utf-8") as lines:
        for line in lines:
            item = json.loads(line)
            if item["prompt"] not in by_prompt:
                raise ConfigError(f"{responses}: no response for the prompt of key {item['key']}")
            yield {"key": str(item["key"]), "output": by_prompt[item["prompt"]]}


if __name__ == "__main__":  # pragma: no cover - exercised through the README's command
    if len(sys.argv) != 3:
        sys.exit("usage: python -m reins.packs.ifeval.replayfile INPUT RESPONSES")
    for entry in replay_lines(Path(sys.argv[1]), Path(sys.argv[2])):
        print(json.dumps(entry, ensure_ascii=False))
