"""Golden driver swap: for one ledger state, `reins next` prints what the loop sends, byte for byte.

Whichever driver recorded the turns so far — the loop, a person through `next`/`submit`, a replay
— and in whichever process, the next prompt is the same value: compose reads only the log.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reins import SQLiteStore
from reins.errors import BackendError
from reins.testing import FakeBackend
from reins.turn import call_seed
from tests.kit import ROOT, Cli
from tests.kit.loopkit import loop, make_ledger, peek_loop_prompt

# The tiny quest's prompt for item "a" after one judged FAIL on "bad": the bytes are pinned here,
# so a change to compose or to the verdict text is a deliberate one.
GOLDEN_SYSTEM = "Answer in one word."
GOLDEN_USER = (
    "Say 'good' for a.\n\n"
    "Never answer 'bad'.\n\n"
    "## Your last submission failed the gate\n\n"
    "a -> FAIL on answer 1 of 3 (state TODO, 2 answers left)\n"
    "  FAIL. Root cause: not-bad (FAIL).\n"
    "    not-bad at answer\n"
    '      expected: "good"\n'
    '      actual:   "bad"\n'
    "  To flip the verdict to PASS, clear not-bad.\n"
)


@pytest.fixture
def ledger_path(tmp_path: Path, cli: Cli) -> Path:
    """A ledger of the tiny quest holding a; alice drives ``cli``."""
    cli.driver = "alice"
    return make_ledger(tmp_path / "tiny.reins.db", ["a"])


def next_prompt(cli: Cli, path: Path) -> dict[str, Any]:
    """What `reins next --json` prints; alice's lease is released so other drivers may go on."""
    out = cli("next", "--json")
    assert out.exit_code == 0, out.output
    with SQLiteStore.open(path) as led:
        led.release_all("alice")
    data: dict[str, Any] = json.loads(out.stdout)
    return data


def assert_same(printed: dict[str, Any], sent: Any) -> None:
    assert printed["system"].encode() == sent.system.encode()
    assert printed["user"].encode() == sent.user.encode()
    assert printed["prompt_digest"] == sent.digest()


def by_loop(path: Path, answer: str | type[BaseException]) -> Any:
    fake = FakeBackend([answer])
    loop(path, fake, max_turns=1, breaker=None)
    return fake.calls[0].prompt


def by_hand(cli: Cli, path: Path, answer: str, exits: tuple[int, ...] = (0, 4)) -> str:
    out = cli("submit", "--key", "a", input=answer)
    assert out.exit_code in exits, out.output
    return str(out.stdout)


def test_after_one_fail_the_prompt_is_the_golden_one_under_every_driver(
    ledger_path: Path, cli: Cli
) -> None:
    by_loop(ledger_path, "bad")
    printed = next_prompt(cli, ledger_path)
    sent, seed = peek_loop_prompt(ledger_path)
    assert (printed["system"], printed["user"]) == (GOLDEN_SYSTEM, GOLDEN_USER)
    assert_same(printed, sent)
    assert seed == call_seed("a", 2)


def test_a_quest_started_by_the_loop_is_continued_by_hand_with_the_same_prompts(
    ledger_path: Path, cli: Cli
) -> None:
    printed = next_prompt(cli, ledger_path)
    assert_same(printed, by_loop(ledger_path, "bad"))  # turn 1: the loop
    printed = next_prompt(cli, ledger_path)
    assert_same(printed, peek_loop_prompt(ledger_path)[0])
    by_hand(cli, ledger_path, "bad")  # turn 2: by hand, answering what next printed
    printed = next_prompt(cli, ledger_path)
    assert printed["turn"] == 3 and "FAIL on answer 2 of 3" in printed["user"]
    assert_same(printed, by_loop(ledger_path, "good"))  # turn 3: the loop again
    with SQLiteStore.open(ledger_path) as led:
        log = led.snapshot("a")[1]
        assert [a.driver for a in log] == ["loop", "alice", "loop"]
        assert [a.notes.via for a in log] == ["loop", "manual", "loop"]
        assert log[-1].outcome == "PASS"


