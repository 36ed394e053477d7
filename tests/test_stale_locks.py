"""A git killed with its reins leaves its lock file (``index.lock``, a ref's ``.lock``) in
reins' own stores and trees; the next turn, or the next judgment, clears it and works, while a
lock a live reins' git holds is left alone. Never a lock of the user's repository."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from reins.workspace import processes
from reins.workspace.change import take
from reins.workspace.git import argv, environment
from tests.kit.codingkit import (
    FILE_HOLDS_KEY,
    Judging,
    agent,
    cli,
    git,
    make_repo,
    quest_repo,
)


def dead_runner() -> str:
    """A reins process that is no more, as a marker names it."""
    gone = subprocess.Popen(["true"])
    gone.wait()
    return f"{gone.pid}:1"


def holding_git(store: str, index: str, tree: str, runner: str) -> subprocess.Popen[bytes]:
    """A real git that takes ``index``'s lock and waits on its stdin (``update-index`` reads
    what to stage there), started as the reins ``runner`` starts git on ``tree``."""
    env = environment({"GIT_INDEX_FILE": index,
                       processes.MARKER: f"{tree}#{runner}#git"})  # fmt: skip
    proc = subprocess.Popen(
        argv([f"--git-dir={store}", "update-index", "-z", "--index-info"]),
        cwd=os.path.dirname(store), env=env, stdin=subprocess.PIPE,
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while not os.path.exists(index + ".lock"):
        assert time.monotonic() < deadline and proc.poll() is None, "git took no lock"
        time.sleep(0.01)
    return proc


def killed(proc: subprocess.Popen[bytes]) -> None:
    proc.kill()
    proc.wait()
    assert proc.stdin is not None
    proc.stdin.close()


def test_a_git_killed_in_an_items_index_and_refs_leaves_locks_the_next_turn_clears(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    judging = Judging(repo, tmp_path / "root")
    spaces = judging.spaces
    spaces.prepare("k", spaces.base)
    store, index = spaces.places.item_store("k"), spaces.places.index("k")
    killed(
        holding_git(store, index, spaces.path_of("k"), dead_runner())
    )  # SIGKILLed holding the lock
    assert os.path.exists(index + ".lock")
    # A ref and HEAD as git's ref transaction leaves them when killed before its rename.
    ref = Path(store, "refs", "heads", *spaces.branch_of("k").split("/"))
    ref.parent.mkdir(parents=True, exist_ok=True)
    Path(f"{ref}.lock").write_text(spaces.base + "\n")
    Path(store, "HEAD.lock").write_text("ref: refs/heads/main\n")

    assert spaces.prepare("k", spaces.base) == spaces.base  # before: "index.lock: File exists"
    Path(spaces.path_of("k"), "b.txt").write_text("b\n")
    change = take(spaces, "k", spaces.base, message="turn")
    assert change.commit is not None and b"b.txt" in change.patch
    assert not [p for p in (index + ".lock", f"{ref}.lock") if os.path.exists(p)]


def test_a_judges_tree_whose_git_was_killed_is_judged_in_again(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    judging = Judging(repo, tmp_path / "root")
    try:
        first = judging.tree("k", {"b.txt": "b\n"})
        judging.close()
        judging.judges.settle()
        judge = judging.spaces.places.judge
        slot = os.path.join(judge, os.path.basename(first.path))
        for index in (f"{slot}.index", f"{slot}.index.next"):
            Path(index + ".lock").write_bytes(b"DIRC")  # what git had written when killed
        again = judging.tree("j", {"c.txt": "c\n"})
        assert again.path == first.path  # the same tree, not abandoned for a new one
        assert again.facts == ()  # not "a patch that does not apply"
        assert Path(again.path, "c.txt").read_text() == "c\n"
    finally:
        judging.close()


def test_a_lock_a_live_reins_git_holds_is_left_and_a_dead_reins_git_is_ended(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    spaces = Judging(repo, tmp_path / "root").spaces
    spaces.prepare("k", spaces.base)
    store, index, tree = (
        spaces.places.item_store("k"),
        spaces.places.index("k"),
        spaces.path_of("k"),
    )
    live = holding_git(store, index, tree, processes.runner())  # this reins, alive
    try:
        assert spaces.unlock("k") == []
        assert os.path.exists(index + ".lock") and live.poll() is None
    finally:
        killed(live)
    os.unlink(index + ".lock")
    orphan = holding_git(store, index, tree, dead_runner())  # still running; its reins is gone
    try:
        spaces.unlock("k")
        assert orphan.wait(timeout=10) != 0  # ended before its lock was taken from it
        assert not os.path.exists(index + ".lock")
    finally:
        killed(orphan)


def test_the_users_repository_keeps_its_own_locks(tmp_path: Path) -> None:
    """reins clears locks only in its own folders: a person's git may be at work."""
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    mine = repo / ".git" / "index.lock"
    mine.write_bytes(b"")
    spaces = Judging(repo, tmp_path / "root").spaces
    spaces.prepare("k", spaces.base)
    assert mine.exists()


@pytest.mark.slow
def test_a_loop_after_a_kill_that_left_git_locks_everywhere_passes_its_item(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    quest_repo(tmp_path / "q", ["k"], FILE_HOLDS_KEY)
    assert cli("-q", "q", "scan").exit_code == 0
    idle = agent(tmp_path / "idle.py", 'print("nothing")\n')
    assert cli("-q", "q", "loop", "--model", f"cmd:{idle}", "--max-turns", "1").exit_code == 0
    own = tmp_path / ".reins-worktrees" / "q" / ".reins"
    locks = [own / "index" / "k.lock", own / "items" / "k.git" / "HEAD.lock",
             own / "judge" / "0.index.lock", own / "judge" / "0.index.next.lock"]  # fmt: skip
    for lock in locks:
        assert lock.parent.is_dir(), lock
        lock.write_bytes(b"")
    doing = agent(tmp_path / "doing.py", 'open("k.txt", "w").write("k")\nprint("done")\n')
    out = cli("-q", "q", "loop", "--model", f"cmd:{doing}")
    assert out.exit_code == 0, out.output
    assert "PASS" in cli("-q", "q", "status").output
    assert git(tmp_path / "q", "diff", "--name-only", "main", "reins/q/k").split() == ["k.txt"]
    assert not [lock for lock in locks if lock.exists()]
