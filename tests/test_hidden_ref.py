"""Hidden tests from a git ref (``[workspace] hidden = "refs/…:FOLDER"``): read from the
repository (or this host's copy of the remote) into reins' own folder, judged as a folder of
hidden tests is, and out of every agent's reach.

The attack first: an agent that searches all its git can reach (``git log --all -p``,
``git cat-file --batch-all-objects``, every object folder its ``.git`` and their alternates
name, loose objects read raw) finds no byte of the hidden tests, under the sandbox and
unconfined alike: its store borrows the base store's objects only, which hold the base's
history, and the hidden ref's commit is not in it. Under the sandbox it cannot read this
host's copy of the remote or the folder the tests were read into either. All git is real.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from reins import SQLiteStore, State
from reins.errors import Exit
from reins.store.model import Attempt, Item
from tests.kit.codingkit import agent, cli, git, quest_repo

pytestmark = pytest.mark.slow

SECRET = "HIDDEN-7c1e"
HIDDEN_TEST = f"# {SECRET}\nfrom calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
QUEST_FILES = {
    "calc.py": "def add(a, b):\n    raise NotImplementedError\n",
    "tests/test_calc.py": "def test_nothing():\n    assert True\n",
}
GATE = '| hidden | FAIL | pytest | tests = ["tests/test_hidden.py::test_add"] | Make add add. |'
HIDDEN = 'hidden = "refs/reins/hidden:judge"\njudge = ["conftest.py"]\n'

# Looks for the hidden tests everywhere its git reaches; writes a wrong add, and says.
SEARCHES = """
import os, subprocess, sys, zlib
secret, confined = sys.argv[1], sys.argv[2] == "confined"
def run(*argv, env=None):
    done = subprocess.run(argv, capture_output=True, env=env)
    return (done.stdout + done.stderr).decode("utf-8", "replace")
found = run("git", "log", "--all", "-p") + run("git", "cat-file", "--batch-all-objects", "--batch")
found += run("git", "for-each-ref") + run("git", "rev-list", "--all", "--objects")
folders, seen = [os.path.abspath(".git/objects")], set()
while folders:  # its object folder, and every folder an alternates file names, in turn
    folder = folders.pop()
    if folder in seen or not os.path.isdir(folder):
        continue
    seen.add(folder)
    env = dict(os.environ, GIT_OBJECT_DIRECTORY=folder)
    found += run("git", "cat-file", "--batch-all-objects", "--batch", env=env)
    for top, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(top, name)
            try:
                data = open(path, "rb").read()
            except OSError:
                continue
            try:
                found += zlib.decompress(data).decode("utf-8", "replace")
            except zlib.error:
                found += data.decode("utf-8", "replace")
            if name == "alternates":
                folders += [os.path.join(folder, "info", line) for line in
                            data.decode().splitlines() if line.strip()]
if confined:  # what a sandboxed agent must not read either: reins' folder, the copy, the repo
    for place in sys.argv[3:]:
        for top, _, names in os.walk(place):
            for name in names:
                try:
                    found += open(os.path.join(top, name), "rb").read().decode("latin-1")
                except OSError:
                    pass
open("calc.py", "w").write("def add(a, b):\\n    return 0\\n")
said = "FOUND IT" if secret in found else "found nothing"
print(f"searched {len(seen)} object folders: {said}")
"""
DOES_IT = 'open("calc.py", "w").write("def add(a, b):\\n    return a + b\\n")\n'


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in ("REINS_QUEST", "REINS_LEDGER", "REINS_MODEL"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def with_hidden_ref(repo: Path, files: dict[str, str], ref: str = "refs/reins/hidden") -> str:
    """A commit on top of ``main`` adding ``files``, on ``ref`` only (no branch holds it, the
    checkout is back on ``main``, the files gone from it). Returns the commit."""
    git(repo, "checkout", "--quiet", "-b", "making-hidden")
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", "--all")
    git(repo, "commit", "--quiet", "-m", "hidden tests")
    commit = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "update-ref", ref, commit)
    git(repo, "checkout", "--quiet", "main")
    git(repo, "branch", "--quiet", "-D", "making-hidden")
    return commit


def hidden_ref_quest(here: Path) -> Path:
    repo = quest_repo(here / "q", ["add"], GATE, extra=HIDDEN)
    for name, text in QUEST_FILES.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", "--all")
    git(repo, "commit", "--quiet", "-m", "calc")
    with_hidden_ref(repo, {"judge/tests/test_hidden.py": HIDDEN_TEST})
    assert not (repo / "judge").exists()
    return repo


def snapshot(ledger: Path, key: str = "add") -> tuple[Item, list[Attempt]]:
    with SQLiteStore.open(ledger) as led:
        return led.snapshot(key)


def reach(here: Path, repo: Path) -> list[str]:
    """What a confined agent tries to read besides its git: reins' folder, the repository."""
    return [str(here / ".reins-worktrees"), str(repo / ".git")]


