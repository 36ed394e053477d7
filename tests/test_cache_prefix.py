"""The shared prefix: every prompt of a quest opens with the same system text, byte for byte.

A provider's prompt cache serves only an exact prefix, so what every item shares (the manual,
the worked examples) must come first and never move: not between items, not between the turns
of one item, not after a FAIL whose root cause has coaching. What depends on the item goes after
it, in the user text, the feedback last (feedback parity).
"""

from __future__ import annotations

import dataclasses
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from reins.cli import make_group
from reins.quest import Quest, Seed
from reins.quests.find import load_quest
from reins.store import Attempt, AttemptKind, Item, State
from reins.turn import compose
from reins.turn.compose import FEEDBACK_HEADER, PREVIOUS_HEADER

# The Python emails quest (coaching, no examples) and a declared pack (manual, examples, coaching).
QUEST_REFS = ("emails", "news5w1h")


@cache
def quest_of(ref: str) -> Quest:
    return load_quest(ref)


@cache
def items_of(ref: str) -> tuple[Item, ...]:
    seeds = [s if isinstance(s, Seed) else Seed(*s) for s in quest_of(ref).seed([])]
    return tuple(Item(s.key, State.TODO, 0, s.payload) for s in seeds)


def judged_fail(key: str, turn: int, cause: str, feedback: str, submission: str) -> Attempt:
    return Attempt(
        key, turn, AttemptKind.JUDGED, "d", State.TODO, turn, "t", outcome="FAIL",
        root_cause=cause, feedback=feedback, submission=submission,
    )  # fmt: skip


def generation_error(key: str, turn: int) -> Attempt:
    return Attempt(key, turn, AttemptKind.GENERATION_ERROR, "d", State.TODO, 0, "t", error="x")


@st.composite
def logs(draw: st.DrawFn, ref: str, key: str) -> list[Attempt]:
    """A log of judged FAILs (root causes the quest coaches, and others) and generation errors."""
    quest = quest_of(ref)
    causes = sorted({*quest.coaching, *(r.id for r in quest.rules)})
    log: list[Attempt] = []
    for turn in range(1, draw(st.integers(0, 4)) + 1):
        if draw(st.booleans()):
            cause = draw(st.sampled_from(causes))
            feedback = f"{key} -> FAIL\nroot cause: {cause}\n" + draw(st.text(max_size=40))
            log.append(judged_fail(key, turn, cause, feedback, draw(st.text(max_size=40))))
        else:
            log.append(generation_error(key, turn))
    return log


@st.composite
def cases(draw: st.DrawFn) -> tuple[str, Item, list[Attempt], str]:
    ref = draw(st.sampled_from(QUEST_REFS))
    item = draw(st.sampled_from(items_of(ref)))
    log = draw(logs(ref, item.key))
    policy = draw(st.sampled_from(["facts", "facts+previous", "fresh"]))
    return ref, dataclasses.replace(item, turns=len(log)), log, policy


def shared_prefix(ref: str) -> str:
    """The system text of the quest's first item on its first turn."""
    quest = quest_of(ref)
    return compose(quest, items_of(ref)[0], []).system


@settings(max_examples=300, deadline=None)
@given(case=cases())
def test_every_prompt_of_a_quest_opens_with_the_same_system_text(
    case: tuple[str, Item, list[Attempt], str],
) -> None:
    ref, item, log, policy = case
    quest = quest_of(ref)
    prompt = compose(quest, item, log, policy=policy)
    shared = shared_prefix(ref)
    assert shared and prompt.system.encode() == shared.encode()
    assert prompt.text().startswith(shared + "\n\n")
    # After the prefix, the item; the coaching and the feedback of its last FAIL after that.
    assert prompt.user.startswith(quest.render(item))
    judged = [a for a in log if a.kind is AttemptKind.JUDGED]
    coaching = quest.coaching.get(judged[-1].root_cause or "") if judged else None
    if coaching and policy != "fresh":
        # facts+previous puts the failed submission between the two
        after = f"\n\n{coaching}\n\n{'' if policy == 'facts' else PREVIOUS_HEADER}"
        assert after in prompt.user and FEEDBACK_HEADER in prompt.user.split(after, 1)[1]
        assert coaching not in prompt.system
    if judged and policy != "fresh":
        assert prompt.user.endswith(judged[-1].feedback)  # feedback parity: the same bytes


@settings(max_examples=100, deadline=None)
@given(ref=st.sampled_from(QUEST_REFS), data=st.data())
def test_the_turns_of_one_item_share_the_system_text_and_the_item(
    ref: str, data: st.DataObject
) -> None:
    quest = quest_of(ref)
    item = data.draw(st.sampled_from(items_of(ref)))
    log = data.draw(logs(ref, item.key))
    prompts = [
        compose(quest, dataclasses.replace(item, turns=n), log[:n]) for n in range(len(log) + 1)
    ]
    assert {p.system for p in prompts} == {shared_prefix(ref)}
    first = prompts[0].user
    assert all(p.user.startswith(first) for p in prompts)  # the item's text, then what failed


@pytest.fixture
def emails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("REINS_DRIVER", "ann")
    monkeypatch.delenv("REINS_QUEST", raising=False)
    monkeypatch.delenv("REINS_LEDGER", raising=False)
    runner = CliRunner()
    assert runner.invoke(make_group(), ["-q", "emails", "scan"]).exit_code == 0
    return runner


def next_json(runner: CliRunner, *args: str) -> dict[str, Any]:
    out = runner.invoke(make_group(), ["-q", "emails", "next", "--json", *args])
    assert out.exit_code == 0, out.output
    data: dict[str, Any] = json.loads(out.stdout)
    return data


def test_next_prints_the_same_system_text_after_a_coached_fail_as_for_a_fresh_item(
    emails: CliRunner,
) -> None:
    first = next_json(emails)
    assert first["key"] == "01-meeting" and first["turn"] == 1
    wrong = '{"addresses": ["priya.raman@northwind-labs.example", "bob@example.org"]}'
    failed = emails.invoke(
        make_group(), ["-q", "emails", "submit", "--key", "01-meeting"], input=wrong
    )
    assert failed.exit_code == 4, failed.output
    retry = next_json(emails)
    other = next_json(emails, "--driver", "bob")  # another item, on its first turn
    assert (retry["key"], retry["turn"], other["key"]) == ("01-meeting", 2, "02-newsletter")
    assert retry["system"] == first["system"] == other["system"]
    coaching = quest_of("emails").coaching["address-in-source"]
    assert coaching in retry["user"] and coaching not in retry["system"]
    assert retry["user"].startswith(first["user"])
    assert retry["user"].endswith(failed.stdout)  # the FAIL as submit printed it, last
