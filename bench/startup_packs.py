"""The quests of ``bench_startup.py --packs``: documents and a Python quest beside the counter.

The counter quest is as light as a quest gets, so what it shows is reins' own start-up. An
agent's quest is more often a pack or a Python quest with real checks, and loading it is part
of every ``next``, ``submit`` and ``status``. Three are timed here, each on its own ledger:

- ``emails``: the Python quest ``reins.quests.emails`` (its gate: reins.verify.mailaddr);
- ``emails pack``: the same quest written as documents (quest.toml + gate.md, a JSON Schema
  rule and a worked example), from a copy of ``src/reins/packs/emails``;
- ``ifeval``: the IFEval pack, ``next`` and ``status`` only (a ``submit`` loads Google's
  official checkers, a second or more; it is timed a few times apart, not in the rounds).

The e-mail texts are the pack's samples copied under numbered names until there are enough
items; every submit answers an address no text holds, a FAIL with tries left.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import reins

PACKS = Path(reins.__file__).parent / "packs"
WRONG = '{"addresses": ["nobody@nowhere.example"]}\n'


@dataclass
class PackQuest:
    """A quest timed with ``--packs``: how it is named, its ledger and what a submit sends."""

    name: str
    ref: str
    ledger: Path
    scan: list[str]  # the arguments of `reins scan`
    keys: list[str]  # items for the submits, none of which `next` leases first
    answer: Path | None  # None: no submit in the rounds
    items: int = 0


def emails_texts(folder: Path, count: int) -> list[str]:
    """``count`` e-mail texts in ``folder`` (the pack's samples, numbered); their keys."""
    samples = sorted((PACKS / "emails" / "samples").glob("*.txt"))
    folder.mkdir(parents=True, exist_ok=True)
    keys = []
    for i in range(count):
        source = samples[i % len(samples)]
        key = f"{i:04d}-{source.stem}"
        shutil.copyfile(source, folder / f"{key}.txt")
        keys.append(key)
    return keys


def pack_quests(work: Path, count: int) -> list[PackQuest]:
    """The three quests, their items written under ``work`` (ledgers not yet scanned)."""
    answer = work / "answers" / "wrong-address.json"
    answer.write_text(WRONG, encoding="utf-8")
    texts = work / "emails-texts"
    keys = emails_texts(texts, count)
    pack = work / "emails-pack"
    shutil.copytree(PACKS / "emails", pack, ignore=shutil.ignore_patterns("samples"))
    emails_texts(pack / "samples", count)
    # `next` leases the oldest items: the submits take the newest half, in reverse.
    tail = list(reversed(keys[count // 2 :]))
    return [
        PackQuest("emails", "emails", work / "emails.reins.db", [str(texts)], tail, answer),
        PackQuest("emails pack", str(pack), work / "emails-pack.reins.db", [], list(tail), answer),
        PackQuest("ifeval", "ifeval", work / "ifeval.reins.db", [], [], None),
    ]
