"""The adapters of the real agent CLIs refuse what cannot work before any run, each saying what
to do: no key in the environment, no program, a bad option. And what they launch keeps the
prompt and the key out of the argument list and out of the files they write."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reins.coders.aider import AiderAgent
from reins.coders.claude import ClaudeCodeAgent
from reins.coders.codex import CodexAgent
from reins.coders.protocol import Agent, Session
from reins.errors import Exit
from reins.values import Prompt
from tests.kit.codingkit import FILE_HOLDS_KEY, cli, quest_repo

KEYS = ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "OPENAI_API_KEY")


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in ("REINS_QUEST", "REINS_LEDGER", "REINS_MODEL", "PATH", *KEYS):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no CLI of the tests' own on it
    quest_repo(tmp_path / "q", ["k"], FILE_HOLDS_KEY)
    assert cli("-q", "q", "scan").exit_code == 0
    return tmp_path


@pytest.mark.parametrize(
    ("model", "said"),
    [
        ("claude-code:default?bin=/bin/true", "ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN is not "
         "set: export ANTHROPIC_API_KEY"),
        ("codex:gpt-5.5?bin=/bin/true", "OPENAI_API_KEY is not set: export OPENAI_API_KEY"),
        ("codex:gpt-5.5?bin=/bin/true&key_env=MY_KEY", "MY_KEY is not set"),
        ("aider:openai/gpt-4.1?bin=/bin/true", "OPENAI_API_KEY or ANTHROPIC_API_KEY is not set"),
    ],
)  # fmt: skip
def test_a_run_without_the_provider_s_key_is_refused_before_it_starts(
    here: Path, model: str, said: str
) -> None:
    out = cli("-q", "q", "loop", "--model", model)
    assert out.exit_code == Exit.USAGE and said in out.stderr, out.stderr


def test_a_missing_program_is_refused_saying_how_to_install_it(
    here: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    out = cli("-q", "q", "loop", "--model", "codex:gpt-5.5")
    assert out.exit_code == Exit.USAGE
    assert "'codex' was not found on PATH nor in a node_modules/.bin" in out.stderr
    assert "npm install -g @openai/codex" in out.stderr and "?bin=PATH" in out.stderr


@pytest.mark.parametrize(
    ("model", "said"),
    [
        ("claude-code:default?bin=/bin/true&permissions=all", "must be bypass or edits"),
        ("claude-code:default?bin=/bin/true&base_url=ftp://x", "is not an http:// or https:// URL"),
        ("codex:gpt-5.5?bin=/bin/true&sandbox=off", "sandbox must be workspace-write or bypass"),
        ("codex:gpt-5.5?bin=/bin/true&retries=-1", "retries must be a whole number"),
        ("codex:gpt-5.5?bin=/bin/true&price_in=lots", "price_in must be a number of USD"),
        ("aider:m?bin=/bin/true&files=../x", "files: '../x' is not a path in the worktree"),
    ],
)  # fmt: skip
def test_a_bad_option_is_refused_naming_it(
    here: Path, monkeypatch: pytest.MonkeyPatch, model: str, said: str
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    out = cli("-q", "q", "loop", "--model", model)
    assert out.exit_code == Exit.USAGE and said in out.stderr, out.stderr


def test_the_prompt_and_the_key_stay_out_of_argv_and_out_of_the_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret-a")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-o")
    session = Session(Prompt("MANUAL", "TASK TEXT"), str(tmp_path), str(tmp_path / "home"))
    codex = CodexAgent("gpt-5.5", {"bin": "/bin/true", "base_url": "http://127.0.0.1:9/v1"})
    agents: list[Agent] = [
        ClaudeCodeAgent("default", {"bin": "/bin/true", "base_url": "http://127.0.0.1:9"}),
        codex,
        AiderAgent("openai/x", {"bin": "/bin/true", "price_in": "1"}),
    ]
    for agent in agents:
        launch = agent.launch(session)
        written = " ".join([*launch.argv, *launch.env.values(), *launch.files.values()])
        assert "TASK" not in written and "MANUAL" not in written and "sk-secret" not in written
        assert launch.stdin == "MANUAL\n\nTASK TEXT"
        assert {"OPENAI_API_KEY", "ANTHROPIC_API_KEY"} & set(launch.pass_env)
    config = codex.launch(session).files[".codex/config.toml"]
    assert 'base_url = "http://127.0.0.1:9/v1"' in config
    assert 'env_key = "OPENAI_API_KEY"' in config and 'wire_api = "responses"' in config


def test_reins_backends_says_when_an_agent_s_program_is_not_found(here: Path) -> None:
    out = cli("backends", "--agents", "codex", "cmd")
    assert "codex  (reins.coders.codex:CodexAgent)" in out.stdout
    assert "  program: not found on PATH nor in a node_modules/.bin" in out.stdout
    rows = {r["name"]: r for r in json.loads(cli("backends", "--agents", "--json").stdout)}
    assert (rows["codex"]["found"], rows["codex"]["program"]) == (False, None)
    assert rows["cmd"]["found"] is None  # runs the program its spec names
    assert {"claude-code", "codex", "aider"} <= set(rows)
