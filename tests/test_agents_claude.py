"""``claude-code:`` through the real Claude Code CLI (2.1.197, npm), offline, against a scripted
model server on 127.0.0.1 (tests/kit/modelserver.py): FAIL → facts → PASS on the coding pack,
usage and cost from its stream, the key passed by name only, its failures as generation
errors, a stalled server and a hung tool killed with every process they started, and the
budget enforced by a kill."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from reins import SQLiteStore, State
from reins.errors import Exit
from reins.store import AttemptKind
from tests.kit.agentclis import need, pack_model, running, survivors
from tests.kit.codingkit import (
    FILE_HOLDS_KEY,
    checkout_state,
    cli,
    events,
    git,
    passes_reproduce,
    quest_repo,
)
from tests.kit.modelserver import Ask, Call, ModelServer, Reply, Tokens

pytestmark = pytest.mark.slow
KEY = "sk-ant-test-0123456789-not-a-real-key"


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in ("REINS_QUEST", "REINS_LEDGER", "REINS_MODEL", "CLAUDE_CODE_OAUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    return tmp_path


@pytest.fixture
def claude() -> str:
    return need("claude")


def spec(server: ModelServer, program: str, extra: str = "") -> str:
    return f"claude-code:default?base_url={server.url}&bin={program}&retries=0{extra}"


def test_fail_then_facts_then_pass_through_claude_code_on_the_coding_pack(
    here: Path, claude: str
) -> None:
    assert cli("new", "--pack", "coding", "play").exit_code == 0
    assert cli("-q", "play", "scan").exit_code == 0
    play = here / "play"
    before = checkout_state(play)
    with ModelServer(pack_model) as server:
        model = spec(server, claude)
        out = cli("-q", "play", "loop", "--model", model, "--max-items", "1", "--json")
    assert out.exit_code == 0, out.output + out.stderr
    turns = [(e["key"], e["turn"], e["outcome"]) for e in events(out) if e["event"] == "turn"]
    assert turns == [("slugify", 1, "FAIL"), ("slugify", 2, "PASS")]
    # The second run's prompt carried the gate's facts on the failing test.
    prompts = [a.user for a in server.asks if not a.results]
    assert len(prompts) == 2 and "failed:" not in prompts[0]
    assert "test tests/test_textkit_tasks.py::test_slugify" in prompts[1]
    assert "assert None == 'hello-world'" in prompts[1]
    # The CLI worked in the item's workspace, with the key passed by name.
    assert all(a.cwd and a.cwd.endswith("/slugify") for a in server.asks)
    assert {a.headers.get("x-api-key") for a in server.asks} == {KEY}
    fixed = git(play, "show", "reins/slugify:textkit/__init__.py")
    assert "return re.sub(r'[^a-z0-9]+', '-', text.lower()).strip('-')" in fixed
    assert passes_reproduce(play, here / "play.reins.db", play, here / "replay") == 1
    assert checkout_state(play) == before
    with SQLiteStore.open(here / "play.reins.db") as led:
        item, log = led.snapshot("slugify")
    assert item.state is State.PASS
    # Under the default sandbox: no network but reins' proxy, which let its model through.
    assert log[-1].notes.sandbox == "bwrap" and log[-1].notes.refused == 0
    # Three requests a run (Read, Edit, the answer), each 1000 + 200 + 100 in, 50 out; the
    # CLI's own cost at its list price ($5/M in, $25/M out, $0.5/M cache read, $6.25/M write).
    usage = log[-1].usage
    assert (usage.backend, usage.input_tokens, usage.output_tokens) == ("claude-code", 3900, 150)
    assert usage.cost == pytest.approx(3 * (1000 * 5 + 50 * 25 + 200 * 0.5 + 100 * 6.25) / 1e6)
    assert (usage.cache_read_tokens, usage.cache_write_tokens) == (600, 300)  # of the 3900
    assert log[-1].submission and log[-1].submission.startswith("Fixed textkit.slugify.")
    # The key is nowhere in the ledger, nor in what the loop printed.
    assert KEY.encode() not in (here / "play.reins.db").read_bytes()
    assert KEY not in out.output + out.stderr


def write_key(ask: Ask) -> Reply:
    """Writes k.txt with the Write tool, then says so."""
    if ask.results:
        return Reply(text="wrote k.txt")
    assert ask.cwd is not None
    return Reply(calls=(Call("Write", {"file_path": f"{ask.cwd}/k.txt", "content": "k\n"}),))


@pytest.mark.parametrize(("permissions", "sandbox"), [("edits", "none"), ("bypass", "bwrap")])
def test_claude_code_works_with_edits_allowed_only_and_under_bubblewrap(
    here: Path, claude: str, permissions: str, sandbox: str
) -> None:
    if sandbox == "bwrap" and shutil.which("bwrap") is None and not os.environ.get("CI"):
        pytest.skip("bubblewrap (bwrap) is not installed")
    quest_repo(here / "q", ["k"], FILE_HOLDS_KEY)
    assert cli("-q", "q", "scan").exit_code == 0
    with ModelServer(write_key) as server:
        model = spec(server, claude, f"&permissions={permissions}")
        out = cli("-q", "q", "loop", "--model", model, "--sandbox", sandbox)
    assert out.exit_code == 0, out.output + out.stderr
    with SQLiteStore.open(here / "q.reins.db") as led:
        item, log = led.snapshot("k")
    assert item.state is State.PASS and log[-1].submission
    assert log[-1].submission.startswith("wrote k.txt")
    assert git(here / "q", "show", "reins/q/k:k.txt") == "k\n"


def test_an_api_error_is_a_generation_error_quoting_the_cli(here: Path, claude: str) -> None:
    quest_repo(here / "q", ["k"], FILE_HOLDS_KEY)
    assert cli("-q", "q", "scan").exit_code == 0
    with ModelServer(lambda ask: Reply(status=500)) as server:
        out = cli(
            "-q", "q", "loop", "--model", spec(server, claude), "--set-aside-after", "1",
        )  # fmt: skip
    assert out.exit_code == Exit.SET_ASIDE, out.output + out.stderr
    with SQLiteStore.open(here / "q.reins.db") as led:
        item, log = led.snapshot("k")
    assert item.state is State.TODO and item.tries == 0
    assert [a.kind for a in log] == [AttemptKind.GENERATION_ERROR]
    error = log[0].error or ""
    assert error.startswith("claude-code: API Error: 500") and "(the API answered 500)" in error
    assert KEY not in error


def test_a_stalled_server_is_killed_by_the_idle_watchdog_leaving_no_process(
    here: Path, claude: str
) -> None:
    quest_repo(here / "q", ["k"], FILE_HOLDS_KEY)
    assert cli("-q", "q", "scan").exit_code == 0
    with ModelServer(lambda ask: Reply(text="never sent", stall=120)) as server:
        out = cli(
            "-q", "q", "loop", "--model", spec(server, claude), "--agent-idle", "6",
            "--set-aside-after", "1",
        )  # fmt: skip
        assert server.asks, "the CLI never asked the model"
    assert out.exit_code == Exit.SET_ASIDE, out.output + out.stderr
    with SQLiteStore.open(here / "q.reins.db") as led:
        item, log = led.snapshot("k")
    assert item.tries == 0 and [a.kind for a in log] == [AttemptKind.GENERATION_ERROR]
    assert "claude-code: no output for 6 s (--agent-idle): killed" in (log[0].error or "")
    assert survivors(str(here)) == [] and running(claude) == []


def test_a_bash_tool_in_a_session_of_its_own_is_killed_with_the_cli(
    here: Path, claude: str
) -> None:
    """Claude Code starts its Bash tool in a new session: a group kill would miss it."""
    quest_repo(here / "q", ["k"], FILE_HOLDS_KEY)
    assert cli("-q", "q", "scan").exit_code == 0
    # In its workspace, which a turn that ends in an error leaves as it was: the proof it ran.
    pidfile = here / ".reins-worktrees" / "q" / "k" / "tool.pid"
    hang = {"command": "echo $$ > tool.pid; exec sleep 3137", "description": "wait"}

    def script(ask: Ask) -> Reply:
        return Reply(calls=(Call("Bash", hang, "hang"),))

    with ModelServer(script) as server:
        out = cli(
            "-q", "q", "loop", "--model", spec(server, claude), "--agent-idle", "6",
            "--set-aside-after", "1",
        )  # fmt: skip
    assert out.exit_code == Exit.SET_ASIDE, out.output + out.stderr
    assert pidfile.read_text().strip()  # the tool ran …
    assert running("sleep 3137") == []  # … and is gone
    assert survivors(str(here)) == []


def test_the_item_s_budget_kills_claude_code_from_the_tokens_it_streams(
    here: Path, claude: str
) -> None:
    quest_repo(here / "q", ["k"], FILE_HOLDS_KEY)
    assert cli("-q", "q", "scan").exit_code == 0

    def script(ask: Ask) -> Reply:  # works forever, 5000 tokens a request
        return Reply(calls=(Call("Bash", {"command": "true"}, "again"),), tokens=Tokens(5000, 10))

    with ModelServer(script) as server:
        model = spec(server, claude)
        out = cli("-q", "q", "loop", "--model", model, "--max-item-tokens", "12000", "--json")
    assert out.exit_code == Exit.SET_ASIDE, out.output + out.stderr
    aside = [e for e in events(out) if e["event"] == "set_aside"]
    assert aside and "the item's budget of 12000 tokens is spent" in aside[0]["error"]
    with SQLiteStore.open(here / "q.reins.db") as led:
        item, log = led.snapshot("k")
    assert item.state is State.TODO and item.tries == 0
    assert [a.kind for a in log] == [AttemptKind.GENERATION_ERROR]
    assert (log[0].usage.input_tokens or 0) >= 12000
    assert len(server.asks) < 10  # killed in flight, not at the end of its own accord
    assert survivors(str(here)) == []


def test_reins_backends_lists_claude_code_and_where_its_program_is(claude: str) -> None:
    out = cli("backends", "--agents", "--json", "claude-code")
    [row] = json.loads(out.stdout)
    assert row["target"] == "reins.coders.claude:ClaudeCodeAgent"
    assert {"base_url", "bin", "permissions"} <= set(row["options"])
    assert row["found"] in (True, False)
