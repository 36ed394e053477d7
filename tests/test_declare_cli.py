"""A quest folder end to end through the CLI: scan, next, submit, loop, rules, gate; and init,
new and packs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reins import State
from reins.store.engines import open_store
from reins.store.walk import iter_items
from reins.testing import FakeBackend
from tests.kit import ROOT, Cli
from tests.kit.declare_checks import (
    CAPITALS_GATE,
    CAPITALS_ITEMS,
    CAPITALS_TOML,
    register,
    write_quest,
)
from tests.kit.loopkit import registered


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli) -> Path:
    """The capitals quest as a folder, ``./capitals``: the quest ``cli`` runs."""
    register(monkeypatch)
    cli.quest, cli.driver = "./capitals", "alice"
    gate = CAPITALS_GATE + "\n## Edges\n\n| rule | supersedes |\n|---|---|\n| shape | right |\n"
    write_quest(tmp_path / "capitals", gate, CAPITALS_TOML, CAPITALS_ITEMS)
    return tmp_path / "capitals"


def test_scan_next_submit_on_a_folder_quest(folder: Path, cli: Cli) -> None:
    assert cli("scan").exit_code == 0
    out = cli("next", "--json")
    assert out.exit_code == 0, out.output
    lease = json.loads(out.stdout)
    assert lease["key"] == "France"
    assert lease["user"] == "What is the capital of France?"
    assert "## Examples" in lease["system"] and "Italy" in lease["system"]
    wrong = cli("submit", "-k", "France", "-t", lease["token"], input='{"capital": "Lyon"}')
    assert wrong.exit_code == 4, wrong.output
    assert "right" in wrong.stdout and '"Paris"' in wrong.stdout
    garbled = cli("submit", "-k", "France", input="Paris")
    assert garbled.exit_code == 11 and "reins:json" in garbled.stdout  # max_tries = 2
    lease = json.loads(cli("next", "--json").stdout)
    right = cli("submit", "-k", lease["key"], input='{"capital": "Madrid"}')
    assert right.exit_code == 0, right.output


def test_loop_works_a_folder_quest_with_a_fake_backend(folder: Path, cli: Cli) -> None:
    assert cli("scan").exit_code == 0
    fake = FakeBackend({"France": ['{"capital": "Lyon"}', '{"capital": "Paris"}'],
                        "Spain": ['{"capital": "Madrid"}']})  # fmt: skip
    with registered(w=fake):
        out = cli("loop", "--model", "fake:w", "--json")
    assert out.exit_code == 0, out.output
    store = open_store("capitals.reins.db")
    try:
        states = {i.key: (i.state, i.tries) for i in iter_items(store)}
    finally:
        store.close()
    assert states == {"France": (State.PASS, 1), "Spain": (State.PASS, 0)}
    retried = [c.prompt for c in fake.calls if c.key == "France" and c.turn == 2]
    assert len(retried) == 1 and "Name the capital city." in retried[0].user  # the coaching
    assert "Name the capital city." not in retried[0].system  # the shared prefix does not move


def test_rules_shows_level_check_and_parameters(folder: Path, cli: Cli) -> None:
    out = cli("rules", "--json")
    assert out.exit_code == 0, out.output
    rows = json.loads(out.stdout)
    assert [(r["id"], r["level"], r["check"]) for r in rows if r["raised_by"] == "gate"] == [
        ("shape", "FAIL", "has_field"), ("right", "FAIL", "same")
    ]  # fmt: skip
    assert [r["id"] for r in rows if r["raised_by"] != "gate"] == ["reins:json", "reins:submission"]
    assert rows[0]["parameters"] == 'field = "capital"' and rows[0]["supersedes"] == ["right"]
    text = cli("rules").stdout
    assert 'FAIL   shape  has_field: field = "capital"' in text


def test_gate_prints_gate_md(folder: Path, cli: Cli) -> None:
    out = cli("gate")
    assert out.exit_code == 0 and out.stdout == (folder / "gate.md").read_text()


def test_gate_of_a_python_quest_says_where_its_rules_are(folder: Path, cli: Cli) -> None:
    out = cli("gate", quest="emails")
    assert out.exit_code == 2 and "reins rules" in out.output


def test_a_document_error_is_one_line_with_exit_2(folder: Path, cli: Cli) -> None:
    (folder / "gate.md").write_text(CAPITALS_GATE.replace("has_field", "has_feld"))
    out = cli("scan")
    assert out.exit_code == 2
    assert (
        out.output.startswith("error: ") and "gate.md:9:18: unknown check 'has_feld'" in out.output
    )
    assert "Traceback" not in out.output


def test_init_declarative_writes_a_folder_quest_and_config(
    cli: Cli,
) -> None:
    out = cli("init", "--template", "declarative", "--name", "caps", quest=None)
    assert out.exit_code == 0, out.output
    assert 'quest = "./caps"' in Path("reins.toml").read_text()
    assert {p.name for p in Path("caps").iterdir()} == {
        "quest.toml",
        "gate.md",
        "items.jsonl",
        "schema.json",
    }
    import tomllib

    assert tomllib.loads(Path("caps/quest.toml").read_text())["name"] == "caps"
    from reins.declare.tables import read_tables, table_under

    rules = table_under(read_tables(Path("caps/gate.md").read_text(), "gate.md"), "rules")
    assert rules is not None and [r[2].text for r in rules.rows] == ["json_schema", "regex"]


def test_init_python_is_still_the_default(cli: Cli) -> None:
    out = cli("init", "--name", "wordy", quest=None)
    assert out.exit_code == 0 and Path("wordy.py").exists()
    assert 'quest = "wordy:quest"' in Path("reins.toml").read_text()


def test_packs_lists_the_shipped_packs(cli: Cli) -> None:
    out = cli("packs", "--json", quest=None)
    assert out.exit_code == 0, out.output
    rows = {r["name"]: r for r in json.loads(out.stdout)}
    assert rows["example"]["items"] == 3
    assert rows["example"]["description"] == "write a word in capital letters"
    assert "example" in cli("packs", quest=None).stdout


def test_new_copies_a_pack_and_refuses_to_overwrite(
    cli: Cli,
) -> None:
    out = cli("new", "--pack", "example", "mine", quest=None)
    assert out.exit_code == 0, out.output
    assert (Path("mine") / "gate.md").read_text() == (
        ROOT / "src/reins/packs/example/gate.md"
    ).read_text()
    again = cli("new", "--pack", "example", "mine", quest=None)
    assert again.exit_code == 2 and "already exists" in again.output
    unknown = cli("new", "--pack", "nope", quest=None)
    assert unknown.exit_code == 2 and "Known: " in unknown.output and "example" in unknown.output


def test_the_example_pack_judges_with_the_standard_checks() -> None:
    """Runs once the standard library's json_schema and regex checks are installed."""
    pytest.importorskip("reins.checks.schema")
    pytest.importorskip("reins.checks.regex")
    from reins import Item, load_quest
    from reins.gate import Context

    quest = load_quest("example")
    item = Item("alpha", State.TODO, 0, {"id": "alpha", "word": "alpha"})
    outcomes = []
    for raw in ('{"answer": "ALPHA"}', '{"answer": "alpha"}', '{"answr": "ALPHA"}'):
        ctx = quest.prepare(item, raw)
        assert isinstance(ctx, Context)
        verdict = quest.judge.evaluate(ctx)
        outcomes.append((verdict.outcome.value, verdict.root_cause))
    assert outcomes == [("PASS", None), ("FAIL", "capitals"), ("FAIL", "shape")]


