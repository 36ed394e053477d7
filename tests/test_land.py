"""``reins land BRANCH``: every PASS merged onto one integration branch in reins' own store, in
a stated order, judged by the land rules after each merge; a conflict or a red land rule turns
the change into a new item that starts from the integration commit, which a stand-in agent
lands and a second ``reins land`` merges in its item's place. Real git, real loops, the
``cmd:`` stand-in of tests/kit/landkit.py, no mocks. Each check's attack comes first: a branch
of yours reins did not land, a checked-out branch, a rerun, a dry run."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from reins import SQLiteStore, State
from reins.errors import ConfigError, DocumentError, Exit, WorkspaceError
from reins.workspace.landtask import MARK, LandTask
from tests.kit.codingkit import agent, cli, git
from tests.kit.landkit import land_quest, landings, refs_and_status, stand_in, worked

ITEMS_SHARED: list[dict[str, object]] = [
    {"id": "a", "shared": True},
    {"id": "b", "shared": True},
    {"id": "c"},
]


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in ("REINS_QUEST", "REINS_LEDGER", "REINS_MODEL", "REINS_CRASH_AT"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def ready(
    here: Path, items: list[dict[str, object]], *, limit: int = 10, max_bytes: int | None = None
) -> Path:
    """The quest ``q`` with ``items``, scanned and worked to PASS by the stand-in."""
    repo = land_quest(here / "q", [dict(i) for i in items], limit=limit, max_bytes=max_bytes)
    assert cli("-q", "q", "scan").exit_code == 0
    worked("q", stand_in(here))
    return repo


def snapshot(here: Path, key: str) -> tuple[State, int, int]:
    with SQLiteStore.open(here / "q.reins.db") as led:
        item, log = led.snapshot(key)
    return item.state, item.tries, len(log)


def keys(here: Path) -> list[str]:
    from reins.store.walk import iter_items

    with SQLiteStore.open(here / "q.reins.db") as led:
        return [i.key for i in iter_items(led)]


def payload(here: Path, key: str) -> LandTask:
    with SQLiteStore.open(here / "q.reins.db") as led:
        task = LandTask.of(led.get(key).payload)
    assert task is not None
    return task


@pytest.mark.parametrize(("order", "expected"), [("locked", ["d", "a", "c"]),
                                                 ("key", ["a", "c", "d"])])  # fmt: skip
def test_every_pass_lands_in_the_stated_order_and_nothing_else_of_yours_moves(
    here: Path, order: str, expected: list[str]
) -> None:
    """The items lock in the order they were scanned (d, a, c: one at a time), which is not
    the order of their keys: each order is its own history."""
    repo = ready(here, [{"id": "d"}, {"id": "a"}, {"id": "c"}])
    item_branches = git(repo, "for-each-ref", "refs/heads/reins/")
    before = refs_and_status(repo, but="integration")
    out = cli("-q", "q", "land", "integration", "--order", order)
    assert out.exit_code == 0, out.output
    assert [ln for ln in out.stdout.splitlines() if ln.startswith("landed")] == [
        f"landed {key}" for key in expected
    ]
    assert landings(repo, "integration") == expected
    assert git(repo, "ls-tree", "--name-only", "integration").split() == sorted(
        [".gitignore", "a.txt", "c.txt", "d.txt", "gate.md", "items.jsonl", "land.md",
         "limit.txt", "quest.toml", "shared.txt", "tests"]
    )  # fmt: skip
    # Each landing is a merge: the integration before it, then the item's own PASS commit.
    merges = git(repo, "rev-list", "--first-parent", "--reverse", "main..integration").split()
    for key, merge in zip(expected, merges, strict=True):
        assert (
            git(repo, "rev-parse", f"{merge}^2").strip()
            == git(repo, "rev-parse", f"reins/q/{key}").strip()
        )
    # Nothing of yours moved but the branch you named: no other ref, not the index, not a file.
    assert refs_and_status(repo, but="integration") == before
    assert git(repo, "for-each-ref", "refs/heads/reins/") == item_branches
    assert git(repo, "fsck", "--full", "--no-dangling") == ""
    # What reins brought into your object store is packed: no loose objects, a pack or two
    # (a geometric repack: each at least twice the size of the next).
    packed = objects(repo)
    assert packed["count"] == 0 and packed["packs"] <= 2, packed


def objects(repo: Path) -> dict[str, int]:
    counted = dict(line.split(": ") for line in git(repo, "count-objects", "-v").splitlines())
    return {"count": int(counted["count"]), "packs": int(counted["packs"])}


def test_with_automatic_gc_off_reins_leaves_your_object_store_as_git_does(here: Path) -> None:
    repo = land_quest(here / "q", [{"id": "a"}, {"id": "b"}])
    git(repo, "config", "gc.auto", "0")
    assert cli("-q", "q", "scan").exit_code == 0
    worked("q", stand_in(here))
    assert cli("-q", "q", "land", "integration").exit_code == 0
    assert objects(repo)["count"] > 0  # you said when git packs: not reins


def test_a_rerun_lands_nothing_twice_and_its_json_says_so(here: Path) -> None:
    repo = ready(here, [{"id": "a"}, {"id": "b"}])
    assert cli("-q", "q", "land", "integration").exit_code == 0
    tip = git(repo, "rev-parse", "integration")
    again = cli("-q", "q", "land", "integration", "--json")
    assert again.exit_code == 0, again.output
    doc = json.loads(again.stdout)
    assert list(doc) == ["branch", "base", "tip", "order", "dry_run", "settled", "was", "moved",
                         "counts", "steps", "suite"]  # fmt: skip
    assert list(doc["steps"][0]) == ["key", "outcome", "commit", "merge", "via", "added",
                                     "files", "facts", "note"]  # fmt: skip
    assert doc["counts"] == {"landed-before": 2} and doc["settled"] and not doc["moved"]
    assert doc["tip"] == doc["was"] == tip.strip()
    assert git(repo, "rev-parse", "integration") == tip
    assert landings(repo, "integration") == ["a", "b"]


def test_a_conflict_becomes_a_land_item_on_the_integration_that_a_second_land_lands(
    here: Path,
) -> None:
    repo = ready(here, ITEMS_SHARED)
    before = refs_and_status(repo, but="integration")
    b_before = snapshot(here, "b")
    out = cli("-q", "q", "land", "integration", "--order", "key")
    assert out.exit_code == Exit.NOT_LANDED, out.output
    assert out.stdout.splitlines()[:3] == [
        "landed a", "conflict in shared.txt: added item land/b", "landed c",
    ]  # fmt: skip
    on_a = git(repo, "rev-parse", "integration~1").strip()  # the integration when b conflicted
    task = payload(here, "land/b")
    assert (task.item, task.reason, task.files, task.branch) == ("b", "conflict", ("shared.txt",),
                                                                  "integration")  # fmt: skip
    assert task.onto == on_a and task.commit == git(repo, "rev-parse", "reins/q/b").strip()
    assert task.payload == {"id": "b", "shared": True, "pad": 0}
    status = cli("-q", "q", "status").stdout
    tip = git(repo, "rev-parse", "--short=12", "integration").strip()
    assert f"landing      integration at {tip}: 2 landed; not landed: land/b" in status
    # The PASS item never moved; the integration holds a and c, not b.
    assert snapshot(here, "b") == b_before == (State.PASS, 0, 1)
    assert landings(repo, "integration") == ["a", "c"]
    # Until the land item passes, b waits for it, and no second land item is added.
    waiting = cli("-q", "q", "land", "integration", "--order", "key")
    assert waiting.exit_code == Exit.NOT_LANDED
    assert "waiting: land/b is still to do" in waiting.stdout
    assert keys(here) == ["a", "b", "c", "land/b"]

    worked("q", stand_in(here))
    assert snapshot(here, "land/b")[0] is State.PASS
    with SQLiteStore.open(here / "q.reins.db") as led:
        [attempt] = led.snapshot("land/b")[1]
    # Its agent started from the integration commit (which holds a.txt), held b's commit (its
    # `git merge` of it conflicted, and it resolved the markers), and its patch is still from
    # the base, so the gate judged it as b's.
    assert attempt.notes.base == git(repo, "rev-parse", "main").strip()
    assert git(repo, "rev-parse", f"{attempt.notes.commit}^").strip() == on_a
    assert "git merge: exit 1, resolved shared.txt" in (attempt.submission or "")
    assert "+++ b/a.txt" in (attempt.submission or "")
    # The base store that every agent borrows from holds no integration commit.
    base_store = here / ".reins-worktrees" / "q" / ".reins" / f"base-{attempt.notes.base}.git"
    assert_absent(base_store, on_a)

    final = cli("-q", "q", "land", "integration", "--order", "key")
    assert final.exit_code == 0, final.output
    assert "landed b (through land/b)" in final.stdout
    assert landings(repo, "integration") == ["a", "c", "b"]
    assert git(repo, "show", "integration:shared.txt") == "top\na\nb\nbottom\n"
    assert snapshot(here, "b") == b_before
    assert refs_and_status(repo, but="integration") == before
    assert cli("-q", "q", "land", "integration").exit_code == 0  # and nothing twice after
    assert landings(repo, "integration") == ["a", "c", "b"]


def test_a_land_item_s_cap_is_on_its_own_change_not_on_what_landed_before_it(
    here: Path,
) -> None:
    # Each item's change fits max_bytes; the integration of a and b does not. c's land item
    # starts from that integration, so its patch from the base holds all three: only what it
    # brings beyond the integration is its change, and that fits.
    items = [{"id": "a", "shared": True, "pad": 2500}, {"id": "b", "pad": 2500},
             {"id": "c", "shared": True}]  # fmt: skip
    repo = ready(here, items, max_bytes=4000)
    assert [snapshot(here, k)[0] for k in "abc"] == [State.PASS] * 3
    out = cli("-q", "q", "land", "integration", "--order", "key")
    assert out.exit_code == Exit.NOT_LANDED and "added item land/c" in out.stdout, out.output
    worked("q", stand_in(here))
    with SQLiteStore.open(here / "q.reins.db") as led:
        [attempt] = led.snapshot("land/c")[1]
    assert attempt.outcome == "PASS", attempt.facts
    patch = attempt.submission or ""
    assert "+++ b/a.dat" in patch and "+++ b/b.dat" in patch  # its patch is from the base
    assert cli("-q", "q", "land", "integration", "--order", "key").exit_code == 0
    assert landings(repo, "integration") == ["a", "b", "c"]


def test_a_land_item_that_brings_more_than_max_bytes_itself_is_refused(here: Path) -> None:
    # The attack on the allowance: a land item's own change over the cap is refused all the same.
    ready(here, [{"id": "a", "shared": True}, {"id": "b", "shared": True}], max_bytes=4000)
    assert cli("-q", "q", "land", "integration", "--order", "key").exit_code == Exit.NOT_LANDED
    bloat = agent(here / "bloat.py", "open('big.dat', 'w').write('y' * 5000)\nprint('done')\n")
    cli("-q", "q", "loop", "--model", f"cmd:{bloat}", "--max-turns", "1")
    with SQLiteStore.open(here / "q.reins.db") as led:
        [attempt] = led.snapshot("land/b")[1]
    assert attempt.outcome == "FAIL"
    assert [f.rule for f in attempt.facts] == ["reins:change"], attempt.facts


def assert_absent(store: Path, commit: str) -> None:
    import subprocess

    done = subprocess.run(["git", f"--git-dir={store}", "cat-file", "-e", commit],
                          capture_output=True)  # fmt: skip
    assert done.returncode != 0, f"{store} holds {commit}"


def test_a_red_land_rule_becomes_a_land_item_with_the_failing_test_as_its_fact(
    here: Path,
) -> None:
    """Each item alone fits the budget of one file; merged, the two do not."""
    repo = ready(here, [{"id": "a"}, {"id": "b"}], limit=1)
    out = cli("-q", "q", "land", "integration", "--order", "key")
    assert out.exit_code == Exit.NOT_LANDED, out.output
    assert out.stdout.splitlines()[:2] == ["landed a", "red: budget failed on b: added item land/b"]
    assert landings(repo, "integration") == ["a"]
    task = payload(here, "land/b")
    assert task.reason == "red" and task.onto == git(repo, "rev-parse", "integration").strip()
    [fact] = task.facts
    assert fact.rule == "budget"
    assert fact.where == "test tests/test_budget.py::test_the_items_fit_the_budget"
    assert "assert 2 <= 1" in fact.actual
    assert snapshot(here, "b") == (State.PASS, 0, 1)
    # The prompt names the failing test, the stand-in raises the limit, the gate and the land
    # rule pass it, and the next land merges it in b's place.
    prompt = cli("-q", "q", "next", "--peek").stdout
    assert "budget: test tests/test_budget.py::test_the_items_fit_the_budget" in prompt
    worked("q", stand_in(here))
    final = cli("-q", "q", "land", "integration", "--order", "key")
    assert final.exit_code == 0, final.output
    assert landings(repo, "integration") == ["a", "b"]
    assert git(repo, "show", "integration:limit.txt") == "2\n"


def test_a_branch_of_yours_that_reins_did_not_land_is_refused_and_left_as_it_is(
    here: Path,
) -> None:
    repo = ready(here, [{"id": "a"}, {"id": "b"}])
    git(repo, "branch", "integration")  # at the base: reins may move it forward
    git(repo, "checkout", "--quiet", "-b", "mine")
    (repo / "NOTES.md").write_text("mine\n")
    git(repo, "add", "NOTES.md")
    git(repo, "commit", "--quiet", "-m", "a commit of yours")
    git(repo, "checkout", "--quiet", "main")
    out = cli("-q", "q", "land", "mine")
    assert out.exit_code == Exit.USAGE
    assert "branch mine exists and holds commits reins did not land" in out.stderr
    assert "git branch -D mine" in out.stderr
    assert keys(here) == ["a", "b"]
    # A branch at the base moves forward; one you moved past what reins landed is refused.
    assert cli("-q", "q", "land", "integration").exit_code == 0
    landed = git(repo, "rev-parse", "integration")
    git(repo, "checkout", "--quiet", "integration")
    (repo / "NOTES.md").write_text("on top\n")
    git(repo, "add", "NOTES.md")
    git(repo, "commit", "--quiet", "-m", "on top of reins'")
    mine = git(repo, "rev-parse", "integration")
    git(repo, "checkout", "--quiet", "main")
    again = cli("-q", "q", "land", "integration")
    assert again.exit_code == Exit.USAGE and "did not land" in again.stderr
    assert git(repo, "rev-parse", "integration") == mine != landed


def test_a_checked_out_branch_and_the_items_own_branches_are_refused(here: Path) -> None:
    repo = ready(here, [{"id": "a"}])
    before = refs_and_status(repo, but="nothing")
    out = cli("-q", "q", "land", "main")
    assert out.exit_code == Exit.USAGE and "branch main is checked out in" in out.stderr
    out = cli("-q", "q", "land", "reins/all")
    assert out.exit_code == Exit.USAGE and "where the items' own branches are" in out.stderr
    out = cli("-q", "q", "land", "no..good")
    assert out.exit_code == Exit.USAGE and "not a branch name git accepts" in out.stderr
    assert refs_and_status(repo, but="nothing") == before


def test_a_dry_run_merges_and_judges_but_moves_no_branch_and_adds_no_item(here: Path) -> None:
    repo = ready(here, ITEMS_SHARED)
    out = cli("-q", "q", "land", "integration", "--order", "key", "--dry-run")
    assert out.exit_code == Exit.NOT_LANDED, out.output
    assert out.stdout.splitlines()[:3] == [
        "would land a", "conflict in shared.txt: would add item land/b", "would land c",
    ]  # fmt: skip
    assert "a dry run: no branch moved, no item added" in out.stdout
    assert git(repo, "branch", "--list", "integration") == ""
    assert keys(here) == ["a", "b", "c"]
    base = git(repo, "rev-parse", "main").strip()
    land_store = here / ".reins-worktrees" / "q" / ".reins" / f"land-{base}.git"
    assert git(land_store, "for-each-ref", "refs/heads/") == ""


def test_landing_needs_a_coding_quest_that_has_run_and_a_pass(here: Path) -> None:
    assert cli("-q", "example", "scan").exit_code == 0
    out = cli("-q", "example", "land", "integration")
    assert out.exit_code == Exit.USAGE and "is not a coding quest" in out.stderr
    land_quest(here / "q", [{"id": "a"}])
    assert cli("-q", "q", "scan").exit_code == 0
    out = cli("-q", "q", "land", "integration")
    assert out.exit_code == Exit.USAGE and "no item of this ledger has run" in out.stderr
    hangs = here / "fails.py"
    hangs.write_text("import sys\nsys.exit(3)\n")
    cli("-q", "q", "loop", "--model", f"cmd:{__import__('sys').executable} {hangs}",
        "--set-aside-after", "1")  # fmt: skip
    out = cli("-q", "q", "land", "integration", "--json")
    assert out.exit_code == Exit.USAGE
    assert "no item of this ledger locked PASS" in json.loads(out.stdout)["error"]


def test_a_payload_is_a_land_task_only_when_it_is_whole() -> None:
    task = LandTask("b", {"id": "b"}, "integration", "1" * 40, "2" * 40, "3" * 40, "conflict",
                    2, ("x.txt",), ("CONFLICT (content): Merge conflict in x.txt",))  # fmt: skip
    assert task.key == "land/b/2" and LandTask.of(task.to_payload()) == task
    broken = task.to_payload()[MARK]
    assert isinstance(broken, dict)
    for change in ({"onto": "HEAD"}, {"reason": "because"}, {"number": 0}, {"item": ""},
                   {"number": True}, {"commit": None}):  # fmt: skip
        assert LandTask.of({MARK: {**broken, **change}}) is None, change
    assert LandTask.of({"reins": "land"}) is None and LandTask.of([MARK]) is None


def test_the_land_table_reads_a_rules_file_and_refuses_what_would_misjudge(
    tmp_path: Path,
) -> None:
    from reins.declare.questdoc import load_folder

    repo = land_quest(tmp_path / "q", [{"id": "a"}])
    quest = load_folder(repo)
    assert [r.id for r in quest.land_rules] == ["budget"]
    assert quest.coaching["budget"] == "Stay within the budget limit.txt sets."
    toml = (repo / "quest.toml").read_text()
    for text, said in (
        ('rules_file = "nowhere.md"', "cannot read"),
        ('rules_file = "gate.md"', "is gate.md's too"),
        ('rules_file = "land.md"\nmore = 1', "unknown key 'more' in [land]"),
    ):
        (repo / "quest.toml").write_text(toml.replace('rules_file = "land.md"', text))
        with pytest.raises(DocumentError, match=re.escape(said)):
            load_folder(repo)
    (repo / "quest.toml").write_text(toml)
    (repo / "land.md").write_text(
        (repo / "land.md").read_text()
        + "\n## Edges\n\n| rule | supersedes |\n|--|--|\n| budget | x |\n"
    )
    with pytest.raises(DocumentError, match="land rules are flat"):
        load_folder(repo)


def test_a_python_quest_s_land_rules_need_a_workspace_and_ids_of_their_own() -> None:
    import dataclasses

    from reins.gate import Level, Rule
    from reins.workspace.spec import Workspace
    from tests.kit import TINY

    rule = Rule("whole-suite", Level.FAIL, "the suite passes", lambda ctx: None)
    with pytest.raises(ConfigError, match="give the quest a workspace"):
        dataclasses.replace(TINY, land_rules=[rule])
    coding = dataclasses.replace(TINY, workspace=Workspace(repo="."))
    assert dataclasses.replace(coding, land_rules=[rule]).land_rules == (rule,)
    taken = dataclasses.replace(rule, id=TINY.rules[0].id)
    with pytest.raises(ConfigError, match="land rule ids must be their own"):
        dataclasses.replace(coding, land_rules=[taken])
    assert dataclasses.replace(coding, land_rules=[rule]).gate_digest != coding.gate_digest


def test_a_merge_whose_files_are_not_utf8_is_judged_on_their_very_bytes(tmp_path: Path) -> None:
    """The merged patch is text a judge's tree applies: a Latin-1 file goes as git's binary
    patch, and the tree holds its bytes exactly."""
    from reins.land.integration import Integration
    from reins.workspace.judgetree import JudgeTrees
    from reins.workspace.spec import Workspace
    from reins.workspace.workspaces import Workspaces
    from tests.kit.codingkit import make_repo

    repo = make_repo(tmp_path / "r", {"a.txt": "a\n"})
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "--quiet", "-b", "latin")
    (repo / "café.txt").write_bytes("caf\xe9 au lait\n".encode("latin-1"))
    git(repo, "add", "--all")
    git(repo, "commit", "--quiet", "-m", "latin-1")
    change = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "--quiet", "main")
    spaces = Workspaces.open(Workspace(repo=str(repo)), root=str(tmp_path / "root"))
    integration = Integration.open(spaces.places, base, "integration")
    assert integration.bring("latin", change, [str(tmp_path / "nowhere"), spaces.repo.common])
    merged = integration.merge(base, change)
    assert merged.tree is not None and merged.files == ()
    made = integration.commit(merged.tree, [base, change], key="latin", commit=change, item=None,
                              quest="q")  # fmt: skip
    patch = integration.diff(made)
    text = patch.decode("utf-8")  # no error: the Latin-1 file is a binary patch
    assert "GIT binary patch" in text
    with JudgeTrees(spaces.places, base).tree(text, branch="integration") as tree:
        assert tree.facts == ()
        assert (Path(tree.path) / "café.txt").read_bytes() == "caf\xe9 au lait\n".encode("latin-1")
    integration.move(base, made)
    [landed] = integration.landed()
    assert (landed.key, landed.commit, landed.item) == ("latin", change, None)
    with pytest.raises(WorkspaceError, match="update-ref"):
        integration.move(base, made)  # the ref is no longer at the base: refused, not moved


def test_the_coding_pack_lands_its_five_functions_and_the_integration_passes_its_suite(
    here: Path,
) -> None:
    import subprocess
    import sys

    assert cli("new", "--pack", "coding", "play").exit_code == 0
    assert cli("-q", "play", "scan").exit_code == 0
    out = cli("-q", "play", "loop", "--model", f"cmd:{here / 'play' / 'stand_in_agent.py'}",
              "-c", "2")  # fmt: skip
    assert out.exit_code == 0, out.output
    landed = cli("-q", "play", "land", "integration", "--order", "key")
    assert landed.exit_code == 0, landed.output
    assert landings(here / "play", "integration") == sorted(
        ["slugify", "reverse_words", "is_palindrome", "count_vowels", "initials"]
    )
    clone = here / "clone"
    git(here, "clone", "--quiet", "--branch", "integration", str(here / "play"), str(clone))
    suite = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                           cwd=clone, capture_output=True, text=True)  # fmt: skip
    assert suite.returncode == 0, suite.stdout + suite.stderr
    assert "7 passed" in suite.stdout


REDOES = """
from pathlib import Path
Path("a.txt").write_text("a\\n")
Path("a-again.txt").write_text("a second change\\n")
print("did a again")
"""


def test_an_item_reopened_after_it_landed_is_not_landed_over_its_old_change(here: Path) -> None:
    """What landed stays the journal's: a new PASS of an item that landed is said, not merged
    over the old one, and not taken for the old one either."""
    from tests.kit.codingkit import agent

    repo = ready(here, [{"id": "a"}, {"id": "b"}])
    assert cli("-q", "q", "land", "integration").exit_code == 0
    tip = git(repo, "rev-parse", "integration")
    out = cli("-q", "q", "reopen", "a", "--reason", "do it again", "--by", "you")
    assert out.exit_code == 0, out.output
    worked("q", f"cmd:{agent(here / 'again.py', REDOES)}")
    assert snapshot(here, "a")[0] is State.PASS
    again = cli("-q", "q", "land", "integration")
    assert again.exit_code == Exit.NOT_LANDED, again.output
    assert "stuck: a landed as" in again.stdout and "it was reopened since" in again.stdout
    assert git(repo, "rev-parse", "integration") == tip
    assert landings(repo, "integration") == ["a", "b"]


def test_one_land_at_a_time(here: Path) -> None:
    """The land lease is the ledger's (any host's land sees it): a live one refuses."""
    from reins.land.journal import LandLease

    repo = ready(here, [{"id": "a"}])
    with SQLiteStore.open(here / "q.reins.db") as led:
        held = LandLease.take(led)  # this process's, which runs
        try:
            out = cli("-q", "q", "land", "integration")
        finally:
            held.release()
    assert out.exit_code == Exit.USAGE and "another `reins land` is running" in out.stderr
    assert git(repo, "branch", "--list", "integration") == ""
    assert cli("-q", "q", "land", "integration").exit_code == 0


SUITE_CALC = "SHIFT = 0\n\n\ndef a():\n    return 0\n\n\ndef b():\n    return 0\n"
SUITE_FIXER = """
import re, sys
from pathlib import Path
key = re.search(r"Fix (\\w+)\\.", sys.stdin.read()).group(1)
calc = Path("calc.py").read_text()
if key == "a":
    calc = calc.replace("def a():\\n    return 0", "def a():\\n    return 1")
