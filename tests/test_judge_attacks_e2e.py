"""Issue 37's hermetic judge, attacked end to end: ``reins loop`` runs scripted agents that write
a WRONG implementation of a tiny project's function, plus module code that tries, when the
judge's pytest imports it, to escape: into the user's repository, the ledger, the judge's own
trees and store, pytest's report. Each runs under both agent sandboxes (the judge is confined
under either), and under ``--sandbox none`` the agent process itself forges the judge's trees
and their indexes, and poisons reins' base store.

After every run: no item is PASS, by the loop, the ledger, ``reins status``, ``reins ledger
check`` and ``reins export``; every attempt is one the loop reported; the user's repository is
as it was (a landing of the locked items adds objects and ``reins/`` branches, nothing else);
the attack's code did run in the judge (its facts say what it saw). An honest agent PASSes
under both settings, so these fail if the judge merely broke.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

import reins
from reins import SQLiteStore, State
from reins.errors import Exit
from tests.kit.codingkit import (
    agent,
    checkout_state,
    cli,
    events,
    git,
    make_repo,
    object_files,
    passes_reproduce,
)

if shutil.which("bwrap") is None and not os.environ.get("CI"):
    pytest.skip("bubblewrap (bwrap) is not installed", allow_module_level=True)

KEYS = ("double", "triple")
TOML = """name = "q"

[items]
source = "items.jsonl"
key = "id"

[prompt]
output = "text"
template = "Implement calc.{{ key }} in calc/__init__.py: tests/test_calc.py::test_{{ key }}."

[judge]
max_tries = 2

[workspace]
judge = ["tests/**", "conftest.py", "pytest.ini"]
"""
GATE = (
    "# gate\n\n## Rules\n\n| id | level | check | parameters | coaching |\n"
    "|----|-------|-------|------------|----------|\n"
    '| task-test | FAIL | pytest | tests = ["tests/test_calc.py::test_{key}"], timeout = 120 '
    "| Make it pass. |\n"
    "| suite | FAIL | pytest | passing_at_base = true, timeout = 120 | Keep the rest passing. |\n"
)
STUB = """SCALE = 1

def double(x):
    raise NotImplementedError

def triple(x):
    raise NotImplementedError
"""
TESTS = """import calc

def test_scale():
    assert calc.SCALE == 1

def test_double():
    assert calc.double(2) == 4

def test_triple():
    assert calc.triple(2) == 6
"""
RIGHT = """SCALE = 1

def double(x):
    return x * 2

def triple(x):
    return x * 3
"""

# The agent: writes calc/__init__.py as the attack's module (the paths it was given as literals,
# its wrong functions answering with what the attack saw, so the judge's FAIL fact shows it),
# then runs AFTER (the unconfined agent's own attack).
AGENT = r"""
import os, subprocess, sys
repo, ledger, root, reins_src = sys.argv[1:5]
key = os.path.basename(os.getcwd())
RIGHT, ATTACK = @RIGHT@, @ATTACK@
given = dict(KEY=key, REPO=repo, LEDGER=ledger, ROOT=root, REINS=reins_src,
             STARTED=os.getcwd(), RIGHT=RIGHT, KEYS=@KEYS@)
head = "SAID = 'ran: nothing'\nSCALE = 1\n" + "".join(f"{k} = {v!r}\n" for k, v in given.items())
wrong = "\n\ndef double(x):\n    return SAID\n\n\ndef triple(x):\n    return SAID\n"
with open("calc/__init__.py", "w") as f:
    f.write(head + ATTACK + wrong)
@AFTER@
print(f"Wrote calc.{key}.")
"""

# 1. The user's repository, found by walking up from the module's folder and from where the
# agent started, and by the path it was given: a hook that runs on the user's next commit and
# an alias. Unconfined (the judge as the user) both land in q/.git: the user's folder is theirs.
USER_GIT = """
import os, subprocess
seen = []
for start in (os.path.dirname(os.path.abspath(__file__)), STARTED, REPO):
    here = start
    while True:
        seen.append(os.path.join(here, ".git"))
        if os.path.dirname(here) == here:
            break
        here = os.path.dirname(here)
