"""Issue 39, the project's environment: ``[workspace] setup`` builds it once per base (in the
sandbox), the judge's tests run with its interpreter and see the files it generated, never
reins' own environment; a verdict that would be the environment's, not the tree's, is the
judge's error: the project imported from outside the tree, or a pass with nothing changed."""

from __future__ import annotations

import json
import os
import sys
import sysconfig
from pathlib import Path

import pytest

from reins import SQLiteStore, State
from reins.store import AttemptKind
from reins.store.walk import iter_items
from tests.kit.codingkit import agent, cli, git, make_repo

# Builds the environment as a project's setup would, offline: a virtual environment of the
# interpreter's installation, pytest lent from reins' own (a .pth), the dependency `wordlib`
# (in no environment of reins'), and a generated `src/greet/_version.py` (git ignores it).
# With "editable", it also installs a copy of greet the way setuptools' editable installs do: a
# finder on sys.meta_path, which wins over sys.path.
MAKE_ENV = """
import os, sys, venv
env, lend, how = sys.argv[1], sys.argv[2], sys.argv[3]
venv.create(env, with_pip=False)
site = os.path.join(env, "lib", f"python{sys.version_info[0]}.{sys.version_info[1]}",
                    "site-packages")
open(os.path.join(site, "lent.pth"), "w").write(lend + "\\n")
os.makedirs(os.path.join(site, "wordlib"))
open(os.path.join(site, "wordlib", "__init__.py"), "w").write(
    "def shout(s):\\n    return s.upper() + '!'\\n")
open("src/greet/_version.py", "w").write("VERSION = '1.2.3'\\n")
open(os.path.join(site, "greeting_plugin.py"), "w").write(
    "import pytest\\n@pytest.fixture\\ndef greeting():\\n    return 'hello'\\n")
if how == "editable":
    os.makedirs(os.path.join(env, "copy", "greet"))
    open(os.path.join(env, "copy", "greet", "__init__.py"), "w").write(
        "from wordlib import shout\\ndef greet(name):\\n    return shout('hello ' + name)\\n")
    open(os.path.join(site, "_greet_finder.py"), "w").write(
        "import importlib.machinery, sys\\n"
        "class F:\\n"
        "    @staticmethod\\n"
        "    def find_spec(name, path=None, target=None):\\n"
        "        if name == 'greet':\\n"
        "            return importlib.machinery.PathFinder.find_spec(\\n"
        f"                name, [{os.path.join(env, 'copy')!r}])\\n"
        "sys.meta_path.insert(0, F)\\n")
    open(os.path.join(site, "__editable__greet.pth"), "w").write("import _greet_finder\\n")
"""
BUGGY = "from wordlib import shout\n\n\ndef greet(name):\n    return shout('helo ' + name)\n"
FIXED = BUGGY.replace("helo", "hello")
TEST = (
    "from greet import greet\nfrom greet._version import VERSION\n\n\n"
    "def test_greet():\n    assert greet('ann') == 'HELLO ANN!'\n\n\n"
    "def test_version():\n    assert VERSION == '1.2.3'\n"
)
RULE = '| fixed | FAIL | pytest | tests = ["tests/test_greet.py::test_greet"] | Fix greet. |'


def project(folder: Path, how: str = "plain", *, test: str = TEST, rule: str = RULE) -> Path:
    """A quest folder that is the repository of a project with a ``src`` layout, a dependency
    only its environment has and a generated version file; one item, ``greet``."""
    python = os.path.realpath(sys.executable)
    lend = sysconfig.get_paths()["purelib"]
    setup = [f"{python} tools/make_env.py $REINS_ENV {lend} {how}"]
    toml = (
        'name = "{name}"\n\n[items]\nsource = "items.jsonl"\n\n[prompt]\noutput = "text"\n'
        'template = "Fix {{{{ key }}}}."\n\n[judge]\nmax_tries = 2\n\n[workspace]\n'
        f"setup = {json.dumps(setup)}\n"
    ).format(name=folder.name)
    gate = (
        "# gate\n\n## Rules\n\n| id | level | check | parameters | coaching |\n"
        "|----|-------|-------|------------|----------|\n" + rule + "\n"
    )
    files: dict[str, str | bytes] = {
        "quest.toml": toml,
        "gate.md": gate,
        "items.jsonl": json.dumps({"id": "greet"}) + "\n",
        ".gitignore": "__pycache__/\nsrc/greet/_version.py\n",
        "tools/make_env.py": MAKE_ENV,
        "src/greet/__init__.py": BUGGY,
        "tests/test_greet.py": test,
    }
    return make_repo(folder, files)