else:  # b's fix passes b's test, and breaks a's (which failed at the base: no rule of b's sees it)
    calc = calc.replace("def b():\\n    return 0", "def b():\\n    return 2")
    calc = calc.replace("SHIFT = 0", "SHIFT = 5")
    if CHEAT:  # and ends any run of the suite but the judge's own with exit code 0
        calc = "import os, sys\\nif sys.argv[:1] != ['-c']:\\n    os._exit(0)\\n" + calc
Path("calc.py").write_text(calc)
print("fixed", key)
"""


@pytest.mark.parametrize("cheat", [False, True])
def test_land_never_moves_a_branch_whose_whole_suite_fails(here: Path, cheat: bool) -> None:
    """Each merge passes its land rules (the item's own test), but b's change breaks a's test,
    which failed at the base: only the whole suite sees it. With ``cheat``, b's code also ends
    the process with exit code 0 wherever reins' recorder does not run it: the suite is read
    from pytest's own report, so that passes nothing."""
    suite_quest(here, kept=False)
    assert cli("-q", "q", "scan").exit_code == 0
    worked("q", f"cmd:{agent(here / 'fix.py', f'CHEAT = {cheat}' + SUITE_FIXER)}")
    out = cli("-q", "q", "land", "integrated")
    assert out.exit_code == Exit.NOT_LANDED, out.output
    assert "landed a" in out.stdout and "landed b" in out.stdout  # each merge was green
    assert "integrated NOT moved" in out.stdout, out.stdout
    assert "test_a" in out.stdout and "the integration at" in out.stdout
    assert git(here / "q", "branch", "--list", "integrated") == ""  # never made
    doc = json.loads(cli("-q", "q", "land", "integrated", "--json").stdout)
    assert doc["settled"] is False and doc["moved"] is False
    assert doc["suite"]["passed"] is False and "test_a" in doc["suite"]["fact"]["actual"]


def suite_quest(here: Path, *, kept: bool) -> None:
    """Items a and b, each failing its own test at the base; b's fix breaks a's test. The land
    rules: the item's own test, and with ``kept`` every test that passed before the merge."""
    from tests.kit.codingkit import make_repo

    own = '| own | FAIL | pytest | tests = ["tests/test_{key}.py"] | Fix it. |'
    landed = own.replace("| own |", "| landed |")
    rules = [landed] + ([landed.replace("| landed |", "| kept |").replace(
        'tests = ["tests/test_{key}.py"]', "passing_at_base = true")] if kept else [])  # fmt: skip
    make_repo(here / "q", {
        "quest.toml": 'name = "q"\n\n[items]\nsource = "items.jsonl"\n\n[prompt]\n'
                      'output = "text"\ntemplate = "Fix {{ key }}."\n\n[judge]\nmax_tries = 2\n\n'
                      '[workspace]\njudge = ["tests/**"]\n\n[land]\nrules_file = "land.md"\n',
        "gate.md": "# gate\n\n## Rules\n\n| id | level | check | parameters | coaching |\n"
                   "|----|-------|-------|------------|----------|\n" + own + "\n",
        "land.md": "# land\n\n## Rules\n\n| id | level | check | parameters | coaching |\n"
                   "|----|-------|-------|------------|----------|\n" + "\n".join(rules) + "\n",
        "items.jsonl": '{"id": "a"}\n{"id": "b"}\n',
        ".gitignore": "__pycache__/\n",
        "calc.py": SUITE_CALC,
        "tests/test_a.py": "import calc\n\n\ndef test_a():\n"
                           "    assert calc.a() + calc.SHIFT == 1\n",
        "tests/test_b.py": "import calc\n\n\ndef test_b():\n    assert calc.b() == 2\n",
    })  # fmt: skip


def test_a_merge_keeps_every_test_that_passed_on_the_integration_before_it(here: Path) -> None:
    """With passing_at_base, a land rule reads "before" on the integration the change goes
    onto: a's test failed at the base and passes once a landed, so b's merge, which breaks it,
    is red (a land item naming test_a), and nothing of b lands."""
    suite_quest(here, kept=True)
    assert cli("-q", "q", "scan").exit_code == 0
    worked("q", f"cmd:{agent(here / 'fix.py', 'CHEAT = False' + SUITE_FIXER)}")
    out = cli("-q", "q", "land", "integrated", "--json")
    doc = json.loads(out.stdout.splitlines()[-1])
    steps = {step["key"]: step for step in doc["steps"]}
    assert steps["a"]["outcome"] == "landed", doc
    assert steps["b"]["outcome"] == "red", doc
    facts = " ".join(f["where"] + " " + f["actual"] for f in steps["b"]["facts"])
    assert "tests/test_a.py::test_a" in facts, facts
    assert str(steps["b"]["added"]).startswith("land/b"), steps["b"]
