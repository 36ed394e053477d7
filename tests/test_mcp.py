"""``reins mcp`` through the official MCP client: ClientSession over stdio, real servers."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from reins import SQLiteStore
from tests.kit import CHILD_PATH, ROOT, Cli
from tests.kit.loopkit import make_ledger

mcp = pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

from tests.kit.mcpclient import call, connect, server  # noqa: E402

PROPOSING = "tests.kit:PROPOSING"
TOOLS = {"next_item", "submit", "board", "item_log", "rules", "release"}
pytestmark = pytest.mark.slow


def run(fn: Callable[[], Awaitable[None]]) -> None:
    anyio.run(fn)


def lease_of(ledger: Path, key: str) -> str | None:
    with SQLiteStore.open(ledger) as led:
        return led.get(key).lease_owner


def test_the_tools_are_listed_with_the_rules_of_the_game(tmp_path: Path) -> None:
    make_ledger(tmp_path / "tiny.reins.db")

    async def session() -> None:
        async with connect(tmp_path) as s:
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert set(tools) == TOOLS  # nothing that locks, skips or deletes; no proposals
            for tool in tools.values():
                assert tool.description is not None
                assert "You cannot mark anything done; only the gate can" in tool.description
            assert tools["submit"].input_schema["required"] == ["submission"]
            assert tools["board"].annotations is not None
            assert tools["board"].annotations.read_only_hint is True

    run(session)


def test_a_fail_then_its_facts_then_a_pass(tmp_path: Path) -> None:
    ledger = make_ledger(tmp_path / "tiny.reins.db")

    async def session() -> None:
        async with connect(tmp_path, "--driver", "agent-1") as s:
            prompt, error = await call(s, "next_item")
            assert not error
            assert prompt[0].startswith("# item a · answer 1 of 3 · turn 1 · leased to agent-1\n")
            assert "Say 'good' for a." in prompt[0]
            verdict, error = await call(s, "submit", submission="bad")
            assert not error
            assert verdict[0].startswith("a -> FAIL on answer 1 of 3 (state TODO, 2 answers left)")
            assert "not-bad" in verdict[0] and "submit 'a' again" in verdict[1]
            assert "(answer 2 of 3 next, 2 answers left)" in verdict[1]
            again, _ = await call(s, "next_item")
            assert again[0].startswith("# item a · answer 2 of 3 · turn 2")
            assert again[0].endswith(verdict[0])  # the facts come back, byte for byte
            passed, error = await call(s, "submit", submission="good")
            assert not error
            assert passed[0] == "a -> PASS on answer 2 of 3 (state PASS)\n"
            assert "locked PASS; 2 item(s) remain: call next_item" in passed[1]
            board, _ = await call(s, "board")
            assert board[0].splitlines()[:2] == ["[x] a  (PASS)", "[ ] b  (answer 1 of 3 next)"]
            assert board[1] == "remaining 2 of 3 (0 in progress); you hold no item"

    run(session)
    with SQLiteStore.open(ledger) as led:
        item, log = led.snapshot("a")
    assert item.state.value == "PASS" and [a.driver for a in log] == ["agent-1", "agent-1"]


def test_an_agents_oversize_submission_is_a_fail_fact_not_a_usage_error(tmp_path: Path) -> None:
    """An agent's tool call is a generator's output: too large is its FAIL (a try), recorded
    with the facts it can act on, where a person's `reins submit` is refused (exit 2)."""
    ledger = make_ledger(tmp_path / "tiny.reins.db")
    (tmp_path / "reins.toml").write_text("[reins]\nmax_submission = 10\n")

    async def session() -> None:
        async with connect(tmp_path, "--driver", "agent-1") as s:
            await call(s, "next_item")
            verdict, error = await call(s, "submit", submission="good" * 10)
            assert not error
            assert verdict[0].startswith("a -> FAIL on answer 1 of 3 (state TODO")
            assert "reins:submission" in verdict[0] and "at most 10 bytes" in verdict[0]

    run(session)
    with SQLiteStore.open(ledger) as led:
        item, log = led.snapshot("a")
    assert item.tries == 1 and log[0].submission == "good" * 2 + "go"