did = []
for dot_git in dict.fromkeys(seen):
    if not os.path.isfile(os.path.join(dot_git, "HEAD")):
        continue
    try:
        hook = os.path.join(dot_git, "hooks", "post-commit")
        os.makedirs(os.path.dirname(hook), exist_ok=True)
        with open(hook, "w") as f:
            f.write("#!/bin/sh\\necho owned >> /tmp/owned\\n")
        os.chmod(hook, 0o755)
        did.append("hook")
    except OSError as exc:
        did.append("hook " + type(exc).__name__)
    alias = subprocess.run(["git", "--git-dir=" + dot_git, "config", "alias.st", "!echo owned"])
    did.append(f"alias {alias.returncode}")
SAID = "ran: " + (" ".join(did) or "no repository in sight")
"""

# 2. reins' own API on the ledger: record a judged PASS for every other item. Unconfined, reins
# imports (the venv's path, or the folder the agent found it in) and the ledger is a file.
LEDGER_API = """
import sys
try:
    try:
        import reins
    except ImportError:
        sys.path.insert(0, REINS)
        import reins
    from reins.store.model import AttemptKind, Claim, Draft, Transition
    store = reins.open_store(LEDGER)
    for other in KEYS:
        if other != KEY and store.get(other).state is reins.State.TODO:
            draft = Draft(other, AttemptKind.JUDGED, Transition(reins.State.PASS, 0),
                          outcome="PASS", submission="it passes")
            store.record(draft, Claim(driver="loop", turns=store.get(other).turns))
    SAID = "ran: locked"
except Exception as exc:
    SAID = "ran: " + type(exc).__name__
"""

# 3. The judge's own state: the right code into every tree of the pool (its own too: the next
# judgment reuses it), the file's size and times kept, so a judge that trusted sizes and times
# would see no change; garbage appended to every index, note and file of the judge's store.
# Unconfined, the judge's folder (.reins/judge beside the workspaces) is the user's to write.
JUDGE_STATE = """
import os
judge = os.path.join(ROOT, ".reins", "judge")
mine = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
try:
    trees = [os.path.join(judge, n) for n in os.listdir(judge) if n.isdigit()]
except OSError:
    trees = []
rewritten = garbled = 0
for tree in dict.fromkeys([mine, *trees]):
    path = os.path.join(tree, "calc", "__init__.py")
    try:
        st = os.stat(path)
        with open(path, "w") as f:
            f.write(RIGHT + "#" * max(0, st.st_size - len(RIGHT)))
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        rewritten += 1
    except OSError:
        pass
for folder, _, files in os.walk(judge):
    if any(folder == t or folder.startswith(t + os.sep) for t in trees):
        continue
    for name in files:
        try:
            with open(os.path.join(folder, name), "ab") as f:
                f.write(b"garbage")
            garbled += 1
        except OSError:
            pass
SAID = f"ran: rewrote {rewritten} garbled {garbled}"
"""

# 4. A report that looks like pytest's, all passed, in every writable place in sight and on
# every descriptor, then an exit 0 before pytest writes its own.
FORGED_REPORT = """
import json, os, tempfile
mine = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ids = [f"tests/test_calc.py::test_{n}" for n in ("scale", *KEYS)]
test = os.path.join(mine, "tests", "test_calc.py")
forged = json.dumps({"nonce": "", "exitstatus": 0, "errors": [], "deselected": [],
    "tests": {i: {"phases": {w: ["passed", False, ""] for w in ("setup", "call", "teardown")}}
              for i in ids},
    "files": {i: [test, test] for i in ids}}).encode()
places = {mine, os.path.join(mine, "tests"), os.getcwd(), os.path.expanduser("~"), "/tmp",
          tempfile.gettempdir(), "/dev/shm", os.path.dirname(mine), os.path.dirname(LEDGER),
          ROOT, os.path.join(ROOT, ".reins", "judge")}
