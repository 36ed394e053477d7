"""The project folder: every command finds ``reins.toml`` by walking up from the working folder,
as git finds ``.git``, and reads the paths in it from the folder that holds it.

Run from a subfolder, a command uses the project's quest, ledger and results file, never a new
ledger of its own. Flags and ``REINS_*`` variables stay relative to the working folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.kit import ROOT, Cli


@pytest.fixture
def project(tmp_path: Path, cli: Cli) -> Path:
    """A project made by `reins init --template declarative`, seeded from its own folder, where
    ``cli`` runs (with no --quest: reins.toml names it)."""
    root = tmp_path / "project"
    root.mkdir()
    cli.folder, cli.quest, cli.driver = root, None, "ann"
    assert cli("init", "--template", "declarative", "--name", "caps").exit_code == 0
    assert cli("scan").exit_code == 0
    return root


def files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def test_a_command_in_a_subfolder_uses_the_projects_quest_ledger_and_results(
    project: Path, cli: Cli
) -> None:
    deep = project / "src" / "deep"
    deep.mkdir(parents=True)
    cli.folder = deep
    status = cli("status", "--json")
    assert status.exit_code == 0, status.output
    assert json.loads(status.stdout)["total"] == 3
    lease = json.loads(cli("next", "--json").stdout)
    assert lease["key"] == "alpha"
    done = cli("submit", "-k", "alpha", "-t", lease["token"], input='{"answer": "ALPHA"}')
    assert done.exit_code == 0, done.output
    assert files(deep) == []  # no ledger, results or anything else of its own
    results = (project / "caps-results.jsonl").read_text().splitlines()
    assert [json.loads(r)["key"] for r in results] == ["alpha"]


def test_the_nearest_reins_toml_wins(project: Path, cli: Cli) -> None:
    inner = project / "inner"
    (inner / "below").mkdir(parents=True)
    (inner / "reins.toml").write_text(
        f'[reins]\nquest = "{project / "caps"}"\nledger = "inner.reins.db"\n'
    )
    cli.folder = inner / "below"
    assert cli("scan").exit_code == 0
    assert (inner / "inner.reins.db").exists() and not (inner / "below" / "inner.reins.db").exists()


def test_flags_and_environment_stay_relative_to_the_working_folder(project: Path, cli: Cli) -> None:
    sub = project / "sub"
    sub.mkdir()
    cli.folder = sub
    assert cli("--ledger", "flag.reins.db", "scan").exit_code == 0
    assert cli("scan", env={"REINS_LEDGER": "env.reins.db"}).exit_code == 0
    assert files(sub) == ["env.reins.db", "flag.reins.db"]
    missing = cli("--quest", "./caps", "status")  # the quest folder is one level up
    assert missing.exit_code == 2 and "./caps" in missing.stderr


@pytest.mark.slow  # reins in processes of its own
def test_a_python_quest_beside_reins_toml_imports_from_a_subfolder(tmp_path: Path) -> None:
    """`reins init` writes quest = "NAME:quest": the module beside reins.toml must import from
    anywhere below it (a fresh process: nothing imported or on sys.path from an earlier run)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "REINS_DRIVER": "ann"}

    def reins(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "reins.cli", *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )

    assert reins(tmp_path, "init", "--name", "wordquest").returncode == 0
    (tmp_path / "notes").mkdir()
    scanned = reins(tmp_path / "notes", "scan")
    assert scanned.returncode == 0, scanned.stderr
    assert "in " + str(tmp_path / "wordquest.reins.db") in scanned.stdout
    taken = reins(tmp_path / "notes", "next", "--json")
    assert taken.returncode == 0, taken.stderr
    assert json.loads(taken.stdout)["key"] == "alpha"
    (tmp_path / "notes" / "answer.json").write_text('{"answer": "alpha"}')
    failed = reins(tmp_path / "notes", "submit", "-k", "alpha", "--in", "answer.json")
    assert failed.returncode == 4, failed.stderr
    # Fresh judging processes import the quest from the project folder too.
    checked = reins(tmp_path / "notes", "gate", "check")
    assert checked.returncode == 0, checked.stderr
    assert "1 submission(s) judged alike" in checked.stdout
    assert files(tmp_path / "notes") == ["answer.json"]


