"""A CLI that helps: state names in any case, and errors that say what to do next.

Each error is met for real: a port held open here, a port with nothing listening for the
PostgreSQL server and for Ollama, a folder that is not there.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from reins import SQLiteStore
from reins.backends import registry
from reins.backends.retry import RetryPolicy, with_retries
from reins.cli import make_group
from reins.errors import BackendError, Exit, TransientError
from reins.loop import StopReason
from reins.testing import FakeBackend, FakeCall
from reins.values import Prompt
from tests.kit import Cli, FakeServer, Reply
from tests.kit.loopkit import loop, make_ledger


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A port on 127.0.0.1 with nothing listening: connecting to it is refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    yield port


# -- state names ---------------------------------------------------------------------------


def test_state_names_are_taken_in_any_case(cli: Cli) -> None:
    cli("scan")
    for _ in range(3):
        cli("submit", "-k", "b", input="bad")  # b: DONE
    page = json.loads(cli("items", "--state", "done", "--json").stdout)
    assert [i["key"] for i in page["items"]] == ["b"]
    assert cli("items", "--state", "Done").stdout.startswith("b  DONE (unsolved)")
    dry = json.loads(cli("rejudge", "--state", "done", "--json").stdout)
    assert dry["changes"] == []  # the same gate: nothing changes, and `done` was understood
    reopened = cli("reopen", "--state", "done", "--reason", "again", "--json")
    assert reopened.exit_code == 0 and [r["key"] for r in json.loads(reopened.stdout)] == ["b"]
    bad = cli("items", "--state", "finished")
    assert bad.exit_code == 2 and "state must be one of TODO, PASS" in bad.stderr


# -- errors that say what to do next ---------------------------------------------------------


def test_a_port_in_use_says_to_pick_another_or_stop_the_other_server(cli: Cli) -> None:
    pytest.importorskip("uvicorn", reason="serve needs the [web] extra")
    cli("scan")
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        out = cli("serve", "--port", str(port))
    assert out.exit_code == Exit.USAGE
    assert f"cannot listen on 127.0.0.1:{port}: the port is in use" in out.stderr
    assert "another `reins serve` running" in out.stderr and "--port 0" in out.stderr


def test_a_postgresql_server_that_refuses_names_its_host_and_port(
    cli: Cli, closed_port: int
) -> None:
    pytest.importorskip("psycopg", reason="a PostgreSQL ledger needs the [postgres] extra")
    out = cli("--ledger", f"postgresql://127.0.0.1:{closed_port}/reins", "status")
    assert out.exit_code == Exit.ERROR and "Traceback" not in out.stderr
    assert "Connection refused" in out.stderr
    assert (
        f"Is a PostgreSQL server running, and listening on host 127.0.0.1 port {closed_port}?"
        in out.stderr
    )


@pytest.mark.parametrize("typed", ["postgresql:/db", "postgres:db", "POSTGRESQL://h/db"])
def test_a_mistyped_postgresql_url_says_what_was_meant_and_makes_no_file(
    cli: Cli, tmp_path: Path, typed: str
) -> None:
    out = cli("--ledger", typed, "scan")
    assert out.exit_code == Exit.USAGE
    assert f"ledger {typed!r} is not a PostgreSQL URL: did you mean 'postgres" in out.stderr
    assert list(tmp_path.iterdir()) == []  # no SQLite file named after the URL


def test_a_quest_folder_that_does_not_exist_is_said_so(cli: Cli, tmp_path: Path) -> None:
    out = cli("scan", quest="./capitals")
    assert out.exit_code == Exit.USAGE
    assert f"no quest folder './capitals': {tmp_path / 'capitals'} does not exist" in out.stderr
    assert "no quest named" not in out.stderr
    (tmp_path / "capitals").mkdir()
    for ref in ("./capitals", "capitals"):
        empty = cli("scan", quest=ref)
        assert empty.exit_code == Exit.USAGE and "holds no quest.toml" in empty.stderr


def test_the_known_quests_are_every_pack_reins_packs_shows(cli: Cli) -> None:
    packs = [p["name"] for p in json.loads(cli("packs", "--json", quest=None).stdout)]
    out = cli("status", quest="nosuchquest")
    assert out.exit_code == Exit.USAGE
    known = out.stderr.split("Known: ", 1)[1].split(". ", 1)[0].split(", ")
    assert set(packs) <= set(known) and "example" in known


# -- a backend that is not running ------------------------------------------------------------


def test_a_loop_on_an_ollama_that_is_not_running_stops_at_once_with_the_hint(
    cli: Cli, closed_port: int, tmp_path: Path
) -> None:
    """The first call is refused: one generation error, not a minute of retries on each of
    five items, and the message says to start Ollama."""
    cli("scan")
    out = cli(
        "loop",
        "--model",
        "ollama:qwen2.5:0.5b",
        "--no-export",
        env={"REINS_OLLAMA_URL": f"http://127.0.0.1:{closed_port}"},
    )
    assert out.exit_code == Exit.BREAKER, out.output
    assert "circuit breaker: the backend is not running" in out.stderr
    assert f"cannot connect to http://127.0.0.1:{closed_port}" in out.stderr
    assert "Start it with `ollama serve`" in out.stderr
    assert "retry 1 of" not in out.stderr and "ollama: ollama:" not in out.output
    with SQLiteStore.open(tmp_path / "tiny.reins.db") as led:
        stats = led.stats()
        assert stats.attempts == 1 and stats.kinds == {"generation_error": 1}
        assert stats.tries == {0: 3}  # no answer, no failure used


def test_an_ollama_that_answered_and_went_away_is_retried(http_server: FakeServer) -> None:
    """Mid-run, a refused connection is an outage: retried inside the backend, as before."""
    http_server.add(Reply(200, {"model": "m", "message": {"content": "good"}, "done": True}))
    url = http_server.url
    backend = registry.resolve(f"ollama:m?base_url={url}&retries=2&backoff=0.001&max_wait=0.01")
    prompt = Prompt(system="", user="Say good.")
    assert asyncio.run(backend.complete(prompt, seed=1, timeout=5)).text == "good"
    http_server.stop()  # nothing listens on its port any more
    with pytest.raises(BackendError) as failed:
        asyncio.run(backend.complete(prompt, seed=2, timeout=5))
    assert "(gave up after 3 tries)" in str(failed.value) and failed.value.unreachable
    assert "`ollama serve`" in str(failed.value)


def test_a_backend_that_comes_and_goes_mid_run_does_not_stop_the_loop_at_once(
    tmp_path: Path,
) -> None:
    path = make_ledger(tmp_path / "tiny.reins.db", ["a", "b", "c", "d"])

    def answers(call: FakeCall) -> str:
        if call.key == "a":
            return "good"
        raise BackendError("fake: cannot connect: refused", backend="fake", unreachable=True)

    summary = loop(path, FakeBackend(answers), breaker=3)
    # the first call answered: the refusals after it are counted by the breaker (3 items)
    assert summary.reason is StopReason.BREAKER
    assert summary.locked == {"PASS": 1} and summary.generation_errors >= 3
    assert "circuit breaker: generation errors on 3 items in a row" in summary.message


def test_a_retried_error_is_named_once(caplog: pytest.LogCaptureFixture) -> None:
    """The backend's own messages start with its name; the retry's log line does not add it
    again (`ollama: ollama: …`)."""
    calls = 0

    async def call() -> str:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise TransientError("ollama: http://x: ConnectError: refused", backend="ollama")
        return "good"

    policy = RetryPolicy(retries=1, backoff=0.001)
    with caplog.at_level(logging.WARNING, logger="reins.backends"):
        assert asyncio.run(with_retries(call, policy=policy, backend="ollama")) == "good"
    [said] = [r.getMessage() for r in caplog.records]
    assert said.startswith("ollama: http://x: ConnectError: refused; retry 1 of 1 in ")


# -- words ----------------------------------------------------------------------------------


def every_command(group: click.Group) -> Iterator[tuple[str, ...]]:
    """The path of every command and subcommand under ``group``, itself first."""
    yield ()
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if isinstance(command, click.Group):
            yield from ((name, *path) for path in every_command(command))
        else:
            yield (name,)


def test_no_help_shows_markup_backticks(cli: Cli) -> None:
    """A docstring's `code` is shown in single quotes, as click shows its own names."""
    paths = list(every_command(make_group()))
    assert len(paths) > 30
    shown = []
    for path in paths:
        out = cli(*path, "--help", quest=None)
        assert out.exit_code == 0, (path, out.output)
        shown += [
            f"reins {' '.join(path)}: {line}" for line in out.stdout.splitlines() if "`" in line
        ]
    assert shown == []
    assert "'reins gate check'" in cli("gate", "--help", quest=None).stdout


def test_init_says_which_files_exist_in_good_english(cli: Cli, tmp_path: Path) -> None:
    assert cli("init", quest=None).exit_code == 0
    both = cli("init", quest=None)
    assert both.exit_code == 2
    assert "reins.toml, myquest.py already exist; pass --force" in both.stderr
    (tmp_path / "myquest.py").unlink()
    one = cli("init", quest=None)
    assert "reins.toml already exists; pass --force" in one.stderr