def test_two_sessions_never_share_an_item(tmp_path: Path) -> None:
    make_ledger(tmp_path / "tiny.reins.db")

    async def sessions() -> None:
        async with connect(tmp_path) as one, connect(tmp_path) as two:
            first, _ = await call(one, "next_item")
            second, _ = await call(two, "next_item")
            drivers = [re.search(r"leased to (\S+)", t[0]) for t in (first, second)]
            assert drivers[0] and drivers[1] and drivers[0][1] != drivers[1][1]
            assert drivers[0][1].startswith("mcp-") and drivers[1][1].startswith("mcp-")
            assert first[0].startswith("# item a ") and second[0].startswith("# item b ")
            # The second session cannot answer the first one's item.
            refused, error = await call(two, "submit", key="a", submission="good")
            assert error and f"leased to '{drivers[0][1]}'" in refused[0]

    run(sessions)


def test_a_session_that_ends_releases_its_lease_at_once(tmp_path: Path) -> None:
    ledger = make_ledger(tmp_path / "tiny.reins.db")

    async def session() -> None:
        async with connect(tmp_path, "--driver", "agent-1") as s:
            await call(s, "next_item")
            assert lease_of(ledger, "a") == "agent-1"

    run(session)
    # stdio_client closed the server's stdin and waited for it to exit: the lease is gone.
    assert lease_of(ledger, "a") is None
    assert "session agent-1 ended; released 1 lease(s)" in (tmp_path / "server.log").read_text()


KILLED_CLIENT = """
import sys, anyio
from tests.kit.mcpclient import connect, call
from pathlib import Path

async def main():
    async with connect(Path(sys.argv[1]), "--driver", "doomed") as s:
        text, _ = await call(s, "next_item")
        print("LEASED", text[0].split()[2], flush=True)
        await anyio.sleep(3600)

anyio.run(main)
"""


def test_a_killed_client_s_lease_is_released(tmp_path: Path) -> None:
    """The client dies without a word (SIGKILL): its server reads EOF and gives the item back."""
    ledger = make_ledger(tmp_path / "tiny.reins.db")
    client = subprocess.Popen(
        [sys.executable, "-c", KILLED_CLIENT, str(tmp_path)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert client.stdout is not None
        assert client.stdout.readline().split() == ["LEASED", "a"]
        assert lease_of(ledger, "a") == "doomed"
        client.send_signal(signal.SIGKILL)
        client.wait()
    finally:
        client.kill()
        client.wait()
        if client.stdout is not None:
            client.stdout.close()
    # The server (the client's orphaned child) notices EOF on its own; the lease's expiry is
    # 15 minutes away, so a release within the wait below can only be the server's doing.
    deadline = time.monotonic() + 60
    while lease_of(ledger, "a") is not None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert lease_of(ledger, "a") is None
    with SQLiteStore.open(ledger) as led:
        assert led.meta(f"agents.agent.{client.pid}") == ""  # the server finished, and unlinked


def test_a_server_told_to_stop_releases_its_lease_first(tmp_path: Path) -> None:
    """A client may end a session with SIGTERM instead of closing stdin (here, JSON-RPC by hand,
    to hold the server's pid)."""
    ledger = make_ledger(tmp_path / "tiny.reins.db")
    params = server(tmp_path, "--driver", "agent-1")
    proc = subprocess.Popen(
        [params.command, *params.args],
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}}
    messages: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "next_item"}},
    ]
    try:
        for message in messages:
            proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.flush()
            if "id" in message:
                assert json.loads(proc.stdout.readline())["id"] == message["id"]
        assert lease_of(ledger, "a") == "agent-1"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 128 + signal.SIGTERM
        assert "session agent-1 ended; released 1 lease(s)" in proc.stderr.read()
    finally:
        proc.kill()
        proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            stream.close()
    assert lease_of(ledger, "a") is None


