"""``reins hook``: Claude Code's Stop hook on recorded payloads, and install/uninstall."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reins import SQLiteStore
from reins.host.hook import Blocks, Payload, Standing, decide
from reins.store.model import Item, State
from tests.kit import TINY_REF, Cli
from tests.kit.loopkit import make_ledger

# Payloads as Claude Code sends them (its hooks reference: the Stop event's input).
FIRST_STOP = {
    "session_id": "abc123",
    "transcript_path": "/home/ann/.claude/projects/demo/abc123.jsonl",
    "cwd": "/home/ann/demo",
    "permission_mode": "default",
    "hook_event_name": "Stop",
    "stop_hook_active": False,
}
CONTINUED_STOP = {**FIRST_STOP, "stop_hook_active": True}


def hook(
    folder: Path, payload: dict[str, Any] | str, *args: str
) -> subprocess.CompletedProcess[str]:
    """``reins hook stop`` as Claude Code runs it: a process, the payload on stdin."""
    return run_hook([sys.executable, "-m", "reins.cli", "--quest", TINY_REF, "hook", "stop", *args],
                    folder, payload)  # fmt: skip


def run_hook(
    command: list[str], cwd: Path, payload: dict[str, Any] | str, **env: str
) -> subprocess.CompletedProcess[str]:
    """``command`` run in ``cwd`` with the payload on stdin; ``env`` adds to the (clean)
    environment."""
    text = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run(
        command,
        input=text,
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "REINS_DRIVER": "ann", **env},
        check=False,
    )


def blocked(run: subprocess.CompletedProcess[str]) -> str:
    """The reason of a block; fails if the hook let the agent stop."""
    assert run.returncode == 0, run.stderr
    decision = json.loads(run.stdout)
    assert set(decision) == {"decision", "reason"} and decision["decision"] == "block"
    return str(decision["reason"])


def allowed(run: subprocess.CompletedProcess[str]) -> str:
    """Why the hook let the agent stop (its stderr); fails if it blocked or exited non-zero."""
    assert run.returncode == 0 and run.stdout == "", (run.returncode, run.stdout)
    return run.stderr


def noticed(run: subprocess.CompletedProcess[str]) -> str:
    """The message shown to the user when the hook let the agent stop on a failure of its own
    (Claude Code's systemMessage); fails if it blocked, said nothing or exited non-zero."""
    assert run.returncode == 0, run.stderr
    output = json.loads(run.stdout)
    assert set(output) == {"systemMessage"}, output
    return str(output["systemMessage"])


def record(ledger: Path, key: str, answer: str) -> None:
    from reins.turn.submit import submit
    from tests.kit import TINY as quest

    with SQLiteStore.open(ledger) as led:
        submit(led, quest, key, answer, driver="ann")


# -- the decision, as a function --------------------------------------------------------


def standing(**overrides: Any) -> Standing:
    values: dict[str, Any] = {
        "total": 3, "remaining": 2, "free": 2, "turns": 5, "mine": None, "board": ("[ ] b",),
    }  # fmt: skip
    return Standing(**{**values, **overrides})


def test_the_decision_blocks_while_work_is_left_and_counts_only_stalled_continuations() -> None:
    first, again = Payload("s"), Payload("s", stop_hook_active=True)
    one = decide(standing(), first, None, max_blocks=3)
    assert one.block and one.blocks == Blocks(1, 5)
    assert "block 1 of 3 in a row without a new recorded turn" in one.reason
    two = decide(standing(), again, one.blocks, max_blocks=3)
    assert two.block and two.blocks == Blocks(2, 5)
    moved = decide(standing(turns=6), again, two.blocks, max_blocks=3)
    assert moved.block and moved.blocks == Blocks(1, 6)  # a new turn is progress
    fresh = decide(standing(), first, Blocks(3, 5), max_blocks=3)
    assert fresh.block and fresh.blocks == Blocks(1, 5)  # a fresh stop starts over
    capped = decide(standing(), again, Blocks(3, 5), max_blocks=3)
    assert not capped.block and "blocked 3 time(s) in a row" in capped.reason


def test_the_decision_lets_the_agent_stop_when_nothing_is_left_for_it() -> None:
    stop = Payload("s")
    assert not decide(standing(remaining=0, free=0), stop, None, max_blocks=3).block
    others = decide(standing(free=0), stop, None, max_blocks=3)
    assert not others.block and "leased to other drivers" in others.reason
    mine = Item("a", State.TODO, 1, lease_owner="mcp-1", lease_expires=1e12)
    assert decide(standing(free=0, mine=mine), stop, None, max_blocks=3).block
    budget = decide(standing(turns=10), stop, None, max_blocks=3, max_turns=10)
    assert not budget.block and "hook_max_turns 10" in budget.reason


# -- the hook, as Claude Code runs it ------------------------------------------------------


@pytest.mark.slow  # the hook runs as a process, as Claude Code runs it
def test_it_blocks_with_the_board_and_the_next_step_while_items_are_free(tmp_path: Path) -> None:
    make_ledger(tmp_path / "tiny.reins.db")
    reason = blocked(hook(tmp_path, FIRST_STOP))
    assert reason.startswith("reins: 3 of 3 item(s) are still to do, and you cannot declare")
    assert (
        "[ ] a  (answer 1 of 3 next)\n[ ] b  (answer 1 of 3 next)\n[ ] c  (answer 1 of 3 next)\n"
        in reason
    )
    assert "Next: Take the next item (MCP tool next_item, or `reins next`)" in reason
    assert "(stop hook: block 1 of 3 in a row" in reason


@pytest.mark.slow  # the hook runs as a process, as Claude Code runs it
def test_it_names_the_item_the_agent_holds(tmp_path: Path) -> None:
    make_ledger(tmp_path / "tiny.reins.db")
    with SQLiteStore.open(tmp_path / "tiny.reins.db") as led:
        led.lease("ann", ttl=600)
    reason = blocked(hook(tmp_path, FIRST_STOP))
    assert "[>] a  (answer 1 of 3 next, ann is on it)" in reason
    assert "Next: Finish 'a' and submit it" in reason


@pytest.mark.slow  # the hook runs as a process, as Claude Code runs it
def test_it_lets_the_agent_stop_when_every_item_is_locked(tmp_path: Path) -> None:
    ledger = make_ledger(tmp_path / "tiny.reins.db", ("a",))
    record(ledger, "a", "good")
    assert "all 1 item(s) are locked" in allowed(hook(tmp_path, FIRST_STOP))


@pytest.mark.slow  # the hook runs as a process, as Claude Code runs it
def test_it_lets_the_agent_stop_when_the_rest_is_leased_to_others(tmp_path: Path) -> None:
    make_ledger(tmp_path / "tiny.reins.db", ("a", "b"))
    with SQLiteStore.open(tmp_path / "tiny.reins.db") as led:
        led.lease("bob", ttl=600)
        led.lease("eve", ttl=600)
    assert "the 2 item(s) left are all leased to other drivers" in allowed(
        hook(tmp_path, FIRST_STOP)
    )


@pytest.mark.slow  # the hook runs as a process, as Claude Code runs it
def test_the_cap_lets_a_stalled_agent_stop_and_a_new_turn_resets_it(tmp_path: Path) -> None:
    ledger = make_ledger(tmp_path / "tiny.reins.db")
    assert "block 1 of 3" in blocked(hook(tmp_path, FIRST_STOP))
    assert "block 2 of 3" in blocked(hook(tmp_path, CONTINUED_STOP))
    record(ledger, "a", "bad")  # progress
    assert "block 1 of 3" in blocked(hook(tmp_path, CONTINUED_STOP))
    assert "block 2 of 3" in blocked(hook(tmp_path, CONTINUED_STOP))
    assert "block 3 of 3" in blocked(hook(tmp_path, CONTINUED_STOP))
    why = allowed(hook(tmp_path, CONTINUED_STOP))
    assert "blocked 3 time(s) in a row without a new recorded turn" in why
    # Another session keeps its own count; a fresh stop of this one starts over.
    assert "block 1 of 3" in blocked(hook(tmp_path, {**CONTINUED_STOP, "session_id": "x"}))
    assert "block 1 of 3" in blocked(hook(tmp_path, FIRST_STOP))


@pytest.mark.slow  # the hook runs as a process, as Claude Code runs it
def test_the_cap_and_a_turn_budget_come_from_reins_toml(tmp_path: Path) -> None:
    ledger = make_ledger(tmp_path / "tiny.reins.db")
    (tmp_path / "reins.toml").write_text("[reins]\nhook_max_blocks = 1\nhook_max_turns = 2\n")
    assert "block 1 of 1" in blocked(hook(tmp_path, FIRST_STOP))
    assert "blocked 1 time(s) in a row" in allowed(hook(tmp_path, CONTINUED_STOP))
    record(ledger, "a", "bad")
    record(ledger, "a", "bad")
    assert "the turn budget is reached (2 of hook_max_turns 2" in allowed(
        hook(tmp_path, FIRST_STOP)
    )


@pytest.mark.slow  # the hook runs as a process, as Claude Code runs it
@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("missing", "no ledger at tiny.reins.db"),
        ("broken", "tiny.reins.db"),
        ("toml", "reins.toml"),
        ("quest", "no module named 'nowhere'"),
    ],
)
def test_a_hook_that_cannot_read_its_quest_or_ledger_tells_the_agent_once(
    tmp_path: Path, setup: str, message: str
) -> None:
    """Told where the agent reads (the block's reason), never only on stderr; and never
    trapped: the continued stop is let go, with the cause shown to the user."""
    if setup != "missing":
        make_ledger(tmp_path / "tiny.reins.db")
    if setup == "broken":
        (tmp_path / "tiny.reins.db").write_bytes(b"this is not a ledger" * 100)
    if setup == "toml":
        (tmp_path / "reins.toml").write_text("[reins]\nhook_max_blocks = 'many'\n")
    command = [sys.executable, "-m", "reins.cli", "--quest", TINY_REF, "hook", "stop"]
    if setup == "quest":  # a reins.toml naming a quest that does not import
        (tmp_path / "reins.toml").write_text('[reins]\nquest = "nowhere:quest"\n')
        command = [sys.executable, "-m", "reins.cli", "hook", "stop"]
    reason = blocked(run_hook(command, tmp_path, FIRST_STOP))
    assert reason.startswith("reins: the stop hook cannot read its quest or ledger: ")
    assert message.lower() in reason.lower()
    assert "stop again" in reason
    shown = noticed(run_hook(command, tmp_path, CONTINUED_STOP))
    assert shown.startswith("reins: the stop hook cannot read its quest or ledger: ")
    assert message.lower() in shown.lower() and "let the agent stop" in shown


