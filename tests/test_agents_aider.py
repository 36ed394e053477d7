"""``aider:`` through the real aider (0.86.2, PyPI, in a virtual environment of its own:
``make aider``), offline, against the scripted model server's chat completions: FAIL → facts →
PASS on the coding pack, the tokens and cost it prints metered, the key passed by name only,
and the budget enforced by a kill."""

from __future__ import annotations

from pathlib import Path

import pytest

from reins import SQLiteStore, State
from reins.errors import Exit
from reins.store import AttemptKind
from tests.kit.agentclis import need, pack_model, survivors
from tests.kit.codingkit import (
    FILE_HOLDS_KEY,
    checkout_state,
    cli,
    events,
    git,
    passes_reproduce,
    quest_repo,
)
from tests.kit.modelserver import Ask, ModelServer, Reply, Tokens

pytestmark = pytest.mark.slow
KEY = "sk-test-aider-0123456789-not-a-real-key"


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in ("REINS_QUEST", "REINS_LEDGER", "REINS_MODEL", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    return tmp_path


@pytest.fixture
def aider() -> str:
    return need("aider")


def spec(server: ModelServer, program: str, extra: str = "") -> str:
    return (
        f"aider:openai/scripted?base_url={server.url}/v1&bin={program}&edit_format=diff"
        f"&price_in=1&price_out=2{extra}"
    )


def test_fail_then_facts_then_pass_through_aider_on_the_coding_pack(here: Path, aider: str) -> None:
    assert cli("new", "--pack", "coding", "play").exit_code == 0
    assert cli("-q", "play", "scan").exit_code == 0
    play = here / "play"
    before = checkout_state(play)
    with ModelServer(pack_model) as server:
        model = spec(server, aider, "&files=textkit/__init__.py")
        out = cli("-q", "play", "loop", "--model", model, "--max-items", "1", "--json")
    assert out.exit_code == 0, out.output + out.stderr
    turns = [(e["key"], e["turn"], e["outcome"]) for e in events(out) if e["event"] == "turn"]
    assert turns == [("slugify", 1, "FAIL"), ("slugify", 2, "PASS")]
    assert len(server.asks) == 2 and "assert None == 'hello-world'" in server.asks[1].user
    assert {a.headers.get("authorization") for a in server.asks} == {f"Bearer {KEY}"}
    fixed = git(play, "show", "reins/slugify:textkit/__init__.py")
    assert "return re.sub(r'[^a-z0-9]+', '-', text.lower()).strip('-')" in fixed
    assert passes_reproduce(play, here / "play.reins.db", play, here / "replay") == 1
    assert git(play, "diff", "--name-only", "master", "reins/slugify").split() == [
        "textkit/__init__.py"
    ]  # nothing of aider's own in the change
    assert checkout_state(play) == before
    with SQLiteStore.open(here / "play.reins.db") as led:
        item, log = led.snapshot("slugify")
    assert item.state is State.PASS
    # One request a run; aider prints 1000 + 200 + 100 sent, 50 received, at $1/M and $2/M.
    usage = log[-1].usage
    assert (usage.backend, usage.input_tokens, usage.output_tokens) == ("aider", 1300, 50)
    assert usage.cost is not None and usage.cost > 0
    assert log[-1].submission and "Fixed textkit.slugify." in log[-1].submission
    assert KEY.encode() not in (here / "play.reins.db").read_bytes()


def test_the_item_s_budget_kills_aider_from_the_tokens_it_prints(here: Path, aider: str) -> None:
    quest_repo(here / "q", ["k"], FILE_HOLDS_KEY)
    assert cli("-q", "q", "scan").exit_code == 0

    def script(ask: Ask) -> Reply:  # never an edit aider can apply: it asks again and again
        block = "k.txt\n```\n<<<<<<< SEARCH\nnot there\n=======\nk\n>>>>>>> REPLACE\n```\n"
        return Reply(text=block, tokens=Tokens(5000, 10))

    with ModelServer(script) as server:
        model = spec(server, aider)
        out = cli("-q", "q", "loop", "--model", model, "--max-item-tokens", "8000", "--json")
    assert out.exit_code == Exit.SET_ASIDE, out.output + out.stderr
    aside = [e for e in events(out) if e["event"] == "set_aside"]
    assert aside and "the item's budget of 8000 tokens is spent" in aside[0]["error"]
    with SQLiteStore.open(here / "q.reins.db") as led:
        item, log = led.snapshot("k")
    assert item.state is State.TODO and item.tries == 0
    assert [a.kind for a in log] == [AttemptKind.GENERATION_ERROR]
    assert (log[0].usage.input_tokens or 0) >= 8000
    assert survivors(str(here)) == []
