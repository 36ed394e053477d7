"""The worktrees of a coding quest: one per item, on its own branch, from the base, in reins' own
folder; what the agent changed committed and diffed binary-safe; the user's checkout untouched."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

import pytest

from reins.errors import ConfigError, WorkspaceError
from reins.workspace.snapshot import snapshot
from reins.workspace.spec import Workspace
from reins.workspace.submission import compose, patch_of
from reins.workspace.trees import Worktrees
from tests.kit.codingkit import checkout_state, git, make_repo

PNG = bytes(range(256)) * 4  # not text: a diff must carry it as binary


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(
        tmp_path / "project",
        {"app.py": "def f():\n    return 1\n", "data/logo.png": PNG, "old.txt": "bye\n"},
    )


def open_trees(repo: Path, root: Path, **kw: str) -> Worktrees:
    return Worktrees.open(Workspace(repo=str(repo), **kw), root=str(root))


def test_an_item_gets_a_worktree_on_its_own_branch_from_the_base_outside_the_checkout(
    repo: Path, tmp_path: Path
) -> None:
    trees = open_trees(repo, tmp_path / "trees")
    tree = trees.prepare("tests/test_app.py::test_f", trees.base)
    assert Path(tree.path).parent == tmp_path / "trees"
    assert tree.branch.startswith("reins/tests-test_app.py-test_f-")
    assert git(tree.path, "rev-parse", "HEAD").strip() == trees.base
    assert git(tree.path, "symbolic-ref", "HEAD").strip() == f"refs/heads/{tree.branch}"
    assert (Path(tree.path) / "app.py").read_text() == "def f():\n    return 1\n"
    assert tree.base == git(repo, "rev-parse", "main").strip()


def test_the_snapshot_holds_new_changed_deleted_and_binary_files_and_applies_elsewhere(
    repo: Path, tmp_path: Path
) -> None:
    trees = open_trees(repo, tmp_path / "trees")
    tree = trees.prepare("a", trees.base)
    work = Path(tree.path)
    (work / "app.py").write_text("def f():\n    return 2\n")
    (work / "new.txt").write_text("untracked, never added\n")
    (work / "data" / "logo.png").write_bytes(PNG[::-1])
    (work / "old.txt").unlink()
    snap = snapshot(trees, tree, message="turn 1")
    assert snap.files == 4
    assert b"GIT binary patch" in snap.diff
    assert git(tree.path, "status", "--porcelain") == ""  # the worktree is clean on its commit
    assert git(repo, "rev-parse", f"refs/heads/{tree.branch}").strip() == snap.commit
    # The diff, applied to a fresh clone of the base, gives the very tree of the commit.
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "--quiet", str(repo), str(clone))
    subprocess.run(["git", "apply", "--binary", "-"], cwd=clone, input=snap.diff, check=True)
    git(clone, "add", "--all")
    assert git(clone, "write-tree") == git(repo, "rev-parse", f"{snap.commit}^{{tree}}")


def test_the_user_s_checkout_index_and_branches_are_byte_identical_after_everything(
    repo: Path, tmp_path: Path
) -> None:
    git(repo, "branch", "feature")
    (repo / "app.py").write_text("my own edit, not committed\n")  # a dirty checkout
    git(repo, "add", "app.py")
    (repo / "scratch.txt").write_text("mine\n")
    before = checkout_state(repo)
    trees = open_trees(repo, tmp_path / "trees")
    for key in ("a", "b"):
        tree = trees.prepare(key, trees.base)
        (Path(tree.path) / f"{key}.txt").write_text(key)
        commit = snapshot(trees, tree, message="turn").commit
        trees.prepare(key, commit)  # a retry resets to it
        trees.prepare(key, trees.base)  # a fresh one to the base
    trees.remove("a")
    assert checkout_state(repo) == before


def test_the_worktrees_folder_may_not_be_inside_the_checkout(repo: Path) -> None:
    with pytest.raises(ConfigError, match="inside the repository's own checkout"):
        open_trees(repo, repo / ".reins-worktrees")


def test_a_folder_that_is_not_a_repository_or_a_base_that_names_nothing_is_refused(
    repo: Path, tmp_path: Path
) -> None:
    (tmp_path / "plain").mkdir()
    with pytest.raises(ConfigError, match="not a git repository"):
        Worktrees.open(Workspace(repo=str(tmp_path / "plain")), root=str(tmp_path / "t"))
    with pytest.raises(ConfigError, match="names no commit"):
        open_trees(repo, tmp_path / "t", base="no-such-branch")


def test_a_worktree_a_crash_left_is_reused_and_reset_to_where_the_turn_starts(
    repo: Path, tmp_path: Path
) -> None:
    trees = open_trees(repo, tmp_path / "trees")
    tree = trees.prepare("a", trees.base)
    (Path(tree.path) / "half.txt").write_text("an agent killed mid-edit\n")
    (Path(tree.path) / "app.py").write_text("broken\n")
    again = open_trees(repo, tmp_path / "trees").prepare("a", trees.base)  # the next run
    assert again.path == tree.path
    assert not (Path(tree.path) / "half.txt").exists()
    assert (Path(tree.path) / "app.py").read_text() == "def f():\n    return 1\n"
    listed = [w for w in trees.listed() if w.path == tree.path]
    assert len(listed) == 1


def test_a_worktree_git_never_finished_making_is_made_again(repo: Path, tmp_path: Path) -> None:
    trees = open_trees(repo, tmp_path / "trees")
    tree = trees.prepare("a", trees.base)
    name = os.path.basename(trees.admin(tree.path))
    # What `git worktree add` leaves when killed mid-checkout: locked "initializing".
    (repo / ".git" / "worktrees" / name / "locked").write_text("initializing")
    (Path(tree.path) / "app.py").unlink()
    again = trees.prepare("a", trees.base)
    assert (Path(again.path) / "app.py").exists()


def test_a_branch_reins_did_not_make_is_refused_not_taken_over(repo: Path, tmp_path: Path) -> None:
    git(repo, "checkout", "--quiet", "--orphan", "unrelated")
    git(repo, "commit", "--quiet", "--allow-empty", "-m", "someone else's")
    git(repo, "branch", "reins/a")
    git(repo, "checkout", "--quiet", "main")
    trees = open_trees(repo, tmp_path / "trees")
    with pytest.raises(WorkspaceError, match="reins did not make it"):
        trees.prepare("a", trees.base)
    assert git(repo, "log", "--format=%s", "reins/a").strip() == "someone else's"


def test_eight_items_made_at_once_get_eight_worktrees_each_on_its_own_branch(
    repo: Path, tmp_path: Path
) -> None:
    trees = open_trees(repo, tmp_path / "trees")
    made: dict[str, str] = {}
    errors: list[BaseException] = []

    def work(key: str) -> None:
        try:
            tree = trees.prepare(key, trees.base)
            (Path(tree.path) / "mine.txt").write_text(key)
            made[key] = snapshot(trees, tree, message=key).commit
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(f"k{i}",)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for key, commit in made.items():
        files = git(repo, "diff", "--name-only", trees.base, f"reins/{key}").split()
        assert files == ["mine.txt"]
        assert git(repo, "show", f"{commit}:mine.txt") == key
    assert len([w for w in trees.listed() if w.branch and "reins/" in w.branch]) == 8


def test_the_submission_is_the_message_then_a_fence_the_diff_cannot_close() -> None:
    diff = b"diff --git a/x.md b/x.md\n+```python\n+````\n"
    text = compose("Done.", diff, files=1, base="a" * 40, commit="b" * 40, branch="reins/x")
    assert text.startswith("Done.\n\n## Changes: 1 file(s), git diff --binary aaaaaaaaaaaa..")
    assert "\n`````diff\n" in text
    assert patch_of(text) == diff.decode()
    big = b"+" + b"x" * (600 * 1024) + b"\n"
    cut = compose("", big, files=1, base="a" * 40, commit="b" * 40, branch="reins/x")
    assert len(cut.encode()) < 1024 * 1024 and "the whole change is branch reins/x" in cut
    none = compose("nothing to do", b"", files=0, base="a" * 40, commit="a" * 40, branch="b/x")
    assert "## Changes: none" in none and patch_of(none) is None


def test_a_worktree_an_agent_broke_or_deleted_is_made_again(repo: Path, tmp_path: Path) -> None:
    trees = open_trees(repo, tmp_path / "trees")
    tree = trees.prepare("a", trees.base)
    (Path(tree.path) / ".git").unlink()  # git in it would now find some other repository
    again = trees.prepare("a", trees.base)
    assert git(again.path, "symbolic-ref", "HEAD").strip() == f"refs/heads/{tree.branch}"
    subprocess.run(["rm", "-rf", tree.path], check=True)
    again = trees.prepare("a", trees.base)
    assert (Path(again.path) / "app.py").exists()