@pytest.mark.slow  # the hook runs as a process, as Claude Code runs it
@pytest.mark.parametrize(
    ("payload", "message"),
    [("{not json", "the hook's input is not JSON"),
     ({"hook_event_name": "Stop"}, "not a JSON object with a session_id")],
)  # fmt: skip
def test_input_it_cannot_read_lets_the_agent_stop_and_tells_the_user(
    tmp_path: Path, payload: dict[str, Any] | str, message: str
) -> None:
    make_ledger(tmp_path / "tiny.reins.db")
    shown = noticed(hook(tmp_path, payload))
    assert message in shown and "let the agent stop" in shown


@pytest.mark.slow  # the hook runs as a process, as Claude Code runs it
def test_a_hook_with_no_project_and_no_quest_lets_the_agent_stop_quietly(tmp_path: Path) -> None:
    """Nothing set up here for reins (a hook in the user's own settings, say): nothing to guard."""
    run = run_hook([sys.executable, "-m", "reins.cli", "hook", "stop"], tmp_path, FIRST_STOP)
    why = allowed(run)
    assert why.startswith("reins hook: no quest given") and "letting the agent stop" in why


# -- the hook finds the project from anywhere in it ------------------------------------------


def project(folder: Path) -> Path:
    """A project: reins.toml naming the quest and a ledger beside it, and a subfolder."""
    folder.mkdir()
    (folder / "reins.toml").write_text(f'[reins]\nquest = "{TINY_REF}"\nledger = "work.reins.db"\n')
    with SQLiteStore.open(folder / "work.reins.db", create=True) as led:
        led.add((k, {"word": k}) for k in ("a", "b"))
    (folder / "src" / "deep").mkdir(parents=True)
    return folder