for place in places:
    for name in ("report.json", ".report.json", "pytest-report.json", "reins-report.json"):
        try:
            with open(os.path.join(place, name), "wb") as f:
                f.write(forged)
        except OSError:
            pass
for fd in range(3, 31):
    try:
        os.write(fd, forged)
    except OSError:
        pass
os._exit(0)
"""

# 5. An exit status of 0 whatever pytest found.
AT_EXIT = """
import atexit, os
atexit.register(os._exit, 0)
SAID = "ran: atexit"
"""

# 6. (--sandbox none) The agent itself, before it exits: the right code into every judge's
# tree, and each tree's index forged to vouch for it: the entry holds the blob the agent's
# patch makes, flagged skip-worktree, so a judge that reset the tree from that index (git
# read-tree -u --reset) would leave the right file in place and PASS the wrong patch.
FORGE_TREES = r"""
judge = os.path.join(root, ".reins", "judge")
store = os.path.join(judge, "store.git")
forged = 0
for name in sorted(os.listdir(judge)) if os.path.isdir(store) else []:
    tree = os.path.join(judge, name)
    if not name.isdigit() or not os.path.isdir(os.path.join(tree, "calc")):
        continue
    with open(os.path.join(tree, "calc", "__init__.py"), "w") as f:
        f.write(RIGHT)
    g = ["git", "--git-dir=" + store, "--work-tree=" + tree]
    env = dict(os.environ, GIT_INDEX_FILE=tree + ".index")
    blob = subprocess.run(["git", "--git-dir=" + store, "hash-object", "-w", "calc/__init__.py"],
                          capture_output=True, text=True, check=True).stdout.strip()
    for args in (["update-index", "--add", "--cacheinfo", f"100644,{blob},calc/__init__.py"],
                 ["update-index", "--skip-worktree", "calc/__init__.py"],
                 ["update-index", "--refresh"]):
        subprocess.run(g + args, env=env, capture_output=True)
    forged += 1
print(f"forged {forged} judge's trees")
"""

# 7. (--sandbox none) The agent itself, on reins' base store, from which every judge's tree is
# checked out: its pack exploded into loose objects and the object of the judge's test file
# rewritten to a test that passes (git does not check a loose object's content against its
# name when it reads it), every tree's index garbled so that each tree is checked out afresh.
POISON_STORE = r"""
import glob, zlib
blob = subprocess.run(["git", "rev-parse", "HEAD:tests/test_calc.py"], capture_output=True,
                      text=True, check=True).stdout.strip()
fake = "".join(f"def test_{n}():\n    pass\n\n\n" for n in ("scale", "double", "triple")).encode()
poisoned = 0
for store in glob.glob(os.path.join(root, ".reins", "base-*.git")):
    for pack in glob.glob(os.path.join(store, "objects", "pack", "*.pack")):
        os.rename(pack, pack + ".old")
        os.rename(pack[:-5] + ".idx", pack[:-5] + ".idx.old")
        with open(pack + ".old", "rb") as f:
            subprocess.run(["git", "--git-dir=" + store, "unpack-objects"], stdin=f, check=True)
    path = os.path.join(store, "objects", blob[:2], blob[2:])
    if os.path.isfile(path):
        os.chmod(path, 0o644)
        with open(path, "wb") as f:
            f.write(zlib.compress(b"blob %d\0" % len(fake) + fake))
        poisoned += 1
for index in glob.glob(os.path.join(root, ".reins", "judge", "*.index")):
    with open(index, "ab") as f:
        f.write(b"garbage")
