"""Is the gate deterministic? Judge the same submissions in fresh processes, compare verdicts.

A rule whose verdict depends on the process (a set's iteration order under another hash seed,
a random choice, the clock) is a judge defect: the same submission could PASS today and FAIL
tomorrow. :func:`check` judges every submission in two (or more) fresh Python processes with
different ``PYTHONHASHSEED`` values and lists the rules whose facts differ.

Run as a module it is the worker: ``python -m reins.turn.determinism QUEST_REF`` reads
``{"key", "payload", "submission"}`` lines on stdin and writes one verdict line per input.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass

from reins.errors import ConfigError

SEEDS = (1, 2)


@dataclass(frozen=True, slots=True)
class Difference:
    """A submission whose verdict differed between processes, and the rules behind it."""

    key: str
    rules: tuple[str, ...]
    verdicts: tuple[str, ...]


def check(
    quest_ref: str,
    entries: Iterable[tuple[str, object, str]],
    *,
    seeds: tuple[int, ...] = SEEDS,
    folder: str | None = None,
) -> list[Difference]:
    """Judge each ``(key, payload, submission)`` once per seed, each in a fresh process.

    ``folder``: where a ``module:attr`` quest imports from, as for :func:`reins.load_quest`.

    Raises:
        ConfigError: a worker failed (the quest does not load, say).
    """
    lines = "".join(
        json.dumps({"key": k, "payload": p, "submission": s}, ensure_ascii=True) + "\n"
        for k, p, s in entries
    )
    runs = [_run([quest_ref, *([folder] if folder else [])], lines, seed) for seed in seeds]
    found = []
    for key in runs[0]:
        verdicts = [run.get(key) or {} for run in runs]
        if all(v == verdicts[0] for v in verdicts):
            continue
        shown = tuple(json.dumps(v, sort_keys=True)[:200] for v in verdicts)
        found.append(Difference(key, tuple(_differing(verdicts)) or ("(the verdict)",), shown))
    return found


def _differing(verdicts: list[dict[str, object]]) -> list[str]:
    """The rules whose facts, or whose place as root cause or failing part, differ by run."""
    per_run: list[dict[str, set[str]]] = []
    for v in verdicts:
        by_rule: dict[str, set[str]] = {}
        facts = v.get("facts")
        for fact in facts if isinstance(facts, list) else []:
            by_rule.setdefault(str(fact.get("rule", "")), set()).add(json.dumps(fact))
        for name in ("root_cause", "where"):  # the root cause, or what raised
            if v.get(name):
                by_rule.setdefault(str(v[name]), set()).add(f"{name}:{v.get('outcome')}")
        per_run.append(by_rule)
    names = sorted({r for run in per_run for r in run})
    return [r for r in names if len({frozenset(run.get(r, set())) for run in per_run}) > 1]


def _run(args: list[str], lines: str, seed: int) -> dict[str, dict[str, object]]:
    env = {**os.environ, "PYTHONHASHSEED": str(seed)}
    done = subprocess.run(
        [sys.executable, "-m", "reins.turn.determinism", *args],
        input=lines,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or ["no message"]
        raise ConfigError(f"the determinism check's worker failed: {tail[0]}")
    out: dict[str, dict[str, object]] = {}
    for line in done.stdout.splitlines():
        data = json.loads(line)
        out[data.pop("key")] = data
    return out


def _worker(quest_ref: str, folder: str | None) -> None:
    from reins.quests.find import load_quest
    from reins.store.model import Item, State
    from reins.turn.failures import JudgeFailure
    from reins.turn.judge import judge

    quest = load_quest(quest_ref, folder=folder)
    for line in sys.stdin:
        data = json.loads(line)
        item = Item(key=data["key"], state=State.TODO, tries=0, payload=data["payload"])
        verdict, _ = judge(quest, item, data["submission"])
        if isinstance(verdict, JudgeFailure):
            result: dict[str, object] = {"judge_error": verdict.cause, "where": verdict.where}
        else:
            result = {
                "outcome": verdict.outcome.value,
                "root_cause": verdict.root_cause,
                "facts": [f.to_dict() for f in verdict.facts],
            }
        print(json.dumps({"key": item.key, **result}, ensure_ascii=True), flush=True)


if __name__ == "__main__":
    _worker(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
