"""The ifeval pack end to end: Google's GPT-4 file replayed through the CLI, then ``report``.

``report`` gives the four figures IFEval's users quote (prompt- and instruction-level accuracy,
strict and loose), equal to what the official evaluation computes over the same responses:
lm-eval's own ``process_results`` on each prompt, aggregated as its ``ifeval`` task aggregates
(``mean``, ``agg_inst_level_acc``). The replay runs once for the module.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.kit import Cli
from tests.kit.ifeval import INPUTS, RANDOM_KEYS, RESPONSES, need_the_extra

need_the_extra()

from reins.packs.ifeval.official import load  # noqa: E402 - after the extra is known present
from reins.packs.ifeval.replayfile import replay_lines  # noqa: E402

FIGURES = (
    "prompt_level_strict_acc",
    "inst_level_strict_acc",
    "prompt_level_loose_acc",
    "inst_level_loose_acc",
)
RANDOM_INSTRUCTION = "keywords:letter_frequency"  # what 1122 and 1129 draw a letter for


@pytest.fixture(scope="module")
def gpt4(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cli]:
    """``reins -q ifeval scan``, then ``replay --from`` the GPT-4 file, in a folder of its own."""
    folder = tmp_path_factory.mktemp("gpt4")
    lines = "".join(json.dumps(line) + "\n" for line in replay_lines(INPUTS, RESPONSES))
    (folder / "gpt4.jsonl").write_text(lines, encoding="utf-8")
    cli = Cli(folder, quest="ifeval")
    assert cli("scan").exit_code == 0
    out = cli("replay", "--from", "gpt4.jsonl")
    assert out.exit_code in (0, 4), out.output
    yield cli


@functools.cache
def official_figures(coin_flips_fail: bool) -> dict[str, float]:
    """The official figures over the GPT-4 file, computed by lm-eval's own functions.

    With ``coin_flips_fail``, the instruction whose official checker draws at random (on 1122
    and 1129) counts as not followed, as the pack's figures count it; without, it counts as
    the official code's draw of this run says."""
    from lm_eval.api.metrics import mean

    evaluation = load().evaluation
    responses = {r["prompt"]: r["response"] for r in _jsonl(RESPONSES)}
    results = []
    for doc in _jsonl(INPUTS):
        result = evaluation.process_results(doc, [responses[doc["prompt"]]])
        if coin_flips_fail and str(doc["key"]) in RANDOM_KEYS:
            result = _coin_flips_fail(doc, result)
        results.append(result)
    return {
        "prompt_level_strict_acc": mean([r["prompt_level_strict_acc"] for r in results]),
        "inst_level_strict_acc": evaluation.agg_inst_level_acc(
            [r["inst_level_strict_acc"] for r in results]
        ),
        "prompt_level_loose_acc": mean([r["prompt_level_loose_acc"] for r in results]),
        "inst_level_loose_acc": evaluation.agg_inst_level_acc(
            [r["inst_level_loose_acc"] for r in results]
        ),
    }


def _coin_flips_fail(doc: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    drawn = [i == RANDOM_INSTRUCTION for i in doc["instruction_id_list"]]
    out = dict(result)
    for level in ("strict", "loose"):
        followed = [
            f and not d for f, d in zip(result[f"inst_level_{level}_acc"], drawn, strict=True)
        ]
        out[f"inst_level_{level}_acc"] = followed
        out[f"prompt_level_{level}_acc"] = all(followed)
    return out


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_the_gpt4_file_replays_end_to_end_through_the_cli(gpt4: Cli) -> None:
    """reins -q ifeval scan, then replay of the GPT-4 file: the official verdicts in the ledger."""
    status = json.loads(gpt4("status", "--json").output)
    # 415 strict passes; 429 loose passes among the settled prompts, plus the 2 random ones
    assert status["counts"]["PASS"] == 415
    assert status["counts"]["REVIEW"] == 429 - 415 + len(RANDOM_KEYS)
    assert status["counts"]["TODO"] == 541 - 415 - 16


def test_report_json_gives_the_four_official_figures(gpt4: Cli) -> None:
    report = json.loads(gpt4("report", "--json").stdout)
    figures = report["quest_figures"]
    assert list(figures)[:4] == list(FIGURES)
    official = official_figures(coin_flips_fail=True)
    assert {name: figures[name]["value"] for name in FIGURES} == official
    # shown as lm-eval's results table shows them: four decimals
    assert {name: figures[name]["text"] for name in FIGURES} == {
        name: f"{value:.4f}" for name, value in official.items()
    }
    assert figures["prompts_counted"]["value"] == 541
    assert figures["coin_flips"]["value"] == len(RANDOM_KEYS)
    # the official code's own draw can only pass what the pack counts as not followed: the two
    # coin flips, at most two prompts or two instructions more
    drawn = official_figures(coin_flips_fail=False)
    instructions = sum(len(doc["instruction_id_list"]) for doc in _jsonl(INPUTS))
    for name in FIGURES:
        total = 541 if name.startswith("prompt") else instructions
        assert official[name] <= drawn[name] <= official[name] + 2 / total


def test_report_prints_the_four_official_figures_after_its_own_lines(gpt4: Cli) -> None:
    out = gpt4("report")
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    head = lines.index("ifeval figures")
    assert lines[0].startswith("TODO ") and head > 3
    official = official_figures(coin_flips_fail=True)
    shown = {line.split()[0]: line.split()[1] for line in lines[head + 1 :]}
    assert {name: shown[name] for name in FIGURES} == {
        name: f"{value:.4f}" for name, value in official.items()
    }
    assert lines[head + 1] == (
        "  prompt_level_strict_acc  0.7671  prompt-level strict accuracy (415 of 541 prompts)"
    )
    assert lines[head + 5].startswith("  prompts_counted")
    assert lines[head + 5].endswith("541  prompts counted (the latest judged answer of each)")


def test_items_not_judged_yet_are_not_counted(gpt4: Cli, tmp_path: Path) -> None:
    """A fresh ledger of the pack with three of the GPT-4 answers replayed: the figures count
    those three, and say how many were left out."""
    lines = list(replay_lines(INPUTS, RESPONSES))[:3]
    (tmp_path / "three.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8"
    )
    cli = replace(gpt4, folder=tmp_path)
    assert cli("scan").exit_code == 0
    assert cli("replay", "--from", "three.jsonl").exit_code in (0, 4)
    figures = json.loads(cli("report", "--json").stdout)["quest_figures"]
    assert figures["prompts_counted"]["value"] == 3
    assert figures["prompts_counted"]["note"].endswith("; 538 not judged yet")
    assert figures["prompt_level_strict_acc"]["note"].endswith(" of 3 prompts")