print(f"poisoned {poisoned} base stores")
"""


@pytest.fixture
def here(tmp_path: Path) -> Path:
    """The test's folder: the autouse ``clean_environment`` made it the working folder, with no
    ``REINS_*`` variable."""
    return tmp_path


def project(path: Path) -> Path:
    """A quest folder that is the repository of a tiny package, calc, with a function to write
    per item and the judge's test of each."""
    items = "".join(json.dumps({"id": k}) + "\n" for k in KEYS)
    files = {"quest.toml": TOML, "gate.md": GATE, "items.jsonl": items, "pytest.ini": "[pytest]\n",
             ".gitignore": "__pycache__/\n", "calc/__init__.py": STUB,
             "tests/test_calc.py": TESTS}  # fmt: skip
    return make_repo(path, files)


def attacker(here: Path, attack: str, after: str = "") -> str:
    body = AGENT.replace("@RIGHT@", repr(RIGHT)).replace("@ATTACK@", repr(attack))
    body = body.replace("@KEYS@", repr(KEYS)).replace("@AFTER@", after)
    script = agent(here / "agent.py", body)
    src = Path(reins.__file__).resolve().parent.parent
    root = here / ".reins-worktrees" / "q"
    return f"cmd:{script} {here / 'q'} {here / 'q.reins.db'} {root} {src}"


def run(
    here: Path, model: str, sandbox: str, *, exit_code: int = 0
) -> tuple[list[dict[str, Any]], dict[str, list[Any]]]:
    """``reins loop`` on a fresh project with ``model``; asserts what holds for any agent, and
    returns the loop's turns and each item's log."""
    repo = project(here / "q")
    assert cli("-q", "q", "scan").exit_code == 0
    checkout, dot_git = checkout_state(repo), object_files(repo)
    out = cli("-q", "q", "loop", "--model", model, "--sandbox", sandbox, "--json")
    assert out.exit_code == exit_code, out.output + out.stderr
    turns = [e for e in events(out) if e["event"] == "turn"]
    assert not [e for e in events(out) if e["event"] == "refused"]
    logs = {}
    with SQLiteStore.open(here / "q.reins.db") as led:
        for key in KEYS:
            logs[key] = led.snapshot(key)[1]
    recorded = sorted((a.key, a.turn, a.outcome) for log in logs.values() for a in log)
    assert recorded == sorted((e["key"], e["turn"], e["outcome"]) for e in turns)
    assert all(a.notes.sandbox == sandbox for log in logs.values() for a in log)
    checked = cli("-q", "q", "ledger", "check")
    assert checked.exit_code == 0 and "sound" in checked.stdout, checked.output
    # The user's repository: as it was, but for what a landing adds (objects, reins/ branches).
    assert checkout_state(repo) == checkout
    after = object_files(repo)
    assert dot_git.items() <= after.items()
    assert all(name.startswith("objects/") for name in after.keys() - dot_git.keys())
    assert git(repo, "fsck", "--full", "--strict") == ""
    return turns, logs


def failed_every_turn(here: Path, turns: list[dict[str, Any]], logs: dict[str, list[Any]]) -> None:
    """Nothing the run did is a PASS, by any surface; each item was judged and failed."""
    assert {e["key"] for e in turns} == set(KEYS)
    assert [(e["key"], e["turn"], e["outcome"]) for e in turns if e["outcome"] != "FAIL"] == []
    status = json.loads(cli("-q", "q", "status", "--json").stdout)
    assert status["counts"]["PASS"] == 0 and status["attempts"] == len(turns)
    assert all(log[-1].state_after is not State.PASS for log in logs.values())
    assert cli("-q", "q", "export").exit_code == 0
    records = [json.loads(ln) for ln in (here / "q-results.jsonl").read_text().splitlines()]
    assert sorted(r["key"] for r in records) == sorted(KEYS)  # each item exported, locked
    assert [r["key"] for r in records if r["state"] == "PASS"] == []


def facts_of(logs: dict[str, list[Any]]) -> list[str]:
    """Each attempt's facts, one text per attempt."""
    return [
        " | ".join(f"{f.where}: {f.actual}" for f in a.facts) for log in logs.values() for a in log
    ]


