"""``[workspace]`` in quest.toml and ``Workspace`` in a Python quest: what a coding quest
declares, checked where it is written; and the coding pack that declares one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reins import Quest
from reins.declare.questdoc import load_folder
from reins.errors import ConfigError, DocumentError
from reins.workspace.spec import Workspace
from tests.kit.codingkit import cli, git

GATE = """# g

## Rules

| id | level | check | parameters | coaching |
|----|-------|-------|------------|----------|
| ok | FAIL | regex | pattern = 'x' | x |
"""


def folder(tmp_path: Path, workspace: str, output: str = "text") -> Path:
    q = tmp_path / "q"
    q.mkdir(exist_ok=True)
    (q / "quest.toml").write_text(
        'name = "q"\n\n[items]\nsource = "items.jsonl"\n\n'
        f'[prompt]\noutput = "{output}"\ntemplate = "do {{{{ key }}}}"\n\n' + workspace
    )
    (q / "gate.md").write_text(GATE)
    (q / "items.jsonl").write_text(json.dumps({"id": "a"}) + "\n")
    return q


def test_the_workspace_table_becomes_the_quest_s_workspace(tmp_path: Path) -> None:
    q = folder(
        tmp_path,
        '[workspace]\nrepo = "../project"\nbase = "v1.0"\nbranch = "agents/{key}"\n'
        'keep = "none"\nretry = "fresh"\nsandbox = "bwrap"\nworktrees = "../trees"\n',
    )
    work = load_folder(q).workspace
    assert work == Workspace(
        repo=str(tmp_path / "project"),
        base="v1.0",
        branch="agents/{key}",
        keep="none",
        retry="fresh",
        sandbox="bwrap",
        worktrees=str(tmp_path / "trees"),
    )


def test_read_paths_are_the_quest_folder_s_and_a_tilde_is_the_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    q = folder(tmp_path, '[workspace]\nread = ["../data", "~/notes.txt", "/etc/hosts"]\n')
    work = load_folder(q).workspace
    assert work is not None and work.read == (
        str(tmp_path / "data"), str(tmp_path / "home" / "notes.txt"), "/etc/hosts")  # fmt: skip


def test_the_defaults_are_the_quest_folder_its_head_and_reins_branches(tmp_path: Path) -> None:
    work = load_folder(folder(tmp_path, "[workspace]\n")).workspace
    assert work == Workspace(repo=str(tmp_path / "q"))
    assert (work.base, work.branch, work.keep, work.retry, work.sandbox) == (
        "HEAD",
        "reins/{quest}/{key}",
        "failed",
        "continue",
        "bwrap",  # sandboxed unless a quest or a run says none
    )
    assert "conftest.py" in work.judge_globs and "*.pyc" in work.judge_globs
    assert (work.max_files, work.max_bytes, work.hidden) == (1000, 1024 * 1024, None)
    assert load_folder(folder(tmp_path, "")).workspace is None


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ('keep = "sometimes"', "keep: expected one of failed, all, none"),
        ('retry = "again"', "retry: expected one of continue, fresh"),
        ('sandbox = "docker"', "sandbox: expected one of bwrap, none"),
        ('judge = "tests/**"', "judge must be an array"),
        ('judge = ["tests/../x"]', ". and .. have no meaning"),
        ('judge = [""]', "expected a path pattern"),
        ("max_files = 0", "max_files: expected a whole number above 0"),
        ('max_bytes = "1M"', "max_bytes must be"),
        ("hidden = 1", "hidden must be a string"),
        ('branch = "{key}"', "needs a folder before {key}"),
        ('branch = "reins/fixed"', "expected {key} once"),
        ('branch = "reins/{key}..x"', "not a valid git branch name"),
        ("base = 3", "base must be a string"),
        ('colour = "blue"', "unknown key 'colour' in [workspace]"),
    ],
)
def test_a_bad_value_is_refused_at_its_line(tmp_path: Path, line: str, said: str) -> None:
    q = folder(tmp_path, f'[workspace]\nrepo = "."\n{line}\n')
    with pytest.raises(DocumentError) as caught:
        load_folder(q)
    assert caught.value.line == 12, str(caught.value)
    assert said in caught.value.message


def test_a_workspace_quest_submits_text_not_json(tmp_path: Path) -> None:
    with pytest.raises(DocumentError, match='has output = "text"'):
        load_folder(folder(tmp_path, "[workspace]\n", output="json"))


def test_a_python_quest_takes_a_workspace_value_checked_when_made() -> None:
    with pytest.raises(ConfigError, match="keep: expected one of"):
        Workspace(repo=".", keep="maybe")
    quest = Quest(
        name="py",
        seed=lambda args: [],
        render=lambda item: "",
        prepare=lambda item, raw: None,  # type: ignore[arg-type,return-value]
        rules=[],
        workspace=Workspace(repo=".", base="main"),
    )
    assert quest.workspace is not None and quest.workspace.base == "main"
    with pytest.raises(ConfigError, match="must be a Workspace"):
        Quest(
            name="py",
            seed=lambda args: [],
            render=lambda item: "",
            prepare=lambda item, raw: None,  # type: ignore[arg-type,return-value]
            rules=[],
            workspace={"repo": "."},  # type: ignore[arg-type]
        )


def test_new_makes_the_coding_pack_a_git_repository_with_its_base_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    out = cli("new", "--pack", "coding", "play")
    assert out.exit_code == 0, out.output
    play = tmp_path / "play"
    assert git(play, "log", "--format=%s").splitlines() == [
        "The coding pack, as reins new copied it"
    ]
    assert git(play, "status", "--porcelain", "--untracked-files=all") == ""
    tracked = git(play, "ls-files").split()
    assert "textkit/__init__.py" in tracked and "tests/test_textkit_tasks.py" in tracked
    quest = load_folder(play)
    assert quest.name == "play" and quest.workspace is not None
    assert quest.workspace.repo == str(play.resolve())
    listed = cli("packs", "--json")
    assert "coding" in [p["name"] for p in json.loads(listed.stdout)]


def test_new_leaves_a_pack_without_a_workspace_a_plain_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli("new", "--pack", "example", "mine").exit_code == 0
    assert not (tmp_path / "mine" / ".git").exists()