def test_after_three_other_calls_results_carry_a_reminder(tmp_path: Path) -> None:
    make_ledger(tmp_path / "tiny.reins.db")

    async def session() -> None:
        async with connect(tmp_path, "--driver", "agent-1") as s:
            await call(s, "next_item")
            for tool in ("board", "rules"):
                texts, _ = await call(s, tool)
                assert not any(t.startswith("reminder:") for t in texts)
            texts, _ = await call(s, "board")
            assert texts[-1] == (
                "reminder: 3 tool call(s) since your last submit. In progress: a (answer 1 of 3 "
                "next). Finish it and call submit: only the gate can mark it done. "
                "Remaining: 3 of 3 item(s) to do (1 in progress)."
            )
            verdict, _ = await call(s, "submit", submission="bad")  # a submit resets the count
            assert not verdict[-1].startswith("reminder:")
            for _ in range(2):
                texts, _ = await call(s, "board")
                assert not texts[-1].startswith("reminder:")

    async def restarted() -> None:
        # The count is in the ledger: a new server under the same driver goes on from 2.
        async with connect(tmp_path, "--driver", "agent-1") as s:
            texts, _ = await call(s, "rules")
            assert not texts[-1].startswith("reminder:")
            texts, _ = await call(s, "rules")
            assert texts[-1].startswith("reminder: 3 tool call(s) since your last submit.")
            assert "You hold no item: call next_item" in texts[-1]  # released at restart

    run(session)
    run(restarted)


def test_invalid_arguments_are_errors_the_agent_reads_never_a_crash(tmp_path: Path) -> None:
    make_ledger(tmp_path / "tiny.reins.db")

    async def session() -> None:
        async with connect(tmp_path) as s:
            cases: list[tuple[str, dict[str, Any], str]] = [
                ("submit", {}, "missing required argument 'submission'"),
                ("submit", {"submission": 5}, "'submission' must be a string, not a number"),
                ("submit", {"submission": "good", "color": "red"}, "unknown argument(s) color"),
                ("submit", {"submission": "good"}, "no item in progress: call next_item"),
                ("submit", {"key": "zzz", "submission": "good"}, "no item with key 'zzz'"),
                ("submit", {"key": "a", "submission": "  "}, "the submission is empty"),
                ("board", {"limit": "ten"}, "'limit' must be an integer, not a string"),
                ("board", {"limit": True}, "'limit' must be an integer, not true or false"),
                ("board", {"limit": 0}, "limit must be at least 1"),
                ("item_log", {}, "missing required argument 'key'"),
                ("item_log", {"key": "zzz"}, "no item with key 'zzz'"),
                ("release", {"key": "zzz"}, "no item with key 'zzz'"),
                ("next_item", {"x": 1}, "it takes no arguments"),
                ("propose_item", {"key": "d", "payload": {}}, "no tool named 'propose_item'"),
            ]
            for tool, arguments, message in cases:
                if tool == "propose_item":
                    with pytest.raises(MCPError, match=message):
                        await s.call_tool(tool, arguments)
                    continue
                texts, error = await call(s, tool, **arguments)
                assert error, (tool, arguments, texts)
                assert message in texts[0], (tool, arguments, texts)
            with pytest.raises(MCPError, match="no tool named 'lock'"):
                await s.call_tool("lock", {"key": "a"})
            # Still serving, and nothing was recorded.
            prompt, error = await call(s, "next_item")
            assert not error and prompt[0].startswith("# item a · answer 1 of 3 · turn 1 ·")

    run(session)


def test_next_item_and_submit_print_the_bytes_the_cli_prints(tmp_path: Path, cli: Cli) -> None:
    """The same moves on two ledgers, one through MCP and one through the CLI."""
    by_mcp, by_cli = tmp_path / "mcp", tmp_path / "cli"
    by_mcp.mkdir()
    by_cli.mkdir()
    make_ledger(by_mcp / "tiny.reins.db")
    make_ledger(by_cli / "tiny.reins.db")
    texts: list[str] = []

    async def session() -> None:
        async with connect(by_mcp, "--driver", "agent-1") as s:
            for tool, args in [
                ("next_item", {}),
                ("submit", {"submission": "bad"}),
                ("next_item", {}),
                ("submit", {"submission": "meh"}),
            ]:
                texts.append((await call(s, tool, **args))[0][0])

    run(session)
    cli.folder = by_cli

    def said(*args: str, input: str | None = None) -> str:
        return cli(*args, "--driver", "agent-1", input=input).stdout

    answer = (
        r"\n# answer with: reins submit --key a --token [0-9a-f]+ --in FILE"
        r"   \(or --in - for stdin\)\n"
    )
    assert re.fullmatch(re.escape(texts[0]) + answer, said("next"))
    assert said("submit", "-k", "a", input="bad") == texts[1]
    assert re.fullmatch(re.escape(texts[2]) + answer, said("next"))
    assert said("submit", "-k", "a", input="meh") == texts[3]
    assert "REVIEW" in texts[3]


