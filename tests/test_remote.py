"""Many hosts, one remote (``[workspace] remote``): hosts that hold only the remote's URL, the
ledger and the quest work one coding quest, each PASS on the remote before its lock, and
``reins land`` killed on one host is finished on another, on the tree an uninterrupted land
makes.

Each "host" is a folder of its own (the quest's documents, its workspaces, its copy of the
remote), none a git repository; they share a ledger and a bare repository standing for the
remote. The quest (tests/kit/landkit.py) has a, b and c, whose a and b conflict.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reins import SQLiteStore
from reins.errors import Exit
from reins.store.walk import iter_items
from tests.kit.codingkit import git
from tests.kit.landkit import ROOT, land_quest, stand_in

pytestmark = pytest.mark.slow
ITEMS: list[dict[str, Any]] = [
    {"id": "a", "shared": True},
    {"id": "b", "shared": True},
    {"id": "c"},
]
DOCUMENTS = ("quest.toml", "gate.md", "land.md", "items.jsonl")


def shared(tmp: Path, name: str = "shared") -> tuple[Path, Path]:
    """The remote (a bare repository of the quest's project) and the ledger's path."""
    source = land_quest(tmp / "source" / "q", ITEMS)
    folder = tmp / name
    folder.mkdir()
    git(tmp, "clone", "--quiet", "--bare", str(source), str(folder / "remote.git"))
    return folder / "remote.git", folder / "q.reins.db"


def host(tmp: Path, name: str, remote: Path) -> Path:
    """A host's folder: the quest's documents only, naming the remote; workspaces beside."""
    quest = tmp / name / "q"
    quest.mkdir(parents=True)
    for document in DOCUMENTS:
        shutil.copyfile(tmp / "source" / "q" / document, quest / document)
    toml = (quest / "quest.toml").read_text()
    here = f'[workspace]\nremote = "{remote}"\nworktrees = "../worktrees"\n'
    (quest / "quest.toml").write_text(toml.replace("[workspace]\n", here))
    return tmp / name


def reins(where: Path, ledger: Path | str, *args: str, crash_at: str | None = None
          ) -> subprocess.CompletedProcess[str]:  # fmt: skip
    """``reins --ledger LEDGER -q q ARGS`` in a process of its own, on host ``where``."""
    env = {k: v for k, v in os.environ.items() if k != "REINS_CRASH_AT"}
    env["PYTHONPATH"] = str(ROOT / "src")
    if crash_at is not None:
        env["REINS_CRASH_AT"] = crash_at
    argv = [sys.executable, "-m", "reins.cli", "--ledger", str(ledger), "-q", "q", *args]
    return subprocess.run(argv, cwd=where, env=env, capture_output=True, text=True, timeout=600)


def work(where: Path, ledger: Path | str) -> None:
    done = reins(where, ledger, "loop", "--model", stand_in(where))
    assert done.returncode == 0, done.stdout + done.stderr


def land(where: Path, ledger: Path | str, *, crash_at: str | None = None) -> int:
    done = reins(where, ledger, "land", "integration", "--order", "key", crash_at=crash_at)
    if crash_at is None:
        assert done.returncode in (0, Exit.NOT_LANDED), done.stdout + done.stderr
    return done.returncode


def passes(ledger: Path | str) -> dict[str, str | None]:
    """Each PASS item's key and the commit its lock recorded."""
    with SQLiteStore.open(ledger) as led:
        found = {}
        for item in iter_items(led):
            _, log = led.snapshot(item.key)
            if item.state.value == "PASS":
                found[item.key] = log[-1].notes.commit
        return found


def on_remote(remote: Path, ref: str) -> str:
    return git(remote, "rev-parse", "--verify", "--quiet", ref).strip()


def test_hosts_with_only_the_url_work_a_quest_and_push_every_pass(tmp_path: Path) -> None:
    remote, ledger = shared(tmp_path)
    one, two = host(tmp_path, "one", remote), host(tmp_path, "two", remote)
    assert reins(one, ledger, "scan").returncode == 0
    loops = [subprocess.Popen([sys.executable, "-m", "reins.cli", "--ledger", str(ledger), "-q",
                               "q", "loop", "--model", stand_in(h)], cwd=h,
                              env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for h in (one, two)]  # fmt: skip
    for proc in loops:
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
    found = passes(ledger)
    assert sorted(found) == ["a", "b", "c"]
    for key, commit in found.items():  # each PASS on the remote, on its item's branch
        assert on_remote(remote, f"refs/heads/reins/q/{key}") == commit
    assert not (one / "q" / ".git").exists() and not (two / "q" / ".git").exists()
    # Results in one place: each loop appended its own locks to its host's file; any host
    # writes every lock to a new file.
    every = tmp_path / "every.jsonl"
    assert reins(two, ledger, "export", "--out", str(every)).returncode == 0
    lines = [json.loads(line) for line in every.read_text().splitlines()]
    assert sorted(line["key"] for line in lines) == ["a", "b", "c"]


@pytest.mark.parametrize("step", ["land-merged", "land-ref", "land-item", "land-branch"])
def test_a_land_killed_on_one_host_is_finished_on_another(tmp_path: Path, step: str) -> None:
    remote, ledger = shared(tmp_path)
    one, two = host(tmp_path, "one", remote), host(tmp_path, "two", remote)
    assert reins(one, ledger, "scan").returncode == 0
    work(one, ledger)
    # The reference: the same remote and ledger, landed without a kill, from a third host.
    reference = tmp_path / "reference"
    shutil.copytree(remote.parent, reference)
    three = host(tmp_path, "three", reference / "remote.git")
    mine = reference / "q.reins.db"

    assert land(one, ledger, crash_at=step) == -signal.SIGKILL
    assert land(two, ledger) == Exit.NOT_LANDED  # b conflicts: land/b is added, once
    assert land(three, mine) == Exit.NOT_LANDED
    for where, led in ((two, ledger), (three, mine)):  # land/b worked, landed in b's place
        work(where, led)
        assert land(where, led) == 0
    for led in (ledger, mine):
        with SQLiteStore.open(led) as opened:
            assert [i.key for i in iter_items(opened)] == ["a", "b", "c", "land/b"]
            assert opened.check() == []
    ours, theirs = remote, reference / "remote.git"
    assert on_remote(ours, "integration^{tree}") == on_remote(theirs, "integration^{tree}")
    landed = git(ours, "log", "--first-parent", "--reverse",
                 "--format=%(trailers:key=Reins-Landed,valueonly)", "integration")  # fmt: skip
    assert [line for line in landed.splitlines() if line] == ["a", "c", "b"]
    assert git(ours, "show", "integration:shared.txt") == "top\na\nb\nbottom\n"
    fsck = subprocess.run(["git", "fsck", "--full", "--no-dangling"], cwd=ours,
                          capture_output=True, text=True)  # fmt: skip
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr


def test_a_push_is_pinned_to_the_value_it_expects_and_done_once(tmp_path: Path) -> None:
    """A host whose view of a ref is stale moves nothing; a push found done does nothing."""
    from reins.errors import WorkspaceError
    from reins.workspace.remote import publish, push
    from reins.workspace.repository import Repository

    remote, _ = shared(tmp_path)
    work = tmp_path / "work"
    git(tmp_path, "clone", "--quiet", str(remote), str(work))
    base = git(work, "rev-parse", "HEAD").strip()
    made = []
    for word in ("one", "two"):
        (work / "f.txt").write_text(word)
        git(work, "add", "f.txt")
        git(work, "commit", "--quiet", "-m", word)
        made.append(git(work, "rev-parse", "HEAD").strip())
    store, ref, url = str(work / ".git"), "refs/heads/reins/q/a", str(remote)
    copy = Repository(None, str(remote), str(remote))
    publish(store, url, made[0], ref, copy=copy, base=base)
    assert on_remote(remote, ref) == made[0]
    with pytest.raises(WorkspaceError, match="another host moved it"):
        push(store, url, made[1], ref, old=None)  # it expected no such ref: stale
    with pytest.raises(WorkspaceError, match="another host moved it"):
        push(store, url, made[1], ref, old=base)
    assert on_remote(remote, ref) == made[0]
    publish(store, url, made[1], ref, copy=copy, base=base)  # from what is there
    publish(store, url, made[1], ref, copy=copy, base=base)  # done already: nothing
    assert on_remote(remote, ref) == made[1]


def test_a_turn_whose_push_is_refused_is_not_recorded_as_judged(tmp_path: Path) -> None:
    """The push runs beside the judgment; a refused one makes the turn the workspace's error,
    never its PASS: the item's lock would claim a commit the remote does not hold."""
    remote, ledger = shared(tmp_path)
    alien = tmp_path / "alien"
    git(tmp_path, "init", "--quiet", str(alien))
    (alien / "f.txt").write_text("not reins'\n")
    git(alien, "add", "f.txt")
    git(alien, "commit", "--quiet", "-m", "someone else's")
    git(alien, "push", "--quiet", str(remote), "HEAD:refs/heads/reins/q/c")
    one = host(tmp_path, "one", remote)
    assert reins(one, ledger, "scan").returncode == 0
    done = reins(one, ledger, "loop", "--model", stand_in(one))
    assert done.returncode == Exit.SET_ASIDE, done.stdout + done.stderr
    found = passes(ledger)
    assert sorted(found) == ["a", "b"]
    with SQLiteStore.open(ledger) as led:
        item, log = led.snapshot("c")
    assert item.state.value != "PASS" and log
    assert all(not a.judged and "reins did not make it" in (a.error or "") for a in log)
    assert on_remote(remote, "refs/heads/reins/q/c") == git(alien, "rev-parse", "HEAD").strip()


@pytest.mark.postgres
def test_a_land_killed_on_one_host_is_finished_on_another_over_postgresql(
    tmp_path: Path, postgres_url: str
) -> None:
    """The same, the hosts sharing a PostgreSQL ledger (the land lease and journal are meta
    rows there, swapped by compare-and-set)."""
    from reins.store.postgres import PostgresStore

    remote, _ = shared(tmp_path)
    ledger = f"{postgres_url}?schema=remote_{os.urandom(4).hex()}"
    one, two = host(tmp_path, "one", remote), host(tmp_path, "two", remote)
    assert reins(one, ledger, "scan").returncode == 0
    work(one, ledger)
    assert land(one, ledger, crash_at="land-ref") == -signal.SIGKILL
    assert land(two, ledger) == Exit.NOT_LANDED
    work(two, ledger)
    assert land(one, ledger) == 0  # the killed host's land store is stale: the remote wins
    landed = git(remote, "log", "--first-parent", "--reverse",
                 "--format=%(trailers:key=Reins-Landed,valueonly)", "integration")  # fmt: skip
    assert [line for line in landed.splitlines() if line] == ["a", "c", "b"]
    assert git(remote, "show", "integration:shared.txt") == "top\na\nb\nbottom\n"
    with PostgresStore.open(ledger) as opened:
        assert opened.check() == [] and opened.meta("land.lease") is None