def fixer(here: Path) -> Path:
    """Fixes greet, and says whether the `python` on its PATH has the project's dependency."""
    return agent(here / "fix.py", (
        f"open('src/greet/__init__.py', 'w').write({FIXED!r})\n"
        "import subprocess\n"
        "ran = subprocess.run(['python', '-c', 'import wordlib'], capture_output=True)\n"
        "print('wordlib on my PATH:', ran.returncode == 0)\n"
        "import os\n"
        "print('version file here:', os.path.isfile('src/greet/_version.py'))\n"
    ))  # fmt: skip


def loop(here: Path, script: Path) -> tuple[str, list[str]]:
    out = cli("-q", "q", "loop", "--model", f"cmd:{script}", "--json")
    assert out.exit_code in (0, 10), out.output
    notes = [e["message"] for e in map(json.loads, out.stdout.splitlines()) if e["event"] == "note"]
    return out.stdout, notes


@pytest.fixture
def here(tmp_path: Path) -> Path:
    return tmp_path


def test_the_judge_runs_the_project_in_its_own_environment(here: Path) -> None:
    project(here / "q")
    scanned = cli("-q", "q", "scan")
    assert scanned.exit_code == 0, scanned.output
    _, notes = loop(here, fixer(here))
    assert any(n.startswith("building the project's environment") for n in notes), notes
    assert any("tests run with the project's interpreter" in n for n in notes), notes
    with SQLiteStore.open(here / "q.reins.db") as led:
        item, log = led.snapshot("greet")
    # wordlib is in no environment of reins', and _version.py only setup made: the verdict is
    # the tree's, with the project's interpreter and generated file.
    assert item.state is State.PASS, [(a.kind, a.error, a.facts) for a in log]
    assert "wordlib on my PATH: True" in (log[-1].submission or "")  # the agent's env too
    assert "version file here: True" in (log[-1].submission or "")  # and what setup made
    envs = list((here / ".reins-worktrees" / "q" / ".reins" / "envs").iterdir())
    assert len([e for e in envs if e.is_dir() and not e.name.endswith(".files")]) == 1
    # A second run reuses it (nothing built again).
    quest_items = here / "q" / "items.jsonl"
    quest_items.write_text(quest_items.read_text() + json.dumps({"id": "again"}) + "\n")
    _, notes = loop(here, fixer(here))
    assert not any(n.startswith("building") for n in notes), notes


def test_an_environment_changed_since_it_was_built_is_built_again(here: Path) -> None:
    project(here / "q")
    assert cli("-q", "q", "scan").exit_code == 0
    loop(here, fixer(here))
    envs = here / ".reins-worktrees" / "q" / ".reins" / "envs"
    folder = next(e for e in envs.iterdir() if e.is_dir() and not e.name.endswith(".files"))
    planted = next(folder.rglob("wordlib/__init__.py"))
    planted.write_text("def shout(s):\n    return 'HELLO ANN!'\n")  # every call passes
    from reins.workspace import environment

    environment._CHECKED.clear()  # a new process: what it proved before is proved again
    assert not environment._intact(str(folder))


def test_an_installed_copy_of_the_project_is_the_judges_error_not_a_verdict(here: Path) -> None:
    project(here / "q", "editable")
    assert cli("-q", "q", "scan").exit_code == 0
    nothing = agent(here / "nothing.py", "print('done')\n")  # the installed copy is correct
    loop(here, nothing)
    with SQLiteStore.open(here / "q.reins.db") as led:
        item, log = led.snapshot("greet")
    assert item.state is State.TODO and item.tries == 0
    assert log[-1].kind is AttemptKind.JUDGE_ERROR, log[-1]
    assert "the tests imported greet from" in (log[-1].error or "")
    assert "outside the judge's tree" in (log[-1].error or "")


