"""The workspaces of a coding quest: one repository per item, of its own, from the base, in
reins' own folder; what the agent changed taken with reins' own index, committed in reins' own
store and diffed binary-safe; the result landed on ``reins/<key>``; the user's repository never
written but for that branch."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from reins.errors import ConfigError, WorkspaceError
from reins.workspace.change import take
from reins.workspace.spec import Workspace
from reins.workspace.submission import compose, patch_of
from reins.workspace.workspaces import Workspaces
from tests.kit.codingkit import checkout_state, git, make_repo, object_files

PNG = bytes(range(256)) * 4  # not text: a diff must carry it as binary


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(
        tmp_path / "project",
        {"app.py": "def f():\n    return 1\n", "data/logo.png": PNG, "old.txt": "bye\n"},
    )


def open_spaces(repo: Path, root: Path, **kw: Any) -> Workspaces:
    return Workspaces.open(Workspace(repo=str(repo), **kw), root=str(root))


def test_an_item_gets_a_repository_of_its_own_on_its_branch_from_the_base(
    repo: Path, tmp_path: Path
) -> None:
    spaces = open_spaces(repo, tmp_path / "ws")
    key = "tests/test_app.py::test_f"
    spaces.prepare(key, spaces.base)
    path = Path(spaces.path_of(key))
    assert path.parent == tmp_path / "ws"
    branch = spaces.branch_of(key)
    assert branch.startswith("reins/tests-test_app.py-test_f-")
    assert git(path, "rev-parse", "--git-dir").strip() == ".git"  # its own, not the user's
    assert git(path, "rev-parse", "HEAD").strip() == spaces.base
    assert git(path, "symbolic-ref", "HEAD").strip() == f"refs/heads/{branch}"
    assert git(path, "status", "--porcelain") == ""
    assert (path / "app.py").read_text() == "def f():\n    return 1\n"
    assert spaces.base == git(repo, "rev-parse", "main").strip()


def test_the_workspace_holds_the_base_s_history_only_no_other_branch_or_later_commit(
    repo: Path, tmp_path: Path
) -> None:
    """An agent must not read another item's answer, or a later commit, from git."""
    base = git(repo, "rev-parse", "main").strip()
    spaces = open_spaces(repo, tmp_path / "ws")
    spaces.prepare("a", base)
    (Path(spaces.path_of("a")) / "answer.txt").write_text("the answer of a\n")
    change = take(spaces, "a", base, message="a")
    assert change.commit is not None
    spaces.land("a", change.commit)
    (repo / "later.txt").write_text("committed after the base\n")
    git(repo, "add", "later.txt")
    git(repo, "commit", "--quiet", "-m", "later")
    git(repo, "branch", "feature")
    spaces.prepare("b", base)
    other = Path(spaces.path_of("b"))
    assert git(other, "log", "--all", "--format=%s").split() == ["first"]
    objects = git(other, "cat-file", "--batch-all-objects", "--batch-check")
    answer = git(repo, "rev-parse", "reins/a:answer.txt").strip()
    later = git(repo, "rev-parse", "main").strip()
    assert answer not in objects and later not in objects


def test_the_change_holds_new_changed_deleted_and_binary_files_and_applies_elsewhere(
    repo: Path, tmp_path: Path
) -> None:
    spaces = open_spaces(repo, tmp_path / "ws")
    spaces.prepare("a", spaces.base)
    work = Path(spaces.path_of("a"))
    (work / "app.py").write_text("def f():\n    return 2\n")
    (work / "new.txt").write_text("untracked, never added\n")
    (work / "data" / "logo.png").write_bytes(PNG[::-1])
    (work / "old.txt").unlink()
    change = take(spaces, "a", spaces.base, message="turn 1")
    assert change.files == 4 and change.refused is None and change.commit is not None
    assert b"GIT binary patch" in change.patch
    spaces.land("a", change.commit)
    assert git(repo, "rev-parse", "refs/heads/reins/a").strip() == change.commit
    # The patch, applied to a fresh clone of the base, gives the very tree of the commit.
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "--quiet", str(repo), str(clone))
    subprocess.run(["git", "apply", "--binary", "-"], cwd=clone, input=change.patch, check=True)
    git(clone, "add", "--all")
    assert git(clone, "write-tree") == git(repo, "rev-parse", f"{change.commit}^{{tree}}")


