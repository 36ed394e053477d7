"""``reins loop`` driving a coding agent (a scripted ``cmd:`` stand-in, no model) on the coding
pack and on small quests of the tests' own: FAIL → facts → PASS in a worktree per item, the
branch kept, the user's checkout untouched, the base fixed in the ledger, budgets and hangs
enforced by a kill, and eight items at once in eight worktrees."""

from __future__ import annotations

import itertools
import json
import os
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from reins import SQLiteStore, State
from reins.errors import Exit
from reins.store import AttemptKind
from tests.kit.codingkit import (
    FILE_HOLDS_KEY,
    agent,
    checkout_state,
    cli,
    events,
    git,
    passes_reproduce,
    quest_repo,
)

# Wrong on the first try; right once the prompt carries the gate's facts on the failing test.
PACK_AGENT = r"""
import json, re, sys
prompt = sys.stdin.read()
name = re.search(r"Implement textkit\.(\w+)", prompt).group(1)
right = {
    "slugify": "return re.sub(r'[^a-z0-9]+', '-', text.lower()).strip('-')",
    "reverse_words": "return ' '.join(reversed(words(text)))",
    "is_palindrome": "s = [c.lower() for c in text if c.isalnum()]\n    return s == s[::-1]",
    "count_vowels": "return sum(c in 'aeiouAEIOU' for c in text)",
    "initials": "return ''.join(w[0].upper() + '.' for w in name.split())",
}
facts = f"test tests/test_textkit_tasks.py::test_{name}" in prompt and "failed:" in prompt
body = right[name] if facts else "return None  # a first guess"
path = "textkit/__init__.py"
src = open(path).read()
# the function's body: from the end of its docstring to the next function (or the end)
function = re.compile("(def " + name + r"\(.*?\x22\x22\x22\n)(.*?)(\n*)(?=\ndef |\Z)", re.S)
src = function.sub(lambda m: m.group(1) + "    " + body + m.group(3), src)
open(path, "w").write(src)
print(json.dumps({"reins": {"input_tokens": 1000, "output_tokens": 50, "cost": 0.002}}))
print(("Fixed" if facts else "Wrote") + f" textkit.{name}.")
for line in prompt.splitlines():  # what the prompt told it, for the test to read
    if "assert " in line:
        print("told:", line.strip())
"""


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in ("REINS_QUEST", "REINS_LEDGER", "REINS_MODEL"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def playground(here: Path) -> Path:
    out = cli("new", "--pack", "coding", "play")
    assert out.exit_code == 0, out.output
    assert cli("-q", "play", "scan").exit_code == 0
    return here / "play"


def test_fail_then_facts_then_pass_for_every_item_of_the_coding_pack(here: Path) -> None:
    play = playground(here)
    before = checkout_state(play)
    script = agent(here / "agent.py", PACK_AGENT)
    out = cli("-q", "play", "loop", "--model", f"cmd:{script}", "-c", "2", "--json")
    assert out.exit_code == 0, out.output + out.stderr
    turns = [e for e in events(out) if e["event"] == "turn"]
    assert sorted((e["key"], e["turn"], e["outcome"]) for e in turns) == sorted(
        (key, turn, outcome)
        for key in ("slugify", "reverse_words", "is_palindrome", "count_vowels", "initials")
        for turn, outcome in ((1, "FAIL"), (2, "PASS"))
    )
    assert all(e["backend"] == "cmd" and e["input_tokens"] == 1000 for e in turns)
    # The second prompt of an item quoted the failing test and its assertion (the agent said
    # what it was told in its final message).
    with SQLiteStore.open(here / "play.reins.db") as led:
        _, log = led.snapshot("slugify")
    assert "told:" not in (log[0].submission or "")
    assert "assert None == 'hello-world'" in (log[1].submission or "")
    # The user's checkout, index and branches are as they were; each PASS kept its branch.
    assert checkout_state(play) == before
    fixed = git(play, "show", "reins/slugify:textkit/__init__.py")
    assert "return re.sub(r'[^a-z0-9]+', '-', text.lower()).strip('-')" in fixed
    assert git(play, "diff", "--name-only", "master", "reins/slugify").split() == [
        "textkit/__init__.py"
    ]
    # keep = "failed": a PASS's worktree is gone (its branch holds the work).
    assert not (here / ".reins-worktrees" / "play" / "slugify").exists()
    listed = git(play, "worktree", "list", "--porcelain").splitlines()
    assert [ln for ln in listed if ln.startswith("worktree ")] == [f"worktree {play.resolve()}"]
    # Every PASS passes again from its recorded patch alone, on a fresh clone of the base.
    assert passes_reproduce(play, here / "play.reins.db", play, here / "replay") == 5


def test_a_pass_exports_its_branch_commit_base_and_patch(here: Path) -> None:
    play = playground(here)
    script = agent(here / "agent.py", PACK_AGENT)
    model = f"cmd:{script}"
    out = cli("-q", "play", "loop", "--model", model, "--max-items", "1")
    assert out.exit_code == 0, out.output
    records = [json.loads(x) for x in (here / "play-results.jsonl").read_text().splitlines()]
    slug = next(r for r in records if r["key"] == "slugify")
    assert slug["state"] == "PASS"
    work = slug["workspace"]
    assert work["branch"] == "reins/slugify"
    assert work["commit"] == git(play, "rev-parse", "reins/slugify").strip()
    assert work["base"] == git(play, "rev-parse", "master").strip()
    assert work["patch"].startswith("diff --git a/textkit/__init__.py b/textkit/__init__.py\n")
    assert work["patch"] == git(play, "diff", "--binary", "--no-renames", "master", "reins/slugify")


def test_the_base_is_fixed_in_the_ledger_and_a_moved_one_is_refused(here: Path) -> None:
    play = playground(here)
    script = agent(here / "agent.py", PACK_AGENT)
    model = f"cmd:{script}"
    assert cli("-q", "play", "loop", "--model", model, "--max-items", "1").exit_code == 0
    (play / "NEWS.md").write_text("a commit of yours\n")
    git(play, "add", "NEWS.md")
    git(play, "commit", "--quiet", "-m", "moves master")
    out = cli("-q", "play", "loop", "--model", model)
    assert out.exit_code == Exit.USAGE
    assert "the workspace base moved" in out.stderr and 'set [workspace] base = "' in out.stderr


def test_a_text_backend_is_refused_on_a_workspace_quest_and_an_agent_on_a_text_one(
    here: Path,
) -> None:
    playground(here)
    out = cli("-q", "play", "loop", "--model", "ollama:llama3")
    assert out.exit_code == Exit.USAGE and "is a text backend" in out.stderr
    assert cli("-q", "example", "scan").exit_code == 0
    out = cli("-q", "example", "loop", "--model", "cmd:true")
    assert out.exit_code == Exit.USAGE and "'cmd' is a coding agent" in out.stderr


def test_reins_backends_lists_the_agents_apart_from_the_text_backends() -> None:
    out = cli("backends", "--agents", "--json")
    rows = {r["name"]: r for r in json.loads(out.stdout)}
    assert rows["cmd"]["target"] == "reins.coders.cmd:CmdAgent" and "env" in rows["cmd"]["options"]
    assert "ollama" not in rows
    [line] = [ln for ln in cli("backends").stdout.splitlines() if ln.startswith("coding agents")]
    assert line.startswith("coding agents, for a quest with a [workspace]: ")
    assert {"claude-code", "cmd", "codex"} <= set(line.split(": ", 1)[1].split(" (")[0].split(", "))


APPENDS = """
import sys
with open("notes.txt", "a") as f:
    f.write("a try\\n")
print("appended")
"""


@pytest.mark.parametrize(("retry", "lines"), [("continue", 3), ("fresh", 1)])
def test_a_retry_continues_the_last_try_s_worktree_or_starts_fresh_from_the_base(
    here: Path, retry: str, lines: int
) -> None:
    quest_repo(here / "q", ["k"], FILE_HOLDS_KEY, extra=f'retry = "{retry}"\n')
    assert cli("-q", "q", "scan").exit_code == 0
    script = agent(here / "agent.py", APPENDS)
    out = cli("-q", "q", "loop", "--model", f"cmd:{script}")
    assert out.exit_code == 0, out.output
    with SQLiteStore.open(here / "q.reins.db") as led:
        item, log = led.snapshot("k")
    assert item.state is State.DONE and [a.outcome for a in log] == ["FAIL"] * 3
    assert git(here / "q", "show", "reins/q/k:notes.txt") == "a try\n" * lines
    # keep = "failed": a DONE item's worktree stays for a person to look at.
    assert (here / ".reins-worktrees" / "q" / "k" / "notes.txt").exists()


SPENDS = """
import json, sys, time
open(sys.argv[1], "a").write("started\\n")
print("working", flush=True)
while True:
    print(json.dumps({"reins": {"input_tokens": 90, "output_tokens": 10}}), flush=True)
    time.sleep(0.05)
"""


def test_an_agent_at_the_item_s_budget_is_killed_and_the_item_set_aside_for_good(
    here: Path,
) -> None:
    quest_repo(here / "q", ["k"], FILE_HOLDS_KEY)
    assert cli("-q", "q", "scan").exit_code == 0
    starts = here / "starts.txt"
    script = agent(here / "agent.py", SPENDS)
    model = f"cmd:{script} {starts}"
    # The agent counts its starts in a file of the test's: unconfined, so that it can.
    out = cli("-q", "q", "loop", "--model", model, "--max-item-tokens", "300", "--json",
              "--sandbox", "none")  # fmt: skip
    assert out.exit_code == Exit.SET_ASIDE, out.output
    aside = [e for e in events(out) if e["event"] == "set_aside"]
    assert aside and "the item's budget of 300 tokens is spent" in aside[0]["error"]
    with SQLiteStore.open(here / "q.reins.db") as led:
        item, log = led.snapshot("k")
    assert item.state is State.TODO and item.tries == 0
    assert [a.kind for a in log] == [AttemptKind.GENERATION_ERROR]
    tokens = (log[0].usage.input_tokens or 0) + (log[0].usage.output_tokens or 0)
    assert tokens >= 300 and "killed" in (log[0].error or "")
    # The next run reads what the item cost from the log: it spends nothing more on it.
    again = cli("-q", "q", "loop", "--model", model, "--max-item-tokens", "300",
                "--sandbox", "none")  # fmt: skip
    assert again.exit_code == Exit.SET_ASIDE
    assert starts.read_text() == "started\n"


def test_agents_at_the_run_s_budget_are_killed_and_the_run_stops(here: Path) -> None:
    quest_repo(here / "q", ["k1", "k2"], FILE_HOLDS_KEY)
    assert cli("-q", "q", "scan").exit_code == 0
    script = agent(here / "agent.py", SPENDS)
    out = cli(
        "-q", "q", "loop", "--model", f"cmd:{script} {here / 's'}", "-c", "2",
        "--max-tokens", "500", "--json", "--sandbox", "none",
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    summary = events(out)[-1]
    assert summary["reason"] == "max-tokens" and summary["generation_errors"] >= 1
    assert summary["input_tokens"] + summary["output_tokens"] >= 500
    with SQLiteStore.open(here / "q.reins.db") as led:
        snaps = [led.snapshot(k) for k in ("k1", "k2")]
    assert all(a.kind is AttemptKind.GENERATION_ERROR for _, log in snaps for a in log)
    assert all(item.state is State.TODO and item.tries == 0 for item, _ in snaps)


HANGS = """
import time
print("thinking", flush=True)
time.sleep(300)
"""


def test_a_hung_agent_is_killed_a_generation_error_and_set_aside_after_n(here: Path) -> None:
    quest_repo(here / "q", ["k"], FILE_HOLDS_KEY)
    assert cli("-q", "q", "scan").exit_code == 0
    script = agent(here / "agent.py", HANGS)
    out = cli(
        "-q", "q", "loop", "--model", f"cmd:{script}", "--agent-idle", "1",
        "--set-aside-after", "2",
    )  # fmt: skip
    assert out.exit_code == Exit.SET_ASIDE, out.output
    with SQLiteStore.open(here / "q.reins.db") as led:
        item, log = led.snapshot("k")
    assert item.tries == 0 and [a.kind for a in log] == [AttemptKind.GENERATION_ERROR] * 2
    assert "no output for 1 s (--agent-idle): killed" in (log[0].error or "")


BARRIER = """
import os, sys, time
key = os.path.basename(os.getcwd())
room = sys.argv[1]
open(os.path.join(room, key), "w").close()
deadline = time.monotonic() + 120
while len(os.listdir(room)) < 8 and time.monotonic() < deadline:
    time.sleep(0.05)
open(key + ".txt", "w").write(key)
print(f"{len(os.listdir(room))} agents were at work at once")
"""


def test_eight_at_once_work_in_eight_workspaces_each_on_its_own_branch(here: Path) -> None:
    """Each agent waits until all eight are at work: only eight workspaces at once pass."""
    keys = [f"k{i}" for i in range(8)]
    quest_repo(here / "q", keys, FILE_HOLDS_KEY)
    assert cli("-q", "q", "scan").exit_code == 0
    before = checkout_state(here / "q")
    room = here / "room"
    room.mkdir()
    script = agent(here / "agent.py", BARRIER)
    # The agents meet in a folder of the test's: unconfined, so that they can.
    out = cli("-q", "q", "loop", "--model", f"cmd:{script} {room}", "-c", "8", "--json",
              "--sandbox", "none")  # fmt: skip
    assert out.exit_code == 0, out.output
    turns = [e for e in events(out) if e["event"] == "turn"]
    assert sorted(e["key"] for e in turns) == keys and {e["outcome"] for e in turns} == {"PASS"}
    for key in keys:
        changed = git(here / "q", "diff", "--name-only", "main", f"reins/q/{key}").split()
        assert changed == [f"{key}.txt"]  # no cross-talk between workspaces
    with SQLiteStore.open(here / "q.reins.db") as led:
        said = [led.snapshot(k)[1][-1].submission or "" for k in keys]
    assert all(s.startswith("8 agents were at work at once") for s in said)
    assert checkout_state(here / "q") == before
    assert os.listdir(here / ".reins-worktrees" / "q") == [".reins"]
    q = here / "q"
    assert passes_reproduce(q, here / "q.reins.db", q, here / "replay") == 8


SLEEPS = """
import os, time
key = os.path.basename(os.getcwd())
time.sleep(0.3)
open(key + ".txt", "w").write(key)
"""
SLOW_GATE = FILE_HOLDS_KEY.replace('"import sys; ', '"import sys, time; time.sleep(1); ')


def at(stamp: str | None) -> datetime:
    return datetime.fromisoformat(stamp or "")


def first_turns(here: Path, *args: str) -> list[Any]:
    """Each item's one turn (a PASS) of a loop run at -c 1 with a slow gate, by its start."""
    keys = ["a", "b", "c"]
    quest_repo(here / "q", keys, SLOW_GATE)
    assert cli("-q", "q", "scan").exit_code == 0
    script = agent(here / "agent.py", SLEEPS)
    out = cli("-q", "q", "loop", "--model", f"cmd:{script}", "-c", "1", *args)
    assert out.exit_code == 0, out.output
    with SQLiteStore.open(here / "q.reins.db") as led:
        logs = [led.snapshot(k)[1] for k in keys]
    assert all(len(log) == 1 and log[0].outcome == "PASS" for log in logs)
    return sorted((log[0] for log in logs), key=lambda a: at(a.started_at))


def test_an_item_is_judged_while_the_next_item_s_agent_runs_one_agent_at_a_time(
    here: Path,
) -> None:
    """At -c 1, one agent at a time; but an item's judgment (a slow gate) does not hold the
    next item's agent back: each item's turn starts before the previous one is recorded."""
    turns = first_turns(here)
    for before, after in itertools.pairwise(turns):
        agent_ended = at(before.started_at) + timedelta(seconds=before.usage.latency or 0)
        assert at(after.started_at) >= agent_ended - timedelta(milliseconds=5), (before, after)
        assert at(after.started_at) < at(before.recorded_at), (before, after)


def test_unconfined_agents_never_run_while_an_item_is_judged(here: Path) -> None:
    """An unconfined agent could rewrite the judge's tree of a judgment under way: at -c 1,
    each turn starts only once the previous one is recorded."""
    turns = first_turns(here, "--sandbox", "none")
    for before, after in itertools.pairwise(turns):
        assert at(after.started_at) >= at(before.recorded_at), (before, after)


def test_batch_rounds_refuse_a_workspace_quest_and_touch_nothing(here: Path) -> None:
    assert cli("new", "--pack", "coding", "play").exit_code == 0
    assert cli("-q", "play", "scan").exit_code == 0
    before = (here / "play.reins.db").read_bytes()
    out = cli("-q", "play", "loop", "--batch", "--model", "openai:gpt-4.1-mini")
    assert out.exit_code == Exit.USAGE, out.output
    assert "[workspace]" in out.output and "coding agent" in out.output
    assert (here / "play.reins.db").read_bytes() == before
    assert not (here / ".reins-worktrees").exists()