def test_pack_entry_points_load_the_pack_even_when_it_has_python_code() -> None:
    """``reins.packs:<name>_pack`` is what the ``reins.quests`` entry points name; a pack with a
    module of its own (``reins.packs.ifeval``) must not shadow it once imported."""
    import importlib
    from importlib.metadata import entry_points

    import reins.packs

    named = {ep.name: ep.value for ep in entry_points(group="reins.quests")}
    for name in ("ifeval", "news5w1h"):
        assert named.get(name) == f"reins.packs:{name}_pack"
    importlib.import_module("reins.packs.ifeval")
    quest = reins.packs.example_pack()
    assert quest.name == "example"
    with pytest.raises(AttributeError):
        reins.packs.nothing_pack  # noqa: B018


@pytest.mark.parametrize(
    ("name", "text", "line", "first"),
    [
        ("dup.jsonl", '{"id": "a"}\n{"id": "b"}\n\n{"id": "a"}\n', 4, 1),
        ("dup.csv", "id,note\na,x\nb,y\na,z\n", 4, 2),
    ],
    ids=["jsonl", "csv"],
)
def test_a_duplicate_key_in_an_items_file_is_refused_at_its_line(
    cli: Cli, tmp_path: Path, name: str, text: str, line: int, first: int
) -> None:
    """Not counted "already present" (the ledger's word for an item scanned before): the file
    itself holds two items of one key, and which one was meant is the person's to say."""
    assert cli("new", "--pack", "example", "mine", quest=None).exit_code == 0
    (tmp_path / name).write_text(text)
    out = cli("scan", name, quest="mine")
    assert out.exit_code == 2, out.output
    assert f"{name}:{line}: key 'a' is a duplicate in this file: line {first} has it" in out.stderr
    assert "already present" not in out.output