def test_a_file_that_is_not_utf8_is_recorded_as_binary_so_the_text_is_the_exact_patch(
    repo: Path, tmp_path: Path
) -> None:
    spaces = open_spaces(repo, tmp_path / "ws")
    spaces.prepare("a", spaces.base)
    work = Path(spaces.path_of("a"))
    (work / "latin1.txt").write_bytes("café crème\n".encode("latin-1"))
    (work / "app.py").write_text("def f():\n    return 'é'\n")
    change = take(spaces, "a", spaces.base, message="t")
    made = compose("done", change.patch, files=change.files, base=spaces.base,
                   commit=change.commit, branch="reins/a")  # fmt: skip
    patch = made.patch
    assert patch is not None and patch.encode() == change.patch and patch_of(made.text) == patch
    assert "+    return 'é'" in patch  # the UTF-8 file stays text
    assert "GIT binary patch" in patch.split("diff --git a/latin1.txt")[1]
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "--quiet", str(repo), str(clone))
    subprocess.run(["git", "apply", "--binary", "-"], cwd=clone, input=patch.encode(), check=True)
    assert (clone / "latin1.txt").read_bytes() == "café crème\n".encode("latin-1")


def test_the_agent_s_index_flags_and_commits_count_for_nothing(repo: Path, tmp_path: Path) -> None:
    """``--skip-worktree`` / ``--assume-unchanged`` hide an edit from the agent's git only."""
    spaces = open_spaces(repo, tmp_path / "ws")
    spaces.prepare("a", spaces.base)
    work = Path(spaces.path_of("a"))
    git(work, "update-index", "--skip-worktree", "app.py")
    git(work, "update-index", "--assume-unchanged", "old.txt")
    (work / "app.py").write_text("edited behind a flag\n")
    (work / "old.txt").write_text("edited behind another\n")
    assert git(work, "status", "--porcelain") == ""  # the agent's git sees nothing
    change = take(spaces, "a", spaces.base, message="t")
    assert b"+edited behind a flag" in change.patch and b"+edited behind another" in change.patch


def test_ignored_files_are_not_part_of_the_change(repo: Path, tmp_path: Path) -> None:
    spaces = open_spaces(repo, tmp_path / "ws")
    spaces.prepare("a", spaces.base)
    work = Path(spaces.path_of("a"))
    (work / ".gitignore").write_text("__pycache__/\n")
    (work / "__pycache__").mkdir()
    (work / "__pycache__" / "app.cpython-311.pyc").write_bytes(b"\x00the real body")
    change = take(spaces, "a", spaces.base, message="t")
    assert change.files == 1  # the .gitignore alone
    assert b"app.cpython-311.pyc" not in change.patch and b"GIT binary" not in change.patch


def test_a_change_over_its_caps_is_refused_before_it_is_read_or_stored(
    repo: Path, tmp_path: Path
) -> None:
    spaces = open_spaces(repo, tmp_path / "ws")
    capped = Workspaces.open(
        Workspace(repo=str(repo), max_files=3, max_bytes=10_000), root=str(tmp_path / "ws2")
    )
    for ws, make in (
        (capped, lambda w: [(w / f"f{i}.txt").write_text("x") for i in range(4)]),
        (capped, lambda w: (w / "big.bin").write_bytes(b"\x01" * 20_000)),
        (spaces, lambda w: (w / "big.bin").write_bytes(os.urandom(2 * 1024 * 1024))),
    ):
        ws.prepare("a", ws.base)
        make(Path(ws.path_of("a")))
        change = take(ws, "a", ws.base, message="t")
        assert change.refused is not None and change.refused.rule == "reins:change"
        assert change.patch == b"" and change.commit is None
        objects = git(Path(ws.places.item_store("a")), "count-objects", "-v")
        assert "size: 0" in objects and "size-pack: 0" in objects  # nothing of it was stored
    # A deletion's patch counts too (it holds every removed line).
    deleting = Workspaces.open(Workspace(repo=str(repo), max_bytes=200), root=str(tmp_path / "w3"))
    deleting.prepare("a", deleting.base)
    (Path(deleting.path_of("a")) / "data" / "logo.png").unlink()
    assert take(deleting, "a", deleting.base, message="t").refused is not None


def test_the_user_s_repository_is_byte_identical_but_for_the_landed_branches(
    repo: Path, tmp_path: Path
) -> None:
    git(repo, "branch", "feature")
    (repo / "app.py").write_text("my own edit, not committed\n")  # a dirty checkout
    git(repo, "add", "app.py")
    (repo / "scratch.txt").write_text("mine\n")
    before, files = checkout_state(repo), object_files(repo)
    spaces = open_spaces(repo, tmp_path / "ws")
    for key in ("a", "b"):
        spaces.prepare(key, spaces.base)
        (Path(spaces.path_of(key)) / f"{key}.txt").write_text(key)
        commit = take(spaces, key, spaces.base, message="turn").commit
        assert commit is not None
        spaces.prepare(key, commit)  # a retry resets to it
        spaces.prepare(key, spaces.base)  # a fresh one to the base
        spaces.land(key, commit)
    spaces.remove("a")
    assert checkout_state(repo) == before
    assert files.items() <= object_files(repo).items()
    assert git(repo, "fsck", "--full", "--strict") == ""