@pytest.mark.parametrize("sandbox", [None, "none"], ids=["default", "none"])
def test_an_agent_finds_no_hidden_test_of_a_ref_in_its_git(here: Path, sandbox: str | None) -> None:
    repo = hidden_ref_quest(here)
    assert cli("-q", "q", "scan").exit_code == 0
    option = ["--sandbox", sandbox] if sandbox else []
    script = agent(here / "searches.py", SEARCHES)
    mode = "confined" if sandbox is None else "unconfined"
    places = " ".join(reach(here, repo))
    model = f"cmd:{script} {SECRET} {mode} {places}"
    out = cli("-q", "q", "loop", "--model", model, "--max-turns", "1", *option)
    item, log = snapshot(here / "q.reins.db")
    assert log and log[0].outcome == "FAIL", out.output + out.stderr
    said = log[0].submission or ""
    assert "found nothing" in said and "object folders" in said, said
    # The hidden test came from the ref and ran: its rule's fact says the test failed.
    fact = next(f for f in log[0].facts if f.rule == "hidden")
    assert (fact.where, fact.actual) == ("test tests/test_hidden.py::test_add", "failed")
    # They were read into reins' own folder, never into the checkout or a workspace.
    copies = list((here / ".reins-worktrees" / "q" / ".reins" / "hidden").rglob("test_hidden.py"))
    assert [c.read_text() for c in copies] == [HIDDEN_TEST]
    assert not (repo / "judge").exists() and not (repo / "tests" / "test_hidden.py").exists()
    # An honest agent passes on them.
    out = cli("-q", "q", "loop", "--model", f"cmd:{agent(here / 'does.py', DOES_IT)}", *option)
    item, log = snapshot(here / "q.reins.db")
    assert item.state is State.PASS, out.output + out.stderr
    assert "test_hidden" not in git(repo, "show", "--stat", "reins/q/add")


def test_every_host_reads_the_hidden_tests_from_the_remote(here: Path) -> None:
    """A host holding only the quest's documents and the remote's URL judges by the hidden
    tests of the remote's ref, and lands."""
    source = hidden_ref_quest(here)
    remote = here / "remote.git"
    git(here, "clone", "--quiet", "--bare", str(source), str(remote))
    git(source, "push", "--quiet", str(remote), "refs/reins/hidden:refs/reins/hidden")
    host = here / "host"
    host.mkdir()
    for name in ("quest.toml", "gate.md", "items.jsonl"):
        shutil.copyfile(source / name, host / name)
    toml = (host / "quest.toml").read_text()
    here_too = f'[workspace]\nremote = "{remote}"\n'
    (host / "quest.toml").write_text(toml.replace("[workspace]\n", here_too))
    shutil.rmtree(source)  # the host has no repository: the remote is all there is
    ledger = str(here / "host.reins.db")
    assert cli("--ledger", ledger, "-q", "host", "scan").exit_code == 0
    script = agent(here / "searches.py", SEARCHES)
    model = f"cmd:{script} {SECRET} confined {here / '.reins-worktrees'}"
    out = cli("--ledger", ledger, "-q", "host", "loop", "--model", model, "--max-turns", "1")
    item, log = snapshot(here / "host.reins.db")
    assert log and "found nothing" in (log[0].submission or ""), out.output + out.stderr
    fact = next(f for f in log[0].facts if f.rule == "hidden")
    assert (fact.where, fact.actual) == ("test tests/test_hidden.py::test_add", "failed")
    does = agent(here / "does.py", DOES_IT)
    out = cli("--ledger", ledger, "-q", "host", "loop", "--model", f"cmd:{does}")
    item, log = snapshot(here / "host.reins.db")
    assert item.state is State.PASS, out.output + out.stderr
    assert git(remote, "rev-parse", "--verify", "--quiet", "refs/heads/reins/q/add")
    # reins land judges by them too (its judge's trees are the loop's), and lands.
    out = cli("--ledger", ledger, "-q", "host", "land", "integration")
    assert out.exit_code == 0, out.output + out.stderr
    assert git(remote, "rev-parse", "--verify", "--quiet", "refs/heads/integration")


