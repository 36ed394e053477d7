"""Issue 37: the code an agent wrote, run by the judge, has no more rights than the agent had.

Each test is an attack by the judged code (or, for reins' own caches, by an agent run
unconfined), written as the attacker would, on a small project whose honest verdict is FAIL:
the attack must end in a FAIL with a located fact, never a PASS, and change nothing outside the
judge's throwaway tree.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from reins.checks import BASE, spec_of, validate
from reins.checks._judged import Judged, policy
from reins.gate.rule import Context
from reins.sandbox import reins_package
from reins.values import Fact, JudgeTree
from tests.kit.codingkit import Judging, checkout_state, git, make_repo, object_files
from tests.kit.judgekit import RIGHT, TESTS, WRONG, verdict

SECRET = "zebra-42-do-not-leak"
HIDDEN = f"from calc import add\n\n\ndef test_secret():\n    assert add(40, 2) == 42, {SECRET!r}\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "project", {"calc.py": WRONG, "tests/test_calc.py": TESTS})


@pytest.fixture
def judging(project: Path, tmp_path: Path) -> Iterator[Judging]:
    judging = Judging(project, tmp_path / "root", judge=["tests/**"])
    yield judging
    judging.close()


def words(facts: list[Fact]) -> str:
    return "\n".join(f"{f.rule} {f.where} {f.expected} {f.actual}" for f in facts)


# -- the sandbox of a judged run ------------------------------------------------------------


def test_the_judge_s_policy_shows_its_tree_and_the_toolchain_and_nothing_of_reins(
    tmp_path: Path,
) -> None:
    tree = tmp_path / "root" / ".reins" / "judge" / "0"
    tree.mkdir(parents=True)
    seen = policy(Judged(str(tree)))
    assert seen.sees(str(tree / "calc.py")) and seen.may_write(str(tree / "calc.py"))
    assert not seen.network and seen.view == "toolchain"
    assert not seen.sees(reins_package())  # judged code must not import reins
    others = [
        tmp_path / "root" / ".reins" / "judge" / "1",
        tmp_path / "q.reins.db",
        Path.home() / ".ssh",
        Path("/etc/shadow"),
        Path(reins_package()).parent,
    ]
    for other in others:
        assert not seen.sees(str(other)), other
        assert not seen.may_write(str(other)), other


PROBE = """
import json, os, socket
seen = {}
def tried(name, act):
    try:
        seen[name] = repr(act())[:200]
    except BaseException as exc:
        seen[name] = "refused: " + type(exc).__name__
tried("import reins", lambda: __import__("reins").__file__)
tried("the user's checkout", lambda: os.listdir(REPO))
tried("a hook in the user's .git", lambda: open(REPO + "/.git/hooks/post-commit", "w").write("x"))
tried("reins' judge store", lambda: os.listdir(ROOT + "/.reins/judge/store.git"))
tried("a file of reins' own checkout", lambda: open(OWN).read())
tried("/etc/shadow", lambda: open("/etc/shadow").read())
tried("the network", lambda: socket.create_connection(("127.0.0.1", PORT), 3))
tried("the environment", lambda: sorted(os.environ))
here = os.path.dirname(os.path.abspath(__file__))
open(os.path.join(here, "seen.json"), "w").write(json.dumps(seen))
"""


def test_judged_code_reaches_no_file_of_the_user_or_of_reins_and_no_network(
    judging: Judging, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REINS_TEST_SECRET", "hunter2")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    own = Path(reins_package()).parent.parent / "pyproject.toml"
    values = (f"REPO = {str(project)!r}\nROOT = {str(tmp_path / 'root')!r}\n"
              f"OWN = {str(own)!r}\nPORT = {listener.getsockname()[1]}\n")  # fmt: skip
    before = (object_files(project), checkout_state(project))
    tree = judging.tree("add", {"calc.py": WRONG + values + PROBE})
    facts = verdict(tree, tmp_path)
    listener.close()
    assert [f.where for f in facts] == ["test tests/test_calc.py::test_add"]
    seen = json.loads((Path(tree.path) / "seen.json").read_text())
    environment = seen.pop("the environment")
    missing = "refused: FileNotFoundError"
    assert seen == {
        "import reins": "refused: ModuleNotFoundError",
        "the user's checkout": missing,
        "a hook in the user's .git": missing,
        "reins' judge store": missing,
        "a file of reins' own checkout": missing,
        "/etc/shadow": missing,
        "the network": "refused: ConnectionRefusedError",  # only the sandbox's own loopback
    }
    assert "REINS_TEST_SECRET" not in environment
    assert (object_files(project), checkout_state(project)) == before
    assert subprocess.run(["git", "-C", str(project), "fsck", "--full"]).returncode == 0


# -- the verdict's channel ------------------------------------------------------------------

FORGES = """
import json, os
fake = {"exitstatus": 0, "tests": {"tests/test_calc.py::test_add": {"phases": {
    "setup": ["passed", False, ""], "call": ["passed", False, ""],
    "teardown": ["passed", False, ""]}}}, "errors": [], "deselected": [], "files": {},
    "nonce": "guessed"}