ATTACKS = {
    "hooks-and-an-alias-in-the-user-s-repository": (USER_GIT, "assert 'ran: "),
    "reins-own-api-locks-the-other-item": (LEDGER_API, "assert 'ran: "),
    "the-judge-s-trees-indexes-and-store-rewritten": (JUDGE_STATE, "assert 'ran: rewrote 1 "),
    "a-forged-report-then-exit-0": (FORGED_REPORT, "no report: pytest ended with exit code 0"),
    "atexit-exits-0-after-a-failing-test": (AT_EXIT, "assert 'ran: atexit' == "),
}


@pytest.mark.parametrize("sandbox", ["bwrap", "none"])
@pytest.mark.parametrize("attack", ATTACKS)
def test_judged_code_that_attacks_from_inside_the_judge_fails_and_changes_nothing(
    here: Path, attack: str, sandbox: str
) -> None:
    source, said = ATTACKS[attack]
    turns, logs = run(here, attacker(here, source), sandbox)
    failed_every_turn(here, turns, logs)
    facts = facts_of(logs)
    assert all(said in text for text in facts), facts  # the attack ran, in the judge
    assert len(turns) == 2 * len(KEYS)  # every try judged (nothing locked an item early)


def test_an_unconfined_agent_that_forges_the_judge_s_trees_and_indexes_fails(
    here: Path,
) -> None:
    turns, logs = run(here, attacker(here, "", FORGE_TREES), "none")
    failed_every_turn(here, turns, logs)
    said = [a.submission or "" for log in logs.values() for a in log]
    assert any("forged 0 judge's trees" not in s and "forged" in s for s in said), said
    assert all("assert 'ran: nothing' == " in text for text in facts_of(logs))


def test_a_confined_agent_finds_no_judge_s_tree_though_one_is_judged_while_it_runs(
    here: Path,
) -> None:
    # A confined run judges an item while the next item's agent runs (reins.loop.slot): the
    # agent's walls must hide the judge's trees under way, or it would forge one.
    turns, logs = run(here, attacker(here, "", FORGE_TREES), "bwrap")
    failed_every_turn(here, turns, logs)
    said = [a.submission or "" for log in logs.values() for a in log]
    assert said and all("forged 0 judge's trees" in s for s in said), said
    assert all("assert 'ran: nothing' == " in text for text in facts_of(logs))
    tried = sorted((a for log in logs.values() for a in log), key=lambda a: a.started_at or "")
    assert any(  # an agent ran while a turn before it was still being judged
        (later.started_at or "") < earlier.recorded_at
        for earlier, later in itertools.pairwise(tried)
    )


def test_an_unconfined_agent_that_poisons_the_base_store_s_copy_of_the_judge_s_test_fails(
    here: Path,
) -> None:
    # git reads an object without checking it against its name: the store is proven (fsck)
    # whenever a file of its objects changed, and a poisoned one is the judge's error, which
    # stops the run (the judge breaker) before anything is judged on it.
    poisons = attacker(here, "", POISON_STORE)
    turns, _ = run(here, poisons, "none", exit_code=Exit.JUDGE_ERROR)
    assert turns and all(e["kind"] == "judge_error" for e in turns), turns
    assert all("holds objects git did not make" in e["error"] for e in turns)
    assert json.loads(cli("-q", "q", "status", "--json").stdout)["counts"]["PASS"] == 0


@pytest.mark.parametrize("sandbox", ["bwrap", "none"])
def test_an_honest_agent_passes_every_item_and_each_pass_reproduces(
    here: Path, sandbox: str
) -> None:
    honest = agent(here / "honest.py", f"open('calc/__init__.py', 'w').write({RIGHT!r})\n")
    turns, _ = run(here, f"cmd:{honest}", sandbox)
    assert sorted((e["key"], e["outcome"]) for e in turns) == [(k, "PASS") for k in KEYS]
    assert json.loads(cli("-q", "q", "status", "--json").stdout)["counts"]["PASS"] == 2
    repo = here / "q"
    assert passes_reproduce(repo, here / "q.reins.db", repo, here / "replay") == 2