def test_hidden_tests_in_the_base_s_history_are_refused(here: Path) -> None:
    """A ref whose folder the base's history holds (a commit of main, say) would be in every
    agent's git: refused before any agent runs, saying why."""
    repo = hidden_ref_quest(here)
    (repo / "judge" / "tests").mkdir(parents=True)
    (repo / "judge" / "tests" / "test_hidden.py").write_text(HIDDEN_TEST)
    git(repo, "add", "--all")
    git(repo, "commit", "--quiet", "-m", "the hidden tests, on main by mistake")
    git(repo, "update-ref", "refs/reins/hidden", "main")
    git(repo, "rm", "--quiet", "-r", "judge")
    git(repo, "commit", "--quiet", "-m", "gone again (still in the history)")
    assert cli("-q", "q", "scan").exit_code == 0
    out = cli("-q", "q", "loop", "--model", f"cmd:{agent(here / 'does.py', DOES_IT)}")
    assert out.exit_code == Exit.USAGE, out.output + out.stderr
    assert "history" in out.stderr and "refs/reins/hidden:judge" in out.stderr


@pytest.mark.parametrize(
    ("hidden", "words"),
    [
        ("refs/reins/nothing:judge", "no ref refs/reins/nothing"),
        ("refs/reins/hidden:elsewhere", "no folder elsewhere"),
        ("refs/reins/hidden:judge/tests/test_hidden.py", "not a folder"),
    ],
)
def test_a_hidden_ref_that_names_nothing_is_refused(here: Path, hidden: str, words: str) -> None:
    repo = hidden_ref_quest(here)
    toml = (repo / "quest.toml").read_text()
    (repo / "quest.toml").write_text(toml.replace("refs/reins/hidden:judge", hidden))
    git(repo, "commit", "--quiet", "-am", "another hidden")
    assert cli("-q", "q", "scan").exit_code == 0
    out = cli("-q", "q", "loop", "--model", f"cmd:{agent(here / 'does.py', DOES_IT)}")
    assert out.exit_code == Exit.USAGE, out.output + out.stderr
    assert words in out.stderr


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("refs/reins/hid..den:judge", "not a valid ref"),
        ("refs/reins/hidden:../judge", "a folder inside the ref"),
        ("refs/reins/hidden:/judge", "a folder inside the ref"),
    ],
)
def test_a_bad_hidden_ref_is_refused_at_its_line(here: Path, value: str, words: str) -> None:
    quest_repo(here / "q", ["add"], GATE, extra=f'hidden = "{value}"\n')
    out = cli("-q", "q", "scan")
    assert out.exit_code == Exit.USAGE, out.output + out.stderr
    assert "quest.toml:" in out.stderr and words in out.stderr


def test_a_hidden_ref_is_read_as_git_writes_a_folder_of_a_revision() -> None:
    from reins.workspace.spec import HiddenRef

    assert HiddenRef.parse("refs/reins/hidden:judge") == HiddenRef("refs/reins/hidden", "judge")
    assert HiddenRef.parse("refs/reins/hidden:judge/") == HiddenRef("refs/reins/hidden", "judge")
    assert HiddenRef.parse("refs/reins/hidden:") == HiddenRef("refs/reins/hidden", "")
    assert HiddenRef.parse("../hidden") is None
    assert HiddenRef.parse("refs/folder") is None  # a folder named refs: no ref without a colon