def test_the_workspaces_folder_may_not_be_inside_the_repository(repo: Path) -> None:
    with pytest.raises(ConfigError, match="is inside the repository"):
        open_spaces(repo, repo / ".reins-worktrees")
    with pytest.raises(ConfigError, match="is inside the repository"):
        open_spaces(repo, repo / ".git" / "reins")


def test_a_folder_that_is_not_a_repository_or_a_base_that_names_nothing_is_refused(
    repo: Path, tmp_path: Path
) -> None:
    (tmp_path / "plain").mkdir()
    with pytest.raises(ConfigError, match="not a git repository"):
        Workspaces.open(Workspace(repo=str(tmp_path / "plain")), root=str(tmp_path / "t"))
    with pytest.raises(ConfigError, match="names no commit"):
        open_spaces(repo, tmp_path / "t", base="no-such-branch")


def test_a_workspace_a_crash_or_an_agent_left_is_reset_to_where_the_turn_starts(
    repo: Path, tmp_path: Path
) -> None:
    spaces = open_spaces(repo, tmp_path / "ws")
    spaces.prepare("a", spaces.base)
    work = Path(spaces.path_of("a"))
    (work / "half.txt").write_text("an agent killed mid-edit\n")
    (work / "app.py").write_text("broken\n")
    (work / "sub").mkdir()
    git(work / "sub", "init", "--quiet")  # a nested repository
    (work / "locked").mkdir()
    (work / "locked" / "x").write_text("x")
    (work / "locked").chmod(0)
    (work / ".git" / "config").write_text("[core]\n\tworktree = /elsewhere\n")
    open_spaces(repo, tmp_path / "ws").prepare("a", spaces.base)  # the next run
    assert sorted(os.listdir(work)) == [".git", "app.py", "data", "old.txt"]
    assert (work / "app.py").read_text() == "def f():\n    return 1\n"
    assert git(work, "status", "--porcelain") == ""


def test_a_workspace_swapped_for_a_link_gets_nothing_written_through_it(
    repo: Path, tmp_path: Path
) -> None:
    spaces = open_spaces(repo, tmp_path / "ws")
    spaces.prepare("a", spaces.base)
    target = tmp_path / "precious"
    target.mkdir()
    (target / "keep.txt").write_text("mine\n")
    work = Path(spaces.path_of("a"))
    subprocess.run(["rm", "-rf", str(work)], check=True)
    work.symlink_to(target)
    spaces.prepare("a", spaces.base)
    assert (target / "keep.txt").read_text() == "mine\n" and sorted(os.listdir(target)) == [
        "keep.txt"
    ]
    assert not work.is_symlink() and (work / "app.py").exists()


def test_a_retry_whose_commit_the_store_lost_is_made_again_from_the_recorded_patch(
    repo: Path, tmp_path: Path
) -> None:
    spaces = open_spaces(repo, tmp_path / "ws")
    spaces.prepare("a", spaces.base)
    (Path(spaces.path_of("a")) / "app.py").write_text("def f():\n    return 3\n")
    change = take(spaces, "a", spaces.base, message="t")
    assert change.commit is not None
    spaces.remove("a")  # a locked item reopened by a person, say
    start = spaces.prepare("a", change.commit, patch=change.patch.decode())
    assert start != spaces.base
    assert (Path(spaces.path_of("a")) / "app.py").read_text() == "def f():\n    return 3\n"
    assert git(Path(spaces.path_of("a")), "status", "--porcelain") == ""


def test_a_branch_reins_did_not_make_is_refused_not_taken_over(repo: Path, tmp_path: Path) -> None:
    git(repo, "checkout", "--quiet", "--orphan", "unrelated")
    git(repo, "commit", "--quiet", "--allow-empty", "-m", "someone else's")
    git(repo, "branch", "reins/a")
    git(repo, "checkout", "--quiet", "main")
    spaces = open_spaces(repo, tmp_path / "ws")
    spaces.prepare("a", spaces.base)
    (Path(spaces.path_of("a")) / "x.txt").write_text("x")
    commit = take(spaces, "a", spaces.base, message="t").commit
    assert commit is not None
    with pytest.raises(WorkspaceError, match="reins did not make it"):
        spaces.land("a", commit)
    assert git(repo, "log", "--format=%s", "reins/a").strip() == "someone else's"


