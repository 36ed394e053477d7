"""Several ledgers on one repository (issue 39): each quest's items have branches of their own
(``reins/<quest>/<key>``), a ledger keeps the branch names it first gave, and a new ledger on a
base that moved (the landed branch merged) scans, works and lands. Real git, real loops, the
``cmd:`` stand-in, no model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reins import SQLiteStore
from tests.kit.codingkit import FILE_HOLDS_KEY, agent, cli, git, make_repo

# Writes <key>.txt holding the key, and signs its work with the quest's word when asked to.
WRITES = """
import re, sys
prompt = sys.stdin.read()
key = re.search(r"Make the file (\\S+)\\.txt", prompt).group(1)
open(key + ".txt", "w").write(key + "\\n")
signed = re.search(r"Sign it (\\w+)\\.", prompt)
if signed:
    open("signed.txt", "w").write(signed.group(1) + "\\n")
print("wrote", key)
"""


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in ("REINS_QUEST", "REINS_LEDGER", "REINS_MODEL"):
        monkeypatch.delenv(name, raising=False)
    make_repo(tmp_path / "project", {"README.md": "a project\n", ".gitignore": "__pycache__/\n"})
    return tmp_path


def quest(folder: Path, keys: list[str], *, sign: str = "", extra: str = "") -> Path:
    """A quest folder beside the repository ``project``, whose items change it."""
    folder.mkdir()
    template = "Make the file {{ key }}.txt hold the word {{ key }}." + (
        f" Sign it {sign}." if sign else ""
    )
    (folder / "quest.toml").write_text(
        f'name = "{folder.name}"\n\n[items]\nsource = "items.jsonl"\n\n[prompt]\n'
        f'output = "text"\ntemplate = "{template}"\n\n[judge]\nmax_tries = 2\n\n'
        f'[workspace]\nrepo = "../project"\n{extra}',
        encoding="utf-8",
    )
    (folder / "gate.md").write_text(
        "# gate\n\n## Rules\n\n| id | level | check | parameters | coaching |\n"
        "|----|-------|-------|------------|----------|\n" + FILE_HOLDS_KEY + "\n",
        encoding="utf-8",
    )
    (folder / "items.jsonl").write_text("".join(json.dumps({"id": k}) + "\n" for k in keys))
    return folder


def exported(here: Path, name: str) -> dict[str, dict[str, str]]:
    """The results file's last record of each item: its workspace (branch, commit, …)."""
    lines = (here / f"{name}-results.jsonl").read_text().splitlines()
    return {r["key"]: r["workspace"] for r in map(json.loads, lines)}


def test_two_quests_on_one_repository_each_land_on_branches_of_their_own(here: Path) -> None:
    """Both quests name an item ``a``: under one ``reins/{key}`` the second quest's result took
    the first's branch, the first's export named a branch holding the other's commit, and
    every later loop of the first "tidied" a workspace (landed its own commit again)."""
    for name, sign in (("first", "one"), ("second", "two")):
        quest(here / name, ["a"], sign=sign, extra='keep = "all"\n')
        assert cli("-q", name, "scan").exit_code == 0
    model = f"cmd:{agent(here / 'agent.py', WRITES)}"
    for name in ("first", "second"):
        out = cli("-q", name, "loop", "--model", model)
        assert out.exit_code == 0, out.output + out.stderr
        assert "a · PASS" in out.output + out.stderr
    project = here / "project"
    for name, sign in (("first", "one"), ("second", "two")):
        work = exported(here, name)["a"]
        assert work["branch"] == f"reins/{name}/a"
        assert git(project, "rev-parse", work["branch"]).strip() == work["commit"]
        assert git(project, "show", f"{work['branch']}:signed.txt") == f"{sign}\n"
        with SQLiteStore.open(here / f"{name}.reins.db") as led:
            assert led.meta("workspace.branch") == f"reins/{name}/{{key}}"
    # A rerun finds nothing a crash left: every result is on its own branch already.
    for name in ("first", "second", "first"):
        out = cli("-q", name, "loop", "--model", model)
        assert out.exit_code == 0, out.output
        assert "tidied" not in out.output + out.stderr


def test_a_ledger_keeps_the_branch_names_it_gave_and_a_changed_template_is_refused(
    here: Path,
) -> None:
    """A ledger whose items got branches under the old default ``reins/{key}`` (before the
    template was recorded) keeps it; a template that no longer names the ledger's branches is
    refused, before anything runs."""
    folder = quest(here / "q", ["a", "b"])
    assert cli("-q", "q", "scan").exit_code == 0
    model = f"cmd:{agent(here / 'agent.py', WRITES)}"
    assert cli("-q", "q", "loop", "--model", model, "--max-items", "1").exit_code == 0
    # As a ledger a reins before issue 39 left it: branches under reins/{key}, none recorded.
    project = here / "project"
    old = exported(here, "q")["a"]
    if old["branch"] != "reins/a":
        git(project, "branch", "-m", old["branch"], "reins/a")
    _forget_branch_meta(here / "q.reins.db")
    out = cli("-q", "q", "loop", "--model", model)
    assert out.exit_code == 0, out.output + out.stderr
    assert exported(here, "q")["b"]["branch"] == "reins/b"
    assert git(project, "rev-parse", "reins/b").strip() == exported(here, "q")["b"]["commit"]
    with SQLiteStore.open(here / "q.reins.db") as led:
        assert led.meta("workspace.branch") == "reins/{key}"
    # The quest now names its branches otherwise: refused, with what to do.
    toml = folder / "quest.toml"
    toml.write_text(toml.read_text() + 'branch = "work/{key}"\n')
    out = cli("-q", "q", "loop", "--model", model)
    assert out.exit_code == 2
    assert "does not name this ledger's branches" in out.stderr
    assert 'set [workspace] branch = "reins/{key}"' in out.stderr


