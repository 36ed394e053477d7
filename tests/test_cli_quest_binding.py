"""A ledger belongs to one quest: every command refuses another quest's ledger, untouched.

And a ledger that claims an older schema than its tables hold, or whose migration fails, is
refused as it was: byte for byte on SQLite, row for row on PostgreSQL.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from reins.cli import make_group
from reins.packs import folders
from reins.store.engines import open_store
from reins.store.postgres.schema import SCHEMA_VERSION as POSTGRES_VERSION
from reins.store.sqlite.schema import SCHEMA_VERSION as SQLITE_VERSION
from reins.testing.harness import SQLiteHarness, StoreHarness
from tests.kit import TINY, Cli

OTHER_REF = "tests.test_cli_quest_binding:OTHER"
NEWER_GATE_REF = "tests.test_cli_quest_binding:NEWER_GATE"
OTHER = dataclasses.replace(TINY, name="other")
NEWER_GATE = dataclasses.replace(TINY, gate_version="2")  # the same quest, its gate changed


def untouched(harness: StoreHarness, location: str) -> Callable[[], bool]:
    """A check that ``location`` is as it is now: every byte (SQLite: and no file beside it,
    no -wal or -shm left behind), every row (PostgreSQL)."""
    before = harness.fingerprint(location)
    folder = Path(location).parent if harness.name == "sqlite" else None
    listing = sorted(p.name for p in folder.iterdir()) if folder else []

    def check() -> bool:
        now = sorted(p.name for p in folder.iterdir()) if folder else []
        return harness.fingerprint(location) == before and now == listing

    return check


def seeded(cli: Cli, harness: StoreHarness) -> str:
    """A ledger of quest tiny with a FAIL, a PASS, a REVIEW and a leased item."""
    location = harness.missing()
    assert cli("--ledger", location, "scan", "a", "b", "c", "d").exit_code == 0
    assert cli("--ledger", location, "submit", "-k", "a", input="bad").exit_code == 4
    assert cli("--ledger", location, "submit", "-k", "b", input="good").exit_code == 0
    assert cli("--ledger", location, "submit", "-k", "c", input="meh").exit_code == 11
    assert cli("--ledger", location, "next").exit_code == 0
    return location


# Every command that opens the ledger, as a user under the wrong --quest would type it.
COMMANDS = [
    ["scan"],
    ["scan", "x", "y"],
    ["next"],
    ["next", "--peek"],
    ["submit", "-k", "a"],
    ["release", "--expired"],
    ["status"],
    ["log", "a"],
    ["items"],
    ["review"],
    ["resolve", "c", "--accept", "-n", "fine"],
    ["reopen", "b", "--reason", "again"],
    ["rejudge", "--apply"],
    ["export"],
    ["loop", "--model", "no-such-backend"],
    ["replay", "--from", "-"],
    ["report"],
    ["report", "--html", "board.html"],
    ["gate", "check"],
    ["ledger", "check"],
    ["serve", "--host", "256.256.256.256"],
    ["mcp"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_command_refuses_another_quest_s_ledger_and_changes_nothing(
    cli: Cli, store_harness: StoreHarness, command: list[str]
) -> None:
    location = seeded(cli, store_harness)
    same = untouched(store_harness, location)
    out = cli(
        "--ledger", location, *command, input='{"key": "a", "output": "bad"}\n', quest=OTHER_REF
    )
    assert out.exit_code == 2, out.output
    assert out.stdout == ""
    (line,) = out.stderr.splitlines()  # one line, naming both quests and what to do
    assert "belongs to quest 'tiny' (tests.kit:TINY)" in line
    assert f"not to quest 'other' ({OTHER_REF})" in line
    assert "nothing was changed" in line
    assert "--ledger" in line and "--quest tests.kit:TINY" in line
    assert same()
    assert not Path("board.html").exists()
    assert cli("--ledger", location, "status").exit_code == 0  # its own quest still opens it


def test_a_json_error_names_both_quests(cli: Cli, store_harness: StoreHarness) -> None:
    location = seeded(cli, store_harness)
    out = cli("--ledger", location, "status", "--json", quest=OTHER_REF)
    assert out.exit_code == 2
    error = json.loads(out.stdout)
    assert error["exit_code"] == 2 and "belongs to quest 'tiny'" in error["error"]
    assert error["ledger_quest"] == {"name": "tiny", "origin": "tests.kit:TINY"}
    assert error["quest"] == {"name": "other", "origin": OTHER_REF}


def test_the_stop_hook_tells_the_agent_once_of_another_quest_s_ledger(
    cli: Cli, store_harness: StoreHarness
) -> None:
    location = seeded(cli, store_harness)
    same = untouched(store_harness, location)
    fresh = '{"session_id": "s1"}'
    out = cli("--ledger", location, "hook", "stop", input=fresh, quest=OTHER_REF)
    assert out.exit_code == 0  # never 2: Claude Code would read it as a block
    told = json.loads(out.stdout)  # in the channel the agent reads, not only on stderr
    assert told["decision"] == "block" and "belongs to quest 'tiny'" in told["reason"]
    again = '{"session_id": "s1", "stop_hook_active": true}'
    out = cli("--ledger", location, "hook", "stop", input=again, quest=OTHER_REF)
    assert out.exit_code == 0 and "decision" not in json.loads(out.stdout)  # never trapped
    assert "belongs to quest 'tiny'" in json.loads(out.stdout)["systemMessage"]
    assert same()


def test_a_ledger_from_before_adopts_the_first_quest_once_and_says_so(
    cli: Cli, store_harness: StoreHarness
) -> None:
    location = store_harness.missing()
    store = open_store(location, create=True)  # as a reins that recorded no quest made it
    store.add([("a", {"word": "a"}), ("b", {"word": "b"})])
    store.close()
    first = cli("--ledger", location, "status")
    assert first.exit_code == 0
    assert first.stderr.count("recorded no quest") == 1
    assert "it now belongs to quest 'tiny' (tests.kit:TINY)" in first.stderr
    again = cli("--ledger", location, "status")
    assert again.exit_code == 0 and "recorded no quest" not in again.stderr
    same = untouched(store_harness, location)
    refused = cli("--ledger", location, "scan", "z", quest=OTHER_REF)
    assert refused.exit_code == 2 and "belongs to quest 'tiny'" in refused.stderr
    assert same()


def test_a_changed_gate_of_the_same_quest_stays_allowed(
    cli: Cli, store_harness: StoreHarness
) -> None:
    location = seeded(cli, store_harness)
    status = cli("--ledger", location, "status", "--json", quest=NEWER_GATE_REF)
    assert status.exit_code == 0, status.output
    assert json.loads(status.stdout)["older_gate"] > 0
    rejudged = cli("--ledger", location, "rejudge", quest=NEWER_GATE_REF)
    assert rejudged.exit_code == 0, rejudged.output


def test_a_folder_quest_by_a_relative_or_an_absolute_path_is_one_quest(cli: Cli) -> None:
    assert cli("new", "--pack", "example", "mine", quest=None).exit_code == 0
    assert cli("--ledger", "l.reins.db", "scan", quest="mine").exit_code == 0
    for ref in (str(Path("mine").resolve()), "./mine/", "mine/quest.toml"):
        out = cli("--ledger", "l.reins.db", "status", quest=ref)
        assert out.exit_code == 0, (ref, out.output)
        assert "recorded no quest" not in out.stderr
    check = json.loads(
        cli("--ledger", "l.reins.db", "ledger", "check", "--json", quest=None).stdout
    )
    assert check["quest"] == {"name": "mine", "origin": str(Path("mine").resolve())}


def test_ledger_check_says_whose_ledger_it_is(cli: Cli, store_harness: StoreHarness) -> None:
    location = seeded(cli, store_harness)
    anyone = cli("--ledger", location, "ledger", "check", quest=None)
    assert anyone.exit_code == 0
    assert "sound (quest 'tiny' (tests.kit:TINY); 4 items" in anyone.stdout
    data = json.loads(cli("--ledger", location, "ledger", "check", "--json", quest=None).stdout)
    assert data["quest"] == {"name": "tiny", "origin": "tests.kit:TINY"}


@pytest.mark.parametrize("to", ["sqlite", "postgres"])
def test_ledger_copy_carries_the_quest(
    cli: Cli, tmp_path: Path, request: pytest.FixtureRequest, to: str
) -> None:
    source = seeded(cli, SQLiteHarness(tmp_path))
    (tmp_path / "copies").mkdir()
    target: StoreHarness = (
        SQLiteHarness(tmp_path / "copies")
        if to == "sqlite"
        else request.getfixturevalue("postgres_harness")
    )
    copy = target.missing()
    out = cli("ledger", "copy", source, copy, quest=None)  # no quest given: the source's goes
    assert out.exit_code == 0, out.output
    same = untouched(target, copy)
    refused = cli("--ledger", copy, "status", quest=OTHER_REF)
    assert refused.exit_code == 2 and "belongs to quest 'tiny' (tests.kit:TINY)" in refused.stderr
    assert same()
    mine = cli("--ledger", copy, "status")
    assert mine.exit_code == 0 and "recorded no quest" not in mine.stderr
    again = cli("ledger", "copy", source, target.missing(), quest=OTHER_REF)
    assert again.exit_code == 2 and "belongs to quest 'tiny'" in again.stderr


def test_new_gives_the_copy_a_name_of_its_own(cli: Cli) -> None:
    out = cli("new", "--pack", "example", "mine", quest=None)
    assert out.exit_code == 0, out.output
    assert "as quest 'mine' (its own ledger: mine.reins.db)" in out.stdout
    assert 'name = "mine"' in Path("mine/quest.toml").read_text()
    assert cli("scan", quest="mine").exit_code == 0
    assert cli("scan", quest="example").exit_code == 0  # the shipped pack
    assert Path("mine.reins.db").exists() and Path("example.reins.db").exists()
    # One --ledger for both: the copy is another quest, never taken for the pack.
    assert cli("--ledger", "shared.reins.db", "scan", quest="example").exit_code == 0
    shared = cli("--ledger", "shared.reins.db", "scan", quest="mine")
    assert shared.exit_code == 2 and "belongs to quest 'example'" in shared.stderr
    default = json.loads(cli("new", "--pack", "example", "--json", quest=None).stdout)
    assert default == {"pack": "example", "folder": "my-example", "quest": "my-example"}
    clash = cli("new", "--pack", "example", "x/example", quest=None)
    assert clash.exit_code == 2 and "share its ledger (example.reins.db)" in clash.stderr
    assert not Path("x/example").exists()


def _mislabel(harness: StoreHarness, location: str) -> None:
    """Set the version back by hand, as the issue found it: tables of a later version claiming
    v2."""
    if harness.name == "sqlite":
        conn = sqlite3.connect(location)
        conn.execute("PRAGMA journal_mode = DELETE")  # rollback journal: no WAL to hide in
        conn.execute("PRAGMA user_version = 2")
        conn.commit()
        conn.close()
    else:
        harness.execute(location, "UPDATE reins_schema SET version = 2")


def _current(harness: StoreHarness) -> int:
    """The schema version of the harness's engine (each engine counts its own)."""
    return SQLITE_VERSION if harness.name == "sqlite" else POSTGRES_VERSION