for fd in range(3, 40):
    try:
        os.write(fd, json.dumps(fake).encode())
    except OSError:
        pass
for folder in (os.getcwd(), os.path.expanduser("~"), "/tmp"):
    try:
        open(os.path.join(folder, "report.json"), "w").write(json.dumps(fake))
    except OSError:
        pass
os._exit(0)
"""
EXITS_AT_EXIT = "import atexit, os\natexit.register(os._exit, 0)\n"


def test_a_report_forged_on_a_descriptor_or_on_disk_and_an_exit_at_import_never_pass(
    judging: Judging, tmp_path: Path
) -> None:
    facts = verdict(judging.tree("add", {"calc.py": WRONG + FORGES}), tmp_path)
    assert len(facts) == 1 and facts[0].actual.startswith("no report: pytest ended")


def test_an_exit_registered_at_exit_does_not_turn_a_failed_test_into_a_pass(
    judging: Judging, tmp_path: Path
) -> None:
    facts = verdict(judging.tree("add", {"calc.py": WRONG + EXITS_AT_EXIT}), tmp_path)
    assert [f.actual.split("\n")[0] for f in facts] == ["failed: assert 0 == 4"]


# -- what pytest reads ----------------------------------------------------------------------

PLUGIN = """import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    report = (yield).get_result()
    report.outcome, report.longrepr = "passed", None
"""
CONFIGS = {
    "pytest.toml": '[pytest]\naddopts = ["-p", "evil"]\npythonpath = ["."]\n',
    ".pytest.toml": '[pytest]\naddopts = ["-p", "evil"]\npythonpath = ["."]\n',
    "pytest.ini": "[pytest]\naddopts = -p evil\npythonpath = .\n",
    "pyproject.toml": '[tool.pytest.ini_options]\naddopts = "-p evil"\npythonpath = ["."]\n',
    "tox.ini": "[pytest]\naddopts = -p evil\npythonpath = .\n",
    "setup.cfg": "[tool:pytest]\naddopts = -p evil\npythonpath = .\n",
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_a_configuration_the_change_adds_is_never_read(
    judging: Judging, tmp_path: Path, name: str
) -> None:
    # Each names a plugin of the change that turns every test into a pass: read, it PASSes.
    tree = judging.tree("add", {name: CONFIGS[name], "evil.py": PLUGIN})
    facts = verdict(tree, tmp_path)
    assert [f.actual.split("\n")[0] for f in facts] == ["failed: assert 0 == 4"]


def test_a_test_module_of_the_change_and_its_plugins_are_never_collected(
    judging: Judging, tmp_path: Path
) -> None:
    planted = {"test_zz.py": 'pytest_plugins = ["evil"]\n\n\ndef test_nothing():\n    pass\n',
               "evil.py": PLUGIN}  # fmt: skip
    facts = verdict(judging.tree("add", planted), tmp_path, passing_at_base=True)
    assert facts == []  # nothing passed at the base, and the planted test is not the judge's
    facts = verdict(judging.tree("add", planted), tmp_path)
    assert [f.actual.split("\n")[0] for f in facts] == ["failed: assert 0 == 4"]


def test_a_module_named_like_one_of_python_s_own_at_the_top_is_a_fact(
    judging: Judging, tmp_path: Path
) -> None:
    planted = {"calc.py": RIGHT, "json.py": "raise SystemExit(0)\n", "pytest/__init__.py": "",
               "test/data.txt": "a folder of data is no module\n"}  # fmt: skip
    facts = verdict(judging.tree("add", planted), tmp_path)
    assert {(f.rule, f.where) for f in facts} == {
        ("reins:shadow", "file json.py"), ("reins:shadow", "file pytest/__init__.py")}  # fmt: skip


STANDS_IN = """
import os, sys, types
def add(a, b):
    return a - b