def _forget_branch_meta(ledger: Path) -> None:
    """The ledger's branch template forgotten (the store keeps no way to delete a meta key)."""
    import sqlite3

    with sqlite3.connect(ledger) as conn:
        conn.execute("DELETE FROM meta WHERE key = 'workspace.branch'")


CALC = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a + b\n"
TESTS = (
    "import calc\n\n\ndef test_add():\n    assert calc.add(2, 3) == 5\n\n\n"
    "def test_mul():\n    assert calc.mul(2, 3) == 6\n"
)
NEG = "\n\ndef neg(a):\n    return a\n"
NEG_TEST = "\n\ndef test_neg():\n    assert calc.neg(2) == -2\n"
# Fixes the function whose test the prompt names, whatever else the file holds.
FIXES = r"""
import re, sys
prompt = sys.stdin.read()
name = re.search(r"test_(\w+) pass", prompt).group(1)
right = {"add": "a + b", "mul": "a * b", "neg": "-a"}[name]
src = open("calc.py").read()
src = re.sub(r"(def " + name + r"\(.*\):\n    return ).*", lambda m: m.group(1) + right, src)
open("calc.py", "w").write(src)
print("fixed", name)
"""


def test_a_new_ledger_on_a_base_that_moved_scans_works_and_lands(here: Path) -> None:
    """``base = "main"`` follows the branch: once the landed branch is merged, the ledger that
    started from the old tip is refused (with what to do), and a new ledger starts from the
    new tip. Its items' results land on their branches (one an old ledger made, merged since:
    the base holds it), and ``reins land`` moves the same integration branch forward."""
    project = here / "project"
    (project / "calc.py").write_text(CALC)
    (project / "tests").mkdir()
    (project / "tests" / "test_calc.py").write_text(TESTS)
    git(project, "add", "--all")
    git(project, "commit", "--quiet", "-m", "calc")
    (here / "fix").mkdir()
    (here / "fix" / "quest.toml").write_text(
        'name = "fix"\n\n[items]\nfrom = "pytest"\nargs = ["tests"]\n\n[prompt]\n'
        'output = "text"\ntemplate = "Make {{ item.test }} pass."\n\n[judge]\nmax_tries = 2\n\n'
        '[workspace]\nrepo = "../project"\nbase = "main"\njudge = ["tests/**"]\n',
        encoding="utf-8",
    )
    (here / "fix" / "gate.md").write_text(
        "# gate\n\n## Rules\n\n| id | level | check | parameters | coaching |\n"
        "|----|-------|-------|------------|----------|\n"
        '| its-test | FAIL | pytest | tests = ["{item.test}"], timeout = 120 | Make it pass. |\n',
        encoding="utf-8",
    )
    model = f"cmd:{agent(here / 'agent.py', FIXES)}"
    mul = "tests/test_calc.py::test_mul"
    assert cli("-q", "fix", "scan").exit_code == 0
    first = cli("-q", "fix", "loop", "--model", model)
    assert first.exit_code == 0 and "PASS 2" in first.output + first.stderr
    assert cli("-q", "fix", "land", "fixes").exit_code == 0
    old_mul = exported(here, "fix")[mul]
    # You merge what landed, then a later commit breaks mul again and adds a failing test.
    git(project, "merge", "--quiet", "--no-ff", "--no-edit", "fixes")
    (project / "calc.py").write_text((project / "calc.py").read_text().replace("a * b", "a + b")
                                     + NEG)  # fmt: skip
    (project / "tests" / "test_calc.py").write_text(TESTS + NEG_TEST)
    git(project, "commit", "--quiet", "-am", "neg; mul broken again")
    # The ledger that started from the old tip goes on from it only if you pin it.
    out = cli("-q", "fix", "scan")
    assert out.exit_code == 2 and "the workspace base moved" in out.stderr
    assert "pin" in out.stderr and "new ledger" in out.stderr
    # A new ledger starts from the new tip.
    (here / "fix.reins.db").rename(here / "fix-first.reins.db")
    scanned = json.loads(cli("-q", "fix", "scan", "--json").stdout)
    assert scanned["added"] == 2
    assert scanned["source"]["base"] == git(project, "rev-parse", "main").strip()
    out = cli("-q", "fix", "loop", "--model", model)
    said = out.output + out.stderr
    assert out.exit_code == 0, said
    assert "PASS 2" in said and "failed to unpack" not in said and "stays in" not in said
    for key in (mul, "tests/test_calc.py::test_neg"):
        work = exported(here, "fix")[key]
        assert git(project, "rev-parse", work["branch"]).strip() == work["commit"], key
    assert exported(here, "fix")[mul]["branch"] == old_mul["branch"]  # merged: moved on
    out = cli("-q", "fix", "land", "fixes")
    assert out.exit_code == 0, out.output + out.stderr
    assert "2 landed now" in out.stdout
    landed = git(project, "show", "fixes:calc.py")
    assert "return a + b" in landed and "return a * b" in landed and "return -a" in landed
    assert git(project, "merge-base", "--is-ancestor", "main", "fixes") == ""