def test_a_ledger_claiming_an_older_schema_is_refused_untouched_and_says_what_to_do(
    cli: Cli, store_harness: StoreHarness
) -> None:
    location = seeded(cli, store_harness)
    _mislabel(store_harness, location)
    same = untouched(store_harness, location)
    current = _current(store_harness)
    for command in (["status"], ["scan", "z"], ["ledger", "check"]):
        out = cli("--ledger", location, *command)
        assert out.exit_code == 1, out.output
        (line,) = out.stderr.splitlines()
        assert "says schema version 2" in line and "later version's" in line
        assert f"its tables are those of version {current}" in line and "left untouched" in line
        fix = (
            f"PRAGMA user_version = {current}"
            if store_harness.name == "sqlite"
            else f"SET version = {current}"
        )
        assert fix in line
        assert same()


def test_a_failed_migration_leaves_the_ledger_untouched_and_says_what_to_do(
    cli: Cli, store_harness: StoreHarness
) -> None:
    location = store_harness.make_unmigratable()
    assert location is not None
    same = untouched(store_harness, location)
    for command in (["status"], ["scan", "z"]):
        out = cli("--ledger", location, *command)
        assert out.exit_code == 1, out.output
        (line,) = out.stderr.splitlines()
        assert f"migrating it from schema version 2 to {_current(store_harness)} failed" in line
        assert "is mine" in line
        assert "rolled back" in line and "Fix the cause" in line
        assert same()