fake = types.ModuleType("test_calc")
fake.__file__ = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tests", "test_calc.py")
def test_add():
    pass
fake.test_add = test_add
sys.modules["test_calc"] = fake
"""


def test_a_module_that_stands_in_for_the_judge_s_test_file_under_its_ids_is_named(
    tmp_path: Path,
) -> None:
    # tests/test_a.py imports calc first; calc puts its own test_calc in sys.modules, with the
    # judge's file as its __file__, so pytest collects its test_add under the judge's test id.
    first = "import calc\n\n\ndef test_imports():\n    pass\n"
    repo = make_repo(tmp_path / "p", {"calc.py": WRONG, "tests/test_a.py": first,
                                      "tests/test_calc.py": TESTS})  # fmt: skip
    judging = Judging(repo, tmp_path / "root", judge=["tests/**"])
    try:
        facts = verdict(judging.tree("add", {"calc.py": STANDS_IN}), tmp_path)
    finally:
        judging.close()
    assert len(facts) == 1 and facts[0].where == "test tests/test_calc.py::test_add"
    assert (
        facts[0].actual
        == "stood in: its code came from calc.py, not the judge's tests/test_calc.py"
    )


# -- links and the hidden tests ---------------------------------------------------------------


def tree_with_links(judging: Judging, links: dict[str, str], files: dict[str, str]) -> JudgeTree:
    from reins.workspace.change import take

    judging.spaces.prepare("add", judging.spaces.base)
    work = Path(judging.spaces.path_of("add"))
    for name, content in files.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(content)
    for name, target in links.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, work / name)
    change = take(judging.spaces, "add", judging.spaces.base, message="turn")
    held = judging.judges.tree(change.patch.decode(), branch="reins/add")
    judging._held.append(held)
    return held.__enter__()


def test_a_chain_of_links_each_pointing_inside_that_leads_out_is_a_fact(
    judging: Judging, tmp_path: Path
) -> None:
    # Read as text, each target stays inside ("." and "d/../x" is "x"); followed as the kernel
    # follows them, esc is ../judge-secret: a file beside the tree, outside the change.
    (tmp_path / "root" / ".reins" / "judge").mkdir(parents=True, exist_ok=True)
    tree = tree_with_links(judging, {"d": ".", "esc": "d/../judge-secret", "ok": "d/calc.py"}, {})
    facts = [f for f in tree.facts if f.rule == "reins:link"]
    assert [f.where for f in facts] == ["file esc"]
    assert not os.path.lexists(os.path.join(tree.path, "esc"))
    assert os.path.islink(os.path.join(tree.path, "ok"))  # a link that stays inside is kept


@pytest.fixture
def hidden(tmp_path: Path) -> Path:
    folder = tmp_path / "hidden"
    (folder / "tests").mkdir(parents=True)
    (folder / "tests" / "test_hidden.py").write_text(HIDDEN)
    return folder


LEAKS = """
import glob, os
here = os.path.dirname(os.path.abspath(__file__))
found = glob.glob(os.path.join(here, "**", "test_hidden.py"), recursive=True)
open(os.path.join(here, "saw-hidden.txt"), "a").write(str(bool(found)) + "\\n")
def add(a, b):
    if found:
        raise ValueError(open(found[0]).read())
    return a - b