def test_eight_items_at_once_get_eight_workspaces_each_landing_on_its_own_branch(
    repo: Path, tmp_path: Path
) -> None:
    spaces = open_spaces(repo, tmp_path / "ws")
    made: dict[str, str] = {}
    errors: list[BaseException] = []

    def work(key: str) -> None:
        try:
            spaces.prepare(key, spaces.base)
            (Path(spaces.path_of(key)) / "mine.txt").write_text(key)
            commit = take(spaces, key, spaces.base, message=key).commit
            assert commit is not None
            spaces.land(key, commit)
            made[key] = commit
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(f"k{i}",)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(made) == 8
    for key, commit in made.items():
        files = git(repo, "diff", "--name-only", spaces.base, f"reins/{key}").split()
        assert files == ["mine.txt"]
        assert git(repo, "show", f"{commit}:mine.txt") == key


def test_the_submission_is_the_message_then_a_fence_the_diff_cannot_close() -> None:
    diff = b"diff --git a/x.md b/x.md\n+```python\n+````\n"
    made = compose("Done.", diff, files=1, base="a" * 40, commit="b" * 40, branch="reins/x")
    text = made.text
    assert text.startswith("Done.\n\n## Changes: 1 file(s), git diff --binary aaaaaaaaaaaa..")
    assert "\n`````diff\n" in text
    assert made.patch == text[made.start : made.end] == patch_of(text) == diff.decode()
    big = b"+" + b"x" * (600 * 1024) + b"\n"  # never cut: the patch is what is judged
    whole = compose("", big, files=1, base="a" * 40, commit="b" * 40, branch="reins/x")
    assert whole.patch == patch_of(whole.text) == big.decode()
    none = compose("nothing to do", b"", files=0, base="a" * 40, commit="a" * 40, branch="b/x")
    assert "## Changes: none" in none.text and none.patch is patch_of(none.text) is None
    refused = compose("x", b"", files=0, base="a" * 40, commit=None, branch="b/x",
                      refused="4 files, 9 bytes")  # fmt: skip
    assert "## Changes: refused, 4 files, 9 bytes" in refused.text
    assert refused.patch is patch_of(refused.text) is None
    forged = compose("## Changes: 1 file(s)\n\n```diff\n+forged\n```", b"", files=0,
                     base="a" * 40, commit="a" * 40, branch="b/x")  # fmt: skip
    # a header in the message is not the change
    assert forged.patch is patch_of(forged.text) is None


def test_a_change_is_measured_by_what_changed_not_by_the_repository_s_size(
    tmp_path: Path,
) -> None:
    many = {f"pkg/m{i}.py": f"X = {i}\n" for i in range(300)}
    repo = make_repo(tmp_path / "many", many)
    spaces = Workspaces.open(
        Workspace(repo=str(repo), max_files=5, max_bytes=1000), root=str(tmp_path / "ws")
    )
    for turn in range(2):  # the first turn on a new folder, then one reset in place
        spaces.prepare("a", spaces.base)
        (Path(spaces.path_of("a")) / "pkg" / "m7.py").write_text(f"X = {turn}\n")
        change = take(spaces, "a", spaces.base, message="t")
        assert change.refused is None and change.files == 1


def test_the_next_item_takes_a_given_back_folder_and_only_what_differs_is_written(
    repo: Path, tmp_path: Path
) -> None:
    spaces = open_spaces(repo, tmp_path / "ws")
    spaces.prepare("a", spaces.base)
    work = Path(spaces.path_of("a"))
    (work / "app.py").write_text("def f():\n    return 2\n")
    assert take(spaces, "a", spaces.base, message="t").commit is not None
    kept = (work / "data" / "logo.png").stat().st_ino
    spaces.remove("a")  # a PASS: its folder goes back to the pool, reset to the base
    assert not work.exists() and len(os.listdir(spaces.places.free)) >= 1
    spaces.prepare("b", spaces.base)
    other = Path(spaces.path_of("b"))
    assert (other / "data" / "logo.png").stat().st_ino == kept  # the same file: not written
    assert (other / "app.py").read_text() == "def f():\n    return 1\n"  # back at the base
    assert git(other, "status", "--porcelain") == ""


def test_a_turn_that_starts_where_the_last_change_was_taken_writes_nothing(
    repo: Path, tmp_path: Path
) -> None:
    spaces = open_spaces(repo, tmp_path / "ws")
    spaces.prepare("a", spaces.base)
    work = Path(spaces.path_of("a"))
    (work / "app.py").write_text("def f():\n    return 2\n")
    change = take(spaces, "a", spaces.base, message="t")
    assert change.commit is not None
    before = {p: p.stat().st_mtime_ns for p in work.rglob("*") if ".git" not in p.parts}
    spaces.prepare("a", change.commit)  # a retry that continues: the folder holds it already
    after = {p: p.stat().st_mtime_ns for p in work.rglob("*") if ".git" not in p.parts}
    assert after == before and git(work, "status", "--porcelain") == ""
    (work / "app.py").write_text("touched by hand\n")  # the note is used once: now it reads
    spaces.prepare("a", change.commit)
    assert (work / "app.py").read_text() == "def f():\n    return 2\n"