@pytest.mark.parametrize("pack", sorted(folders()))
def test_new_renames_every_shipped_pack_and_changes_nothing_else(cli: Cli, pack: str) -> None:
    assert cli("new", "--pack", pack, "copy of it", quest=None).exit_code == 0
    copied = tomllib.loads(Path("copy of it/quest.toml").read_text(encoding="utf-8"))
    shipped = tomllib.loads((folders()[pack] / "quest.toml").read_text(encoding="utf-8"))
    assert copied.pop("name") == "copy-of-it" and shipped.pop("name") == pack
    assert copied == shipped


def test_a_quest_s_own_command_refuses_another_quest_s_ledger(cli: Cli) -> None:
    """``for_quest`` hands the group a quest as a value, or as the reference it loads."""
    made = CliRunner().invoke(make_group(TINY, "tinyq"), ["scan"])
    assert made.exit_code == 0, made.output
    same = untouched(SQLiteHarness(Path.cwd()), "tiny.reins.db")
    theirs = ["--ledger", "tiny.reins.db", "status"]
    out = CliRunner().invoke(make_group(OTHER, "otherq", OTHER_REF), theirs)
    assert out.exit_code == 2
    assert "belongs to quest 'tiny', not to quest 'other' (tests.test_cli_quest_binding:OTHER)" in (
        out.stderr
    )
    assert out.stderr.rstrip().endswith("pass the quest that made it: 'tiny'")
    assert same()
