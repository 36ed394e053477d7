"""`reins rules` is the whole checklist: the gate's catalog, then every fact the quest's prepare
and reins itself can raise, each with the coaching the next prompt carries after it."""

from __future__ import annotations

import json
from pathlib import Path

from reins.quests.emails import quest as EMAILS
from reins.turn.raised import raised_beside_the_gate
from tests.kit.cli import reins


def rules(*args: str) -> str:
    out = reins(*args, "rules")
    assert out.exit_code == 0, out.output
    return out.stdout


def test_a_python_quest_lists_what_its_prepare_refuses_with_its_coaching() -> None:
    beside = {r.id: r for r in raised_beside_the_gate(EMAILS)}
    assert beside["json-shape"].by == "prepare"
    assert beside["json-shape"].coaching == EMAILS.coaching["json-shape"]
    assert beside["reins:submission"].by == "reins"
    # a text quest has no workspace: none of the workspace's facts can come
    assert not {"reins:change", "reins:judge-owned", "reins:link", "reins:shadow"} & set(beside)
    # a rule of the catalog is listed once, in the catalog, even with coaching
    assert not {e.id for e in EMAILS.judge.catalog()} & set(beside)
    text = rules("-q", "emails")
    head, _, tail = text.partition("raised beside the gate")
    assert "address-in-source" in head and "json-shape" in tail
    assert f"coaching: {EMAILS.coaching['json-shape']}" in tail


def test_a_coding_quest_lists_the_workspace_s_own_facts() -> None:
    # (each test runs in an empty folder of its own: tests/kit/__init__.py)
    made = reins("new", "--pack", "coding", "play")
    assert made.exit_code == 0, made.output
    listed = reins("-q", "play", "rules", "--json")
    rows = {r["id"]: r for r in json.loads(listed.stdout)}
    for own in (
        "reins:submission",
        "reins:change",
        "reins:judge-owned",
        "reins:link",
        "reins:shadow",
        "reins:hidden",
    ):
        assert rows[own]["raised_by"] == "reins" and rows[own]["level"] == "FAIL"
    assert rows["only-textkit"]["raised_by"] == "gate" and rows["only-textkit"]["coaching"]
    # its land rules (land.md): what `reins land` judges after each merge, with their coaching,
    # never read as facts of its prepare
    for land in ("landed-test", "kept"):
        assert rows[land]["raised_by"] == "land" and rows[land]["coaching"], rows[land]
        assert "pytest" in rows[land]["description"]
    assert not [r for r in rows.values() if r["raised_by"] == "prepare"]
    text = reins("-q", "play", "rules").stdout
    assert "FAIL   kept" in text.partition("raised beside the gate")[2]


def test_a_json_document_quest_lists_the_reader_s_json_fact(tmp_path: Path) -> None:
    folder = tmp_path / "q"
    folder.mkdir()
    (folder / "quest.toml").write_text(
        'name = "q"\n\n[items]\nsource = "items.jsonl"\n\n[prompt]\noutput = "json"\n'
        'template = "Give {{ key }} as JSON."\n',
        encoding="utf-8",
    )
    (folder / "items.jsonl").write_text('{"id": "a"}\n', encoding="utf-8")
    (folder / "gate.md").write_text(
        "# gate\n\n## Rules\n\n| id | level | check | parameters | coaching |\n"
        "|----|-------|-------|------------|----------|\n"
        "| has-a | FAIL | regex | pattern = 'a' | Say a. |\n",
        encoding="utf-8",
    )
    text = rules("-q", str(folder))
    assert "reins:json" in text and "not one JSON value" in text
    assert "coaching: Answer with the JSON value only" in text