def test_a_quest_that_allows_proposals_takes_them_as_todo_items(tmp_path: Path, cli: Cli) -> None:
    ledger = make_ledger(tmp_path / "tiny.reins.db", ("a",))

    async def session() -> None:
        async with connect(tmp_path, "--driver", "agent-1", quest=PROPOSING) as s:
            tools = {t.name for t in (await s.list_tools()).tools}
            assert tools == {*TOOLS, "propose_item"}
            added, error = await call(s, "propose_item", key="d", payload={"word": "d"}, why="x")
            assert not error
            assert (
                added[0] == "proposed d (x): added to do, proposed by agent-1; 2 item(s) remain\n"
            )
            again, error = await call(s, "propose_item", key="d", payload={"word": "d"})
            assert error and "an item 'd' exists already" in again[0]
            log, _ = await call(s, "item_log", key="d")
            assert log == ["d: TODO, 0 of 3 failures used, 0 turn(s)\n", "proposed by agent-1"]
            # The gate judges it like any other.
            await call(s, "submit", key="a", submission="good")
            prompt, _ = await call(s, "next_item")
            assert prompt[0].startswith("# item d · answer 1 of 3 · turn 1")
            verdict, _ = await call(s, "submit", submission="bad")
            assert verdict[0].startswith("d -> FAIL on answer 1 of 3 (state TODO, 2 answers left)")

    run(session)
    out = cli("log", "d", "--json")
    assert json.loads(out.stdout)["proposed_by"] == "agent-1"
    with SQLiteStore.open(ledger) as led:
        assert led.check() == []


# -- docs/coding.md's transcript is a real session, made here ---------------------------

TRANSCRIPT_MOVES: list[tuple[str, dict[str, Any]]] = [
    ("next_item", {}),
    ("submit", {"submission": '{"addresses": ["priya.raman@northwind-labs.example"]}'}),
    (
        "submit",
        {
            "submission": '{"addresses": ["priya.raman@northwind-labs.example", '
            '"facilities@northwind-labs.example"]}'
        },
    ),
    ("board", {"limit": 3}),
]


async def transcript(folder: Path) -> str:
    """A session on the emails quest, as docs/coding.md shows it: each call, then its result."""
    subprocess.run(
        [sys.executable, "-m", "reins.cli", "-q", "emails", "scan"],
        cwd=folder,
        check=True,
        capture_output=True,
    )
    lines: list[str] = []
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "reins.cli", "-q", "emails", "mcp", "--driver", "agent-1"],
        cwd=str(folder),
        env={"PYTHONPATH": CHILD_PATH},  # this tree's reins, which made the ledger above
    )
    with (folder / "server.log").open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            names = [t.name for t in (await s.list_tools()).tools]
            lines.append(f"tools: {', '.join(names)}")
            for tool, args in TRANSCRIPT_MOVES:
                lines.append(f"\n→ {tool} {json.dumps(args)}" if args else f"\n→ {tool}")
                texts, _ = await call(s, tool, **args)
                lines.extend(t.rstrip("\n") for t in texts)
    return "\n".join(lines) + "\n"


def test_the_docs_transcript_is_a_real_session(tmp_path: Path) -> None:
    made: list[str] = []

    async def session() -> None:
        made.append(await transcript(tmp_path))

    run(session)
    page = (ROOT / "docs" / "coding.md").read_text(encoding="utf-8")
    shown = re.search(r"<!-- mcp-transcript -->\n```text\n(.*?)```", page, re.S)
    assert shown is not None, "docs/coding.md lost its MCP transcript"
    assert shown[1] == made[0], "regenerate it: python -m tests.test_mcp\n" + made[0]


if __name__ == "__main__":  # print the transcript for docs/coding.md
    import tempfile

    async def main() -> None:
        with tempfile.TemporaryDirectory() as folder:
            print(await transcript(Path(folder)), end="")

    anyio.run(main)