def test_a_pass_with_nothing_changed_of_a_test_failing_at_the_base_is_the_judges_error(
    here: Path,
) -> None:
    """The base run differs from the judged one (here: a file only the base's tree holds),
    so the test passes with no change at all: the environment was judged, not the change."""
    test = (
        "import os\n\n\ndef test_greet():\n"
        "    here = os.path.dirname(__file__)\n"
        "    assert not os.path.exists(os.path.join(here, 'only_at_base.py'))\n"
    )
    project(here / "q", test=test)
    hidden = here / "hidden" / "tests"
    hidden.mkdir(parents=True)
    (hidden / "only_at_base.py").write_text("")
    toml = here / "q" / "quest.toml"
    toml.write_text(toml.read_text() + f"hidden = {json.dumps(str(here / 'hidden'))}\n")
    assert cli("-q", "q", "scan").exit_code == 0
    loop(here, agent(here / "nothing.py", "print('done')\n"))
    with SQLiteStore.open(here / "q.reins.db") as led:
        item, log = led.snapshot("greet")
    assert item.state is State.TODO and log[-1].kind is AttemptKind.JUDGE_ERROR, log[-1]
    assert "nothing changed, yet a test that fails at the base passes" in (log[-1].error or "")


def test_a_setup_that_fails_says_which_command_and_why(here: Path) -> None:
    project(here / "q")
    toml = here / "q" / "quest.toml"
    toml.write_text(toml.read_text().replace("setup = [", 'setup = ["exit 3", '))
    assert cli("-q", "q", "scan").exit_code == 0
    out = cli("-q", "q", "loop", "--model", f"cmd:{fixer(here)}")
    assert out.exit_code == 2, out.output
    assert "[workspace] setup: `exit 3` failed (exit code 3)" in out.stderr, out.stderr


def test_a_bad_setup_is_refused_at_its_line(here: Path) -> None:
    project(here / "q")
    toml = here / "q" / "quest.toml"
    toml.write_text(toml.read_text().replace("setup = [", "setup = 3\nsetup_files = ["))
    out = cli("-q", "q", "scan")
    assert out.exit_code == 2 and "setup must be an array" in out.stderr, out.stderr


def test_scan_finds_the_failing_tests_in_the_projects_environment(here: Path) -> None:
    """Without it, every test of the project is a collection error (no wordlib, no
    _version.py): the scan's items would be the environment's, not the project's."""
    project(here / "q")
    toml = here / "q" / "quest.toml"
    toml.write_text(toml.read_text().replace('source = "items.jsonl"',
                                             'from = "pytest"\nargs = ["tests"]'))  # fmt: skip
    out = cli("-q", "q", "scan", "--json")
    assert out.exit_code == 0, out.output
    with SQLiteStore.open(here / "q.reins.db") as led:
        keys = [item.key for item in iter_items(led)]
    assert keys == ["tests/test_greet.py::test_greet"], keys


def test_a_command_rule_runs_the_projects_python_and_facts_name_paths_from_the_top(
    here: Path,
) -> None:
    rule = (
        '| env | FAIL | command | run = ["{python}", "-c", "import wordlib, sys; '
        "sys.exit(open('absent.txt').read())\"], workspace = true | Use the environment. |"
    )
    project(here / "q", rule=rule)
    assert cli("-q", "q", "scan").exit_code == 0
    loop(here, agent(here / "nothing.py", "print('done')\n"))
    with SQLiteStore.open(here / "q.reins.db") as led:
        log = led.snapshot("greet")[1]
    said = " ".join(f"{f.where} {f.expected} {f.actual}" for a in log for f in a.facts)
    # wordlib imported (the project's python), then the file is missing: a located fact whose
    # text holds no folder of reins'
    assert "No such file or directory: 'absent.txt'" in said, said
    assert "ModuleNotFoundError" not in said and ".reins" not in said, said


def test_a_pytest_fact_names_paths_from_the_tree_s_top(here: Path) -> None:
    test = (
        "import os\n\n\ndef test_greet():\n"
        "    assert os.path.exists(os.path.join(os.path.dirname(__file__), 'missing.txt'))\n"
    )
    project(here / "q", test=test)
    assert cli("-q", "q", "scan").exit_code == 0
    loop(here, fixer(here))
    with SQLiteStore.open(here / "q.reins.db") as led:
        log = led.snapshot("greet")[1]
    said = " ".join(f.actual for a in log for f in a.facts)
    assert "tests/missing.txt" in said and ".reins" not in said, said


POLITE = TEST + "\n\ndef test_polite(greeting):\n    assert greeting == 'hello'\n"
BOTH = '["tests/test_greet.py::test_greet", "tests/test_greet.py::test_polite"]'
LAND = (
    "# land\n\n## Rules\n\n| id | level | check | parameters | coaching |\n"
    "|----|-------|-------|------------|----------|\n"
    f"| landed | FAIL | pytest | tests = {BOTH} | Keep them. |\n"
)


