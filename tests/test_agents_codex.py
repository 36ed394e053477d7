"""``codex:`` through the real Codex CLI (0.171.0, npm), offline, against a scripted model server
on 127.0.0.1 speaking the Responses API (tests/kit/modelserver.py): FAIL → facts → PASS on the
coding pack in Codex's own sandbox and under bubblewrap, usage from its stream, the key passed
by name only, a failed turn and an unreachable server as generation errors, a stalled server
killed with every process, and the budget enforced by a kill."""

from __future__ import annotations

import os
import shutil
import socket
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
KEY = "sk-test-openai-0123456789-not-a-real-key"


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in ("REINS_QUEST", "REINS_LEDGER", "REINS_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    return tmp_path


@pytest.fixture
def codex() -> str:
    return need("codex")


def spec(url: str, program: str, extra: str = "") -> str:
    return f"codex:gpt-5.5?base_url={url}/v1&bin={program}&retries=0{extra}"


@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
def test_fail_then_facts_then_pass_through_codex_on_the_coding_pack(
    here: Path, codex: str, sandbox: str
) -> None:
    if sandbox == "bwrap" and shutil.which("bwrap") is None and not os.environ.get("CI"):
        pytest.skip("bubblewrap (bwrap) is not installed")
    assert cli("new", "--pack", "coding", "play").exit_code == 0
    assert cli("-q", "play", "scan").exit_code == 0
    play = here / "play"
    before = checkout_state(play)
    with ModelServer(pack_model) as server:
        model = spec(server.url, codex)
        out = cli(
            "-q", "play", "loop", "--model", model, "--max-items", "1", "--sandbox", sandbox,
            "--json",
        )  # fmt: skip
    assert out.exit_code == 0, out.output + out.stderr
    turns = [(e["key"], e["turn"], e["outcome"]) for e in events(out) if e["event"] == "turn"]
    assert turns == [("slugify", 1, "FAIL"), ("slugify", 2, "PASS")]
    prompts = [a.user for a in server.asks if not a.results]
    assert len(prompts) == 2 and "failed:" not in prompts[0]
    assert "assert None == 'hello-world'" in prompts[1]
    assert all(a.cwd and a.cwd.endswith("/slugify") for a in server.asks)
    assert {a.headers.get("authorization") for a in server.asks} == {f"Bearer {KEY}"}
    fixed = git(play, "show", "reins/slugify:textkit/__init__.py")
    assert "return re.sub(r'[^a-z0-9]+', '-', text.lower()).strip('-')" in fixed
    assert passes_reproduce(play, here / "play.reins.db", play, here / "replay") == 1
    assert checkout_state(play) == before
    with SQLiteStore.open(here / "play.reins.db") as led:
        item, log = led.snapshot("slugify")
    assert item.state is State.PASS
    # Two requests a run (the command, the answer), each 1000 + 200 + 100 in, 50 out; Codex
    # reports no cost, and none was priced.
    usage = log[-1].usage
    assert (usage.backend, usage.input_tokens, usage.output_tokens) == ("codex", 2600, 100)
    assert usage.cost is None
    # Under bubblewrap Codex had no network but reins' proxy, which let its model through.
    assert log[-1].notes.refused == (0 if sandbox == "bwrap" else None)
    assert log[-1].submission and log[-1].submission.startswith("Fixed textkit.slugify.")
    assert KEY.encode() not in (here / "play.reins.db").read_bytes()
    assert KEY not in out.output + out.stderr


def test_tokens_are_priced_when_a_price_is_given(here: Path, codex: str) -> None:
    quest_repo(here / "q", ["k"], FILE_HOLDS_KEY)
    assert cli("-q", "q", "scan").exit_code == 0
    with ModelServer(lambda ask: Reply(text="nothing to do", tokens=Tokens(1000, 100))) as server:
        model = spec(server.url, codex, "&price_in=2&price_out=10")
        out = cli("-q", "q", "loop", "--model", model, "--max-items", "1")
    assert out.exit_code == 0, out.output + out.stderr
    with SQLiteStore.open(here / "q.reins.db") as led:
        _, log = led.snapshot("k")
    assert log[0].kind is AttemptKind.JUDGED and log[0].outcome == "FAIL"
    assert log[0].usage.cost == pytest.approx((1000 * 2 + 100 * 10) / 1e6)


def test_a_failed_turn_is_a_generation_error_quoting_codex(here: Path, codex: str) -> None:
    quest_repo(here / "q", ["k"], FILE_HOLDS_KEY)
    assert cli("-q", "q", "scan").exit_code == 0
    with ModelServer(lambda ask: Reply(status=400)) as server:
        model = spec(server.url, codex)
        out = cli("-q", "q", "loop", "--model", model, "--set-aside-after", "1")
    assert out.exit_code == Exit.SET_ASIDE, out.output + out.stderr
    with SQLiteStore.open(here / "q.reins.db") as led:
        item, log = led.snapshot("k")
    assert item.tries == 0 and [a.kind for a in log] == [AttemptKind.GENERATION_ERROR]
    error = log[0].error or ""
    assert error.startswith("codex: ") and "scripted error 400" in error and KEY not in error


@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
def test_an_unreachable_server_is_killed_at_once_not_waited_on(
    here: Path, codex: str, sandbox: str
) -> None:
    """Codex retries forever ("Reconnecting…") when nothing listens: reins kills it. Under the
    sandbox its proxy answers for the server that is not there, and Codex gives up at once."""
    quest_repo(here / "q", ["k"], FILE_HOLDS_KEY)
    assert cli("-q", "q", "scan").exit_code == 0
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    model = spec(f"http://127.0.0.1:{port}", codex)
    out = cli("-q", "q", "loop", "--model", model, "--set-aside-after", "1", "--sandbox", sandbox)
    assert out.exit_code == Exit.SET_ASIDE, out.output + out.stderr
    with SQLiteStore.open(here / "q.reins.db") as led:
        item, log = led.snapshot("k")
    assert item.tries == 0 and [a.kind for a in log] == [AttemptKind.GENERATION_ERROR]
    said = {
        "none": "codex: the model server is unreachable (Reconnecting",
        "bwrap": f"502 Bad Gateway: reins: cannot connect to 127.0.0.1:{port}",
    }[sandbox]
    assert said in (log[0].error or ""), log[0].error
    assert survivors(str(here)) == [] and running(codex) == []


def test_a_server_that_never_answers_is_killed_by_the_idle_watchdog(here: Path, codex: str) -> None:
    """Codex waits forever for response headers; the watchdog ends it and all it started."""
    quest_repo(here / "q", ["k"], FILE_HOLDS_KEY)
    assert cli("-q", "q", "scan").exit_code == 0
    stall = Reply(text="never sent", stall=120, stall_before_headers=True)
    with ModelServer(lambda ask: stall) as server:
        out = cli(
            "-q", "q", "loop", "--model", spec(server.url, codex), "--agent-idle", "6",
            "--set-aside-after", "1",
        )  # fmt: skip
        assert server.asks, "the CLI never asked the model"
    assert out.exit_code == Exit.SET_ASIDE, out.output + out.stderr
    with SQLiteStore.open(here / "q.reins.db") as led:
        item, log = led.snapshot("k")
    assert item.tries == 0 and [a.kind for a in log] == [AttemptKind.GENERATION_ERROR]
    assert "codex: no output for 6 s (--agent-idle): killed" in (log[0].error or "")
    assert survivors(str(here)) == [] and running(codex) == []


def test_the_item_s_budget_kills_codex_when_its_turn_reports_the_tokens(
    here: Path, codex: str
) -> None:
    """Codex reports usage once, when its turn ends: the cap acts then, and the item is set
    aside before a second run spends more."""
    quest_repo(here / "q", ["k"], FILE_HOLDS_KEY)
    assert cli("-q", "q", "scan").exit_code == 0

    asked: list[Ask] = []

    def script(ask: Ask) -> Reply:
        asked.append(ask)
        if len(asked) <= 3:  # three commands, then the answer
            again = Call("exec_command", {"cmd": "echo k > k.txt"}, "again")
            return Reply(calls=(again,), tokens=Tokens(5000, 10))
        return Reply(text="done", tokens=Tokens(5000, 10))

    with ModelServer(script) as server:
        model = spec(server.url, codex)
        out = cli("-q", "q", "loop", "--model", model, "--max-item-tokens", "12000", "--json")
    assert out.exit_code == Exit.SET_ASIDE, out.output + out.stderr
    aside = [e for e in events(out) if e["event"] == "set_aside"]
    assert aside and "the item's budget of 12000 tokens is spent" in aside[0]["error"]
    with SQLiteStore.open(here / "q.reins.db") as led:
        item, log = led.snapshot("k")
    assert item.state is State.TODO and item.tries == 0
    assert [a.kind for a in log] == [AttemptKind.GENERATION_ERROR]
    assert (log[0].usage.input_tokens or 0) >= 12000
    assert survivors(str(here)) == []