"""


def test_hidden_tests_run_apart_and_their_facts_quote_nothing_the_code_chose(
    project: Path, hidden: Path, tmp_path: Path
) -> None:
    judging = Judging(project, tmp_path / "root", judge=["tests/**"], hidden=str(hidden))
    try:
        tree = judging.tree("add", {"calc.py": LEAKS})
        facts = verdict(tree, tmp_path, tests=["tests/test_hidden.py::test_secret",
                                               "tests/test_calc.py::test_add"])  # fmt: skip
        assert not os.path.exists(os.path.join(tree.path, "tests", "test_hidden.py"))
        saw = (Path(tree.path) / "saw-hidden.txt").read_text()
    finally:
        judging.close()
    assert saw == "False\n"  # the visible run never saw the hidden file
    found = {f.where: f.actual for f in facts}
    assert found["test tests/test_hidden.py::test_secret"] == "failed"  # the outcome alone
    assert SECRET not in words(facts) and "test_secret()" not in words(facts)


@pytest.mark.parametrize("planted", ["a file", "a link"])
def test_a_change_that_takes_the_hidden_tests_place_is_a_fact_and_nothing_is_written_through(
    project: Path, hidden: Path, tmp_path: Path, planted: str
) -> None:
    (hidden / "extra").mkdir()
    (hidden / "extra" / "test_more.py").write_text("def test_more():\n    pass\n")
    judging = Judging(project, tmp_path / "root", judge=["tests/**"], hidden=str(hidden))
    try:
        if planted == "a file":
            tree = judging.tree("add", {"calc.py": RIGHT, "extra": "in the way\n"})
        else:
            tree = tree_with_links(judging, {"extra": "tests"}, {"calc.py": RIGHT})
        facts = verdict(tree, tmp_path)
    finally:
        judging.close()
    assert [f.rule for f in facts] == ["reins:hidden"]
    assert "test_more" not in words(facts)
    assert sorted(os.listdir(Path(tree.path) / "tests")) == ["test_calc.py"]


def test_a_new_link_that_turns_an_old_one_outward_is_a_fact(tmp_path: Path) -> None:
    # The base's y -> x/.. leads nowhere (no x); the change adds x -> ., and y now leads to ..
    repo = make_repo(tmp_path / "p", {"calc.py": WRONG, "tests/test_calc.py": TESTS})
    os.symlink("x/..", repo / "y")
    git(repo, "add", "y")
    git(repo, "commit", "-q", "-m", "a link")
    judging = Judging(repo, tmp_path / "root", judge=["tests/**"])
    try:
        tree = tree_with_links(judging, {"x": "."}, {})
        assert [(f.rule, f.where) for f in tree.facts] == [("reins:link", "file y")]
        assert not os.path.lexists(os.path.join(tree.path, "y"))
    finally:
        judging.close()


def test_a_folder_the_agent_replaced_by_a_link_is_judged_not_an_error(
    judging: Judging, tmp_path: Path
) -> None:
    # tests/ made a link to the top: git would not stage "beyond a symbolic link", which made
    # the whole change a generation error (no try used) where it must be judged.
    import shutil

    from reins.workspace.change import take

    judging.spaces.prepare("add", judging.spaces.base)
    work = Path(judging.spaces.path_of("add"))
    shutil.rmtree(work / "tests")
    os.symlink(".", work / "tests")
    patch = take(judging.spaces, "add", judging.spaces.base, message="turn").patch.decode()
    held = judging.judges.tree(patch, branch="reins/add")
    judging._held.append(held)
    tree = held.__enter__()
    facts = verdict(tree, tmp_path)
    assert ("reins:judge-owned", "file tests/test_calc.py") in {(f.rule, f.where) for f in facts}
    assert any(f.actual.startswith("failed: assert 0 == 4") for f in facts)


def test_a_fact_quotes_only_the_first_line_of_an_exception_the_code_chose(
    judging: Judging, tmp_path: Path
) -> None:
    # What the code raises is the code's text, not the test's: a lookup table's worth of it
    # must not ride into the next prompt.
    raises = "def add(a, b):\n    raise ValueError('first line' + '\\n' + 'x' * 5000)\n"
    [fact] = verdict(judging.tree("add", {"calc.py": raises}), tmp_path)
    assert fact.actual == "failed: ValueError: first line"


def test_a_program_the_change_plants_under_the_judge_s_program_name_is_never_run(
    judging: Judging, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The command check finds its program on reins' own PATH, "." first here: never in the tree
    # the judged code wrote, where a python3 that exits 0 waits.

    monkeypatch.setenv("PATH", "." + os.pathsep + os.environ["PATH"])
    monkeypatch.chdir(tmp_path)
    planted = {"python3": "#!/bin/sh\nexit 0\n", "bin/python3": "#!/bin/sh\nexit 0\n"}
    tree = judging.tree("add", planted)
    for name in planted:
        os.chmod(os.path.join(tree.path, name), 0o755)
    spec = spec_of("command")
    params = {"run": ["python3", "-c", "import sys; sys.exit(3)"], "workspace": True}
    check = spec.build(validate(spec, {**params, BASE: str(tmp_path)}))
    found = check(Context(key="add", submission="", workspace=tree))
    assert isinstance(found, list) and len(found) == 1, found
    assert found[0].actual.startswith("exit code 3")