def test_init_inside_a_project_says_that_the_new_reins_toml_now_applies_below_it(
    project: Path, cli: Cli
) -> None:
    sub = project / "sub"
    sub.mkdir()
    cli.folder = sub
    out = cli("init", "--name", "nested")
    assert out.exit_code == 0, out.output
    assert (sub / "reins.toml").exists()
    assert f"note: {project / 'reins.toml'}" in out.stderr
    assert "nearest reins.toml" in out.stderr
    fresh = project / "elsewhere"
    fresh.mkdir()
    (project / "reins.toml").write_text("[reins]\nbroken = 1\n")  # a parent's bad file
    cli.folder = fresh
    assert cli("init", "--name", "again").exit_code == 0  # does not stop init in a subfolder


def test_a_quest_given_with_q_wins_over_reins_toml_and_keeps_to_its_own_ledger(
    project: Path, cli: Cli
) -> None:
    """``reins -q PACK scan`` after ``reins init``: the pack runs on its own ledger, and the
    project's quest keeps its own, untouched."""
    scanned = cli("scan", quest="emails")
    assert scanned.exit_code == 0, scanned.output
    assert "emails.reins.db" in scanned.stdout
    assert (project / "emails.reins.db").is_file()
    assert json.loads(cli("status", "--json").stdout)["total"] == 3  # caps, still its own
    emails = json.loads(cli("status", "--json", quest="emails").stdout)
    assert emails["total"] == 11
    (project / "sub").mkdir()
    cli.folder = project / "sub"  # from below too: the pack's default ledger, in the project
    assert json.loads(cli("status", "--json", quest="emails").stdout)["total"] == 11
    assert files(project / "sub") == []
    # The same quest as reins.toml's, named with -q, is still on reins.toml's ledger.
    cli.folder = project
    assert json.loads(cli("status", "--json", quest="caps").stdout)["total"] == 3
    # --ledger still wins over everything.
    mixed = cli("--ledger", "caps.reins.db", "status", quest="emails")
    assert mixed.exit_code == 2 and "belongs to quest 'caps'" in mixed.stderr


def test_reins_toml_s_results_file_is_its_quest_s(project: Path, cli: Cli) -> None:
    (project / "reins.toml").write_text(
        '[reins]\nquest = "caps"\nledger = "caps.reins.db"\nresults = "out.jsonl"\n'
    )
    assert cli("scan", quest="example").exit_code == 0
    done = cli("submit", "-k", "alpha", input='{"answer": "ALPHA"}', quest="example")
    assert done.exit_code == 0, done.output
    assert not (project / "out.jsonl").exists()
    assert (project / "example-results.jsonl").is_file()


def test_a_cli_made_for_one_quest_runs_another_given_with_q(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``for_quest``'s console script: its own quest, on its own ledger (not reins.toml's),
    unless ``-q`` names another; ``REINS_QUEST`` does not move it."""
    from reins.cli import for_quest

    main = for_quest("emails", name="mails")

    def run(*args: str) -> int:
        monkeypatch.setattr(sys, "argv", ["mails", *args])
        with pytest.raises(SystemExit) as exit_info:
            main()
        return int(exit_info.value.code or 0)

    monkeypatch.chdir(project)
    monkeypatch.setenv("REINS_DRIVER", "me")
    assert run("scan") == 0
    assert (project / "emails.reins.db").is_file()  # not caps.reins.db, reins.toml's
    assert run("-q", "example", "scan") == 0
    assert (project / "example.reins.db").is_file()
    monkeypatch.setenv("REINS_QUEST", "news5w1h")
    assert run("scan") == 0
    assert not (project / "news5w1h.reins.db").exists()