def test_a_quest_started_by_hand_is_continued_by_the_loop_with_the_same_prompts(
    ledger_path: Path, cli: Cli
) -> None:
    printed = next_prompt(cli, ledger_path)
    submitted = by_hand(cli, ledger_path, "bad")
    printed = next_prompt(cli, ledger_path)
    assert printed["user"].endswith(submitted)  # feedback parity: what submit printed
    assert_same(printed, by_loop(ledger_path, BackendError))  # a generation error …
    again = next_prompt(cli, ledger_path)
    assert (again["system"], again["user"]) == (
        printed["system"],
        printed["user"],
    )  # … changes no text
    assert again["turn"] == printed["turn"] + 1
    assert_same(again, by_loop(ledger_path, "meh"))


@pytest.mark.slow  # a second process
def test_the_prompt_is_the_same_after_a_process_restart(ledger_path: Path, cli: Cli) -> None:
    by_hand(cli, ledger_path, "bad")
    by_loop(ledger_path, "so bad")  # a second FAIL, with its own fact
    by_loop(ledger_path, "explode")  # prepare raises: a judge error, which no prompt sees
    printed = next_prompt(cli, ledger_path)
    script = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from tests.kit.loopkit import peek_loop_prompt\n"
        "prompt, seed = peek_loop_prompt(Path(sys.argv[1]))\n"
        "print(json.dumps({'system': prompt.system, 'user': prompt.user, 'seed': seed}))\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", script, str(ledger_path)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        cwd=ROOT,
    )
    other = json.loads(out.stdout)
    assert (other["system"], other["user"]) == (printed["system"], printed["user"])
    assert "a -> FAIL on answer 2 of 3 (state TODO, 1 answer left)\n" in other["user"]
    assert 'actual:   "so bad"' in other["user"]
    assert "explode" not in other["user"] and "quest.prepare" not in other["user"]
    assert other["seed"] == call_seed("a", 4) == peek_loop_prompt(ledger_path)[1]


Step = tuple[str, str]
STEPS = st.lists(
    st.tuples(
        st.sampled_from(["loop", "hand", "replay"]),
        st.sampled_from(["bad", "explode", "outage"]),  # explode: prepare raises, a judge error
    ),
    min_size=1,
    max_size=5,
)


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(steps=STEPS)
def test_any_mix_of_drivers_gives_the_same_next_prompt_to_each(
    steps: list[Step], tmp_path_factory: pytest.TempPathFactory, cli: Cli
) -> None:
    folder = tmp_path_factory.mktemp("swap")
    cli.folder, cli.driver = folder, "alice"
    path = make_ledger(folder / "tiny.reins.db", ["a"])
    drivers: dict[str, Callable[[str], object]] = {
        "loop": lambda answer: by_loop(path, BackendError if answer == "outage" else answer),
        "hand": lambda answer: by_hand(
            cli,
            path,
            "bad" if answer == "outage" else answer,
            (10,) if answer == "explode" else (4, 11),  # a judge error; a FAIL, or DONE
        ),
        "replay": lambda answer: replay_one(cli, path, "bad" if answer == "outage" else answer),
    }
    for driver, answer in steps:
        with SQLiteStore.open(path) as led:
            if led.get("a").state.terminal:
                break
        printed = next_prompt(cli, path)
        sent, seed = peek_loop_prompt(path)
        assert_same(printed, sent)
        assert seed == call_seed("a", printed["turn"])
        drivers[driver](answer)


def replay_one(cli: Cli, path: Path, answer: str) -> None:
    file = path.with_name("outputs.jsonl")
    file.write_text(json.dumps({"key": "a", "output": answer}) + "\n")
    out = cli("replay", "--from", str(file))
    assert out.exit_code == (10 if answer == "explode" else 0), out.output  # 10: a judge error