HOOK = [sys.executable, "-m", "reins.cli", "hook", "stop"]


@pytest.mark.slow  # the hook runs as a process, as Claude Code runs it
def test_the_hook_guards_from_a_subfolder_of_the_project(tmp_path: Path) -> None:
    """An agent that cd-ed, or Claude Code started in a subfolder: the guard stays on."""
    root = project(tmp_path / "proj")
    payload = {**FIRST_STOP, "cwd": str(root / "src" / "deep")}
    reason = blocked(run_hook(HOOK, root / "src" / "deep", payload))
    assert reason.startswith("reins: 2 of 2 item(s) are still to do")
    assert sorted(p.name for p in (root / "src" / "deep").iterdir()) == []


@pytest.mark.slow  # the hook runs as a process, as Claude Code runs it
def test_the_hook_looks_from_the_payload_cwd_then_claude_project_dir_then_its_pinned_folder(
    tmp_path: Path,
) -> None:
    root = project(tmp_path / "proj")
    elsewhere = tmp_path / "elsewhere"  # the hook's own working folder: no reins.toml above it
    elsewhere.mkdir()
    nowhere = {**FIRST_STOP, "cwd": str(tmp_path / "gone")}
    # Claude Code's payload: the agent's working folder.
    from_payload = {**FIRST_STOP, "cwd": str(root / "src")}
    assert "2 of 2 item(s)" in blocked(run_hook(HOOK, elsewhere, from_payload))
    # Then $CLAUDE_PROJECT_DIR, which Claude Code sets for hooks.
    env = {"CLAUDE_PROJECT_DIR": str(root / "src" / "deep")}
    assert "2 of 2 item(s)" in blocked(run_hook(HOOK, elsewhere, nowhere, **env))
    # Then the folder `hook install` pinned.
    pinned = [*HOOK, "--project", str(root)]
    assert "2 of 2 item(s)" in blocked(run_hook(pinned, elsewhere, nowhere))
    # The payload's folder comes first: another project's there is the one the agent is in.
    other = project(tmp_path / "other")
    with SQLiteStore.open(other / "work.reins.db") as led:
        led.add([("z", {"word": "z"})])
    there = {**FIRST_STOP, "cwd": str(other)}
    assert "3 of 3 item(s)" in blocked(run_hook(pinned, elsewhere, there, **env))