def test_plugins_given_once_load_in_every_run_and_land_judges_in_the_environment(
    here: Path,
) -> None:
    """The suite needs a plugin of the environment's (its fixture ``greeting``): named once in
    ``[workspace] plugins``, it loads in the gate's runs, the land rules' and the whole suite
    land runs, each with the project's interpreter (wordlib is in no environment of reins')."""
    for name, plugins in (("q", 'plugins = ["greeting_plugin"]\n'), ("r", "")):
        repo = project(
            here / name,
            test=POLITE,
            rule=f"| fixed | FAIL | pytest | tests = {BOTH} | Fix greet. |",
        )
        toml = repo / "quest.toml"
        toml.write_text(toml.read_text() + plugins + '\n[land]\nrules_file = "land.md"\n')
        (repo / "land.md").write_text(LAND)
        assert cli("-q", name, "scan").exit_code == 0
        assert cli("-q", name, "loop", "--model", f"cmd:{fixer(here)}").exit_code in (0, 10)
    with SQLiteStore.open(here / "r.reins.db") as led:
        item, log = led.snapshot("greet")
    assert item.state is State.DONE  # without the plugin: the fixture is not found
    assert "fixture 'greeting' not found" in " ".join(f.actual for f in log[-1].facts)
    with SQLiteStore.open(here / "q.reins.db") as led:
        assert led.get("greet").state is State.PASS
    landed = cli("-q", "q", "land", "integration", "--json")
    assert landed.exit_code == 0, landed.output
    said = json.loads(landed.stdout.splitlines()[-1])
    assert said["moved"] is True and said["suite"]["passed"] is True, said


def test_an_unconfined_agent_that_writes_the_environment_gets_no_verdict_from_it(
    here: Path,
) -> None:
    """Under ``--sandbox none`` the agent runs as you do and can write the environment (here,
    a wordlib whose shout makes every greeting pass): each judgment proves the environment
    first, so the verdict is never the tampered environment's."""
    project(here / "q")
    assert cli("-q", "q", "scan").exit_code == 0
    tamper = agent(here / "tamper.py", (
        "import subprocess\n"
        "where = subprocess.run(['python', '-c', 'import wordlib; print(wordlib.__file__)'],\n"
        "                       capture_output=True, text=True).stdout.strip()\n"
        "open(where, 'w').write('def shout(s):\\n    return \"HELLO ANN!\"\\n')\n"
        "print('wrote', where)\n"
    ))  # fmt: skip
    out = cli("-q", "q", "loop", "--model", f"cmd:{tamper}", "--sandbox", "none", "--json")
    with SQLiteStore.open(here / "q.reins.db") as led:
        item, log = led.snapshot("greet")
    assert item.state is not State.PASS, (out.output, [(a.kind, a.error) for a in log])
    errors = " ".join(a.error or "" for a in log)
    assert "environment" in errors and "changed since its setup built it" in errors, errors


def test_the_setup_runs_in_a_checkout_of_the_base_that_a_version_from_git_can_read(
    here: Path,
) -> None:
    """setuptools-scm and hatch-vcs read the version from git: the setup's tree is a clean
    checkout of the base commit (alone: no other commit of yours, no tag, no remote), and no
    judge's tree keeps its ``.git``."""
    repo = project(here / "q")
    toml = repo / "quest.toml"
    line = (
        "git rev-parse HEAD > src/greet/_commit.txt && git rev-list --count HEAD >> "
        "src/greet/_commit.txt && git remote | wc -l >> src/greet/_commit.txt && "
        "git status --porcelain --untracked-files=no >> src/greet/_commit.txt"
    )
    toml.write_text(toml.read_text().replace("setup = [", f"setup = [{json.dumps(line)}, "))
    git(repo, "add", "quest.toml")
    git(repo, "commit", "-qm", "the setup reads git")
    base = git(repo, "rev-parse", "HEAD").strip()
    assert cli("-q", "q", "scan").exit_code == 0
    loop(here, fixer(here))
    [made] = (here / ".reins-worktrees" / "q" / ".reins" / "envs").glob("*.files")
    said = (made / "generated" / "src" / "greet" / "_commit.txt").read_text().split()
    assert said == [base, "1", "0"], said  # the base, alone, no remote, nothing dirty
    assert not list(made.rglob(".git"))
    judge = here / ".reins-worktrees" / "q" / ".reins" / "judge"
    assert not [p for p in judge.glob("*/.git")], list(judge.glob("*/.git"))