@pytest.mark.slow  # the hook runs as a process, as Claude Code runs it
def test_a_pinned_project_without_its_quest_tells_the_agent(tmp_path: Path) -> None:
    """Pinned to a project whose reins.toml is gone: a project hook that cannot read its
    quest, not a hook with nothing to guard."""
    root = tmp_path / "proj"
    root.mkdir()
    run = run_hook([*HOOK, "--project", str(root)], root, FIRST_STOP)
    reason = blocked(run)
    assert reason.startswith("reins: the stop hook cannot read its quest or ledger: no quest")


@pytest.mark.slow  # the hook runs as a process, as Claude Code runs it
def test_it_finds_the_driver_of_the_mcp_session_its_agent_started(tmp_path: Path) -> None:
    """The agent (here, this test process) started both the MCP server and the hook."""
    mcp = pytest.importorskip("mcp")
    import anyio
    from mcp.client.stdio import stdio_client

    from tests.kit.mcpclient import call, server

    make_ledger(tmp_path / "tiny.reins.db", ("a", "b"))
    with SQLiteStore.open(tmp_path / "tiny.reins.db") as led:
        led.lease("bob", ttl=600)  # the oldest free item, a, goes to bob
    reasons: list[str] = []

    async def session() -> None:
        params = server(tmp_path)
        with (tmp_path / "server.log").open("a") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (r, w),
                mcp.ClientSession(r, w) as s,
            ):
                await s.initialize()
                prompt, _ = await call(s, "next_item")
                assert prompt[0].startswith("# item b ")
                # Every item is leased, one of them to this agent's session: it must finish it.
                reasons.append(blocked(hook(tmp_path, FIRST_STOP)))
        # The session ended: its lease is given back, so b is free for the next one to take.
        reasons.append(blocked(hook(tmp_path, FIRST_STOP)))

    anyio.run(session)
    assert "Next: Finish 'b' and submit it" in reasons[0]
    assert "[ ] b  (answer 1 of 3 next)" in reasons[1] and "Next: Take the next item" in reasons[1]


# -- install / uninstall ------------------------------------------------------------------

SETTINGS = """{
    "permissions": {"allow": ["Bash(make test)"]},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh"}]}
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]
    }
}
"""
SERVERS = '{"mcpServers": {"files": {"command": "npx", "args": ["files-server"]}}}'


@pytest.mark.slow  # the hook runs as a process, as Claude Code runs it
def test_install_pins_the_project_so_its_hook_guards_from_anywhere(
    tmp_path: Path, cli: Cli
) -> None:
    """The command `hook install` writes, run as Claude Code would from a subfolder, with a
    payload naming a folder outside the project and no $CLAUDE_PROJECT_DIR: it still blocks."""
    root = project(tmp_path / "proj")
    cli.folder = root
    out = cli("hook", "install", "claude", quest=None)
    assert out.exit_code == 0, out.output
    settings = json.loads((root / ".claude" / "settings.json").read_text())
    command = settings["hooks"]["Stop"][0]["hooks"][0]["command"]
    assert command.endswith(f"hook stop --project {shlex.quote(str(root))}")
    outside = tmp_path / "outside"
    outside.mkdir()
    payload = {**FIRST_STOP, "cwd": str(outside)}
    reason = blocked(run_hook(shlex.split(command), root / "src" / "deep", payload))
    assert reason.startswith("reins: 2 of 2 item(s) are still to do")


def test_install_merges_and_uninstall_restores_every_byte(tmp_path: Path, cli: Cli) -> None:
    claude = tmp_path / ".claude"
    claude.mkdir()
    (claude / "settings.json").write_text(SETTINGS)
    (tmp_path / ".mcp.json").write_text(SERVERS)
    out = cli("hook", "install", "claude", "--project", str(tmp_path), quest="emails")
    assert out.exit_code == 0, out.output
    settings = json.loads((claude / "settings.json").read_text())
    assert settings["permissions"] == {"allow": ["Bash(make test)"]}
    assert settings["hooks"]["PreToolUse"] == json.loads(SETTINGS)["hooks"]["PreToolUse"]
    stops = settings["hooks"]["Stop"]
    assert stops[0] == {"hooks": [{"type": "command", "command": "say done"}]}
    command = stops[1]["hooks"][0]["command"]
    assert command.endswith(f"--quest emails hook stop --project {shlex.quote(str(tmp_path))}")
    servers = json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]
    assert servers["files"] == {"command": "npx", "args": ["files-server"]}
    assert servers["reins"]["args"][-3:] == ["--quest", "emails", "mcp"]
    assert (claude / "settings.json.reins-backup").read_text() == SETTINGS
    assert (tmp_path / ".mcp.json.reins-backup").read_text() == SERVERS
    again = cli("hook", "install", "claude", "--project", str(tmp_path), quest=None)
    assert again.exit_code == 2 and "installed already" in again.stderr

    out = cli("hook", "uninstall", "--project", str(tmp_path), "--json", quest=None)
    assert json.loads(out.stdout)["files"] == [".claude/settings.json", ".mcp.json"]
    assert (claude / "settings.json").read_text() == SETTINGS
    assert (tmp_path / ".mcp.json").read_text() == SERVERS
    assert sorted(p.name for p in tmp_path.rglob("*")) == [".claude", ".mcp.json", "settings.json"]


def test_uninstall_removes_only_its_own_entries_from_an_edited_file(
    tmp_path: Path, cli: Cli
) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(SETTINGS)
    cli("hook", "install", "claude", "--project", str(tmp_path), quest=None)
    path = tmp_path / ".claude" / "settings.json"
    edited = json.loads(path.read_text())
    edited["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "mine"}]})
    path.write_text(json.dumps(edited))
    cli("hook", "uninstall", "--project", str(tmp_path), quest=None)
    after = json.loads(path.read_text())
    original = json.loads(SETTINGS)
    original["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "mine"}]})
    assert after == original
    assert not (tmp_path / ".mcp.json").exists()  # it created that one: gone again


def test_install_into_a_bare_project_and_back_leaves_nothing(tmp_path: Path, cli: Cli) -> None:
    out = cli("hook", "install", "claude", "--project", str(tmp_path), "--json", quest=None)
    assert json.loads(out.stdout)["files"] == [".claude/settings.json", ".mcp.json"]
    settings = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    assert list(settings) == ["hooks"] and list(settings["hooks"]) == ["Stop"]
    cli("hook", "uninstall", "--project", str(tmp_path), quest=None)
    assert list(tmp_path.iterdir()) == []


def test_install_refuses_what_it_cannot_merge_and_writes_nothing(tmp_path: Path, cli: Cli) -> None:
    theirs = '{"mcpServers": {"reins": {"command": "someone-elses"}}}'
    (tmp_path / ".mcp.json").write_text(theirs)
    out = cli("hook", "install", "claude", "--project", str(tmp_path), quest=None)
    assert out.exit_code == 2 and "an MCP server named 'reins' already" in out.stderr
    assert [p.name for p in tmp_path.iterdir()] == [".mcp.json"]
    (tmp_path / ".mcp.json").write_text("{broken")
    out = cli("hook", "install", "claude", "--project", str(tmp_path), quest=None)
    assert out.exit_code == 2 and "is not valid JSON" in out.stderr
    out = cli("hook", "uninstall", "--project", str(tmp_path), quest=None)
    assert out.exit_code == 2 and "not installed" in out.stderr
