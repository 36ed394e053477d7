"""Items found in a repository (``[items] from``): each source finds exactly what the tool
itself reports (pytest's FAILED and ERROR lines, ruff's and mypy's files, the files a glob
names), a rescan adds only what is new and never reopens a locked item, and a scan reads a
tree of reins' own at the recorded base, never the user's checkout."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reins import SQLiteStore, State
from reins.errors import Exit
from reins.store.walk import iter_items
from tests.kit.codingkit import agent, checkout_state, cli, git, make_repo

CALC = """\
def add(a, b):
    return a - b


def mul(a, b):
    return a * b


def neg(a):
    return a
"""
TESTS = """\
import pytest
import calc


def test_add():
    assert calc.add(2, 3) == 5


def test_mul():
    assert calc.mul(2, 3) == 6


@pytest.mark.parametrize("n", [1, 2])
def test_neg(n):
    assert calc.neg(n) == -n


@pytest.fixture
def broken():
    raise RuntimeError("set-up fails")


def test_uses_broken(broken):
    pass


@pytest.mark.skip(reason="not today")
def test_skipped():
    assert False
"""
PROJECT = {
    "calc/__init__.py": CALC,
    "calc/extra.py": "import os\n\n\ndef untyped(x):\n    return x\n",
    "tests/test_calc.py": TESTS,
    "tests/test_broken.py": "import no_such_module_here\n",
    "tests/data/test_fixture_data.py": "X = 1\n",
    "docs/index.md": "calc\n",
    ".gitignore": "__pycache__/\n",
}
GATE = (
    "# gate\n\n## Rules\n\n| id | level | check | parameters | coaching |\n"
    "|----|-------|-------|------------|----------|\n"
    '| its-test | FAIL | pytest | tests = ["{item.test}"], timeout = 120 | Make it pass. |\n'
)


def quest(folder: Path, repo: Path, items: str) -> Path:
    folder.mkdir(exist_ok=True)
    (folder / "quest.toml").write_text(
        f'name = "{folder.name}"\n\n[items]\n{items}\n\n[prompt]\noutput = "text"\n'
        'template = "Make {{ item.test }} pass."\n\n[judge]\nmax_tries = 2\n\n'
        f'[workspace]\nrepo = "{repo}"\nsandbox = "none"\njudge = ["tests/**"]\n',
        encoding="utf-8",
    )
    (folder / "gate.md").write_text(GATE, encoding="utf-8")
    return folder


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in ("REINS_LEDGER", "REINS_QUEST", "REINS_DRIVER"):
        monkeypatch.delenv(name, raising=False)
    make_repo(tmp_path / "calc", PROJECT)
    return tmp_path


def _items(name: str) -> list[dict[str, object]]:
    """The ledger's items: key, payload, state."""
    with SQLiteStore.open(Path(f"{name}.reins.db")) as led:
        return [{"key": i.key, "payload": i.payload, "state": i.state} for i in iter_items(led)]


def payload_of(name: str, key: str) -> dict[str, Any]:
    with SQLiteStore.open(Path(f"{name}.reins.db")) as led:
        found = led.get(key).payload
    assert isinstance(found, dict)
    return found


def scan(name: str, *args: str) -> dict[str, object]:
    out = cli("-q", name, "scan", "--json", *args)
    assert out.exit_code == 0, out.output + out.stderr
    return dict(json.loads(out.stdout))


def base_of(name: str) -> str:
    """The base commit the ledger of quest ``name`` recorded."""
    from reins.workspace.site import BASE_META

    with SQLiteStore.open(Path(f"{name}.reins.db")) as led:
        base = led.meta(BASE_META)
    assert base is not None
    return base


def clean_checkout(repo: Path, into: Path) -> Path:
    git(repo.parent, "clone", "--quiet", str(repo), str(into))
    return into


# -- pytest ----------------------------------------------------------------------------------


def pytest_reports(folder: Path, *args: str) -> set[str]:
    """The node ids pytest itself reports as FAILED or ERROR, read off its short summary."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider",
         "--continue-on-collection-errors", *args],
        cwd=folder, capture_output=True, text=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )  # fmt: skip
    found = re.findall(r"^(?:FAILED|ERROR) (\S+)", done.stdout, re.M)
    return set(found)


def test_pytest_makes_one_item_per_failing_function_unless_told(here: Path) -> None:
    """One bug fails every parametrisation of its test: one item each made 37 items of 5 bugs
    on a real project. By default an item is a function; ``group = "file"`` a file."""
    quest(here / "fix", here / "calc", 'from = "pytest"\nargs = ["tests"]')
    said = scan("fix")
    assert said["added"] == 4 and {row["key"] for row in _items("fix")} == {
        "tests/test_calc.py::test_add",
        "tests/test_calc.py::test_neg",
        "tests/test_calc.py::test_uses_broken",
        "tests/test_broken.py",
    }
    neg = payload_of("fix", "tests/test_calc.py::test_neg")
    assert neg["test"] == "tests/test_calc.py::test_neg"  # the pytest check runs all of them
    assert neg["tests"] == ["tests/test_calc.py::test_neg[1]", "tests/test_calc.py::test_neg[2]"]
    assert neg["message"].endswith("(and 1 more of tests/test_calc.py::test_neg failing)")
    quest(here / "byfile", here / "calc", 'from = "pytest"\nargs = ["tests"]\ngroup = "file"')
    scan("byfile")
    files = {row["key"] for row in _items("byfile")}
    assert files == {"tests/test_calc.py", "tests/test_broken.py"}


def test_pytest_finds_exactly_the_tests_pytest_reports_failing(here: Path) -> None:
    quest(here / "fix", here / "calc", 'from = "pytest"\nargs = ["tests"]\ngroup = "test"')
    before = checkout_state(here / "calc")
    said = scan("fix")
    items = {row["key"]: row for row in _items("fix")}
    expected = pytest_reports(clean_checkout(here / "calc", here / "check"), "tests")
    assert expected == {
        "tests/test_calc.py::test_add",
        "tests/test_calc.py::test_neg[1]",
        "tests/test_calc.py::test_neg[2]",
        "tests/test_calc.py::test_uses_broken",
        "tests/test_broken.py",
    }
    assert set(items) == expected and said["added"] == 5
    add = payload_of("fix", "tests/test_calc.py::test_add")
    broken = payload_of("fix", "tests/test_broken.py")
    setup = payload_of("fix", "tests/test_calc.py::test_uses_broken")
    assert add == {
        "test": "tests/test_calc.py::test_add",
        "path": "tests/test_calc.py",
        "outcome": "failed",
        "message": add["message"],
        "tests": ["tests/test_calc.py::test_add"],
    }
    assert "assert -1 == 5" in add["message"]
    assert broken["outcome"] == "error" and "no_such_module_here" in broken["message"]
    assert setup["outcome"] == "error" and "set-up fails" in setup["message"]
    assert checkout_state(here / "calc") == before  # the scan ran in reins' own tree


def test_a_file_that_does_not_collect_is_found_once_however_many_collectors_fail(
    here: Path,
) -> None:
    """Under --doctest-modules pytest collects a test file twice (its tests, its doctests): one
    import error was two collection errors, found twice and counted once as already present
    (issue 39)."""
    quest(
        here / "fix",
        here / "calc",
        'from = "pytest"\nargs = ["--doctest-modules", "tests"]\ngroup = "test"',
    )
    said = scan("fix")
    assert (said["added"], said["present"], said["source"]) == (5, 0, {
        "kind": "pytest", "base": base_of("fix"), "found": 5})  # fmt: skip
    assert "tests/test_broken.py" in {row["key"] for row in _items("fix")}
    out = cli("-q", "fix", "scan")
    assert out.stdout.startswith("pytest found 5 item(s) at base ")
    assert "added 0 item(s), 5 already present" in out.stdout


def test_a_rescan_adds_what_is_new_and_never_reopens_a_locked_item(here: Path) -> None:
    folder = quest(
        here / "fix",
        here / "calc",
        'from = "pytest"\nargs = ["tests/test_calc.py"]\ngroup = "test"',
    )
    assert scan("fix")["added"] == 4
    # The agent fixes add() only; its rule runs the item's own test ({item.test}).
    fixer = agent(here / "fix_add.py", (
        "import re, sys\nprompt = sys.stdin.read()\n"
        "src = open('calc/__init__.py').read()\n"
        "if 'test_add' in prompt:\n    src = src.replace('return a - b', 'return a + b')\n"
        "open('calc/__init__.py', 'w').write(src)\nprint('done')\n"
    ))  # fmt: skip
    out = cli("-q", "fix", "loop", "--model", f"cmd:{fixer}", "--max-items", "1", "--json")
    assert out.exit_code == 0, out.output + out.stderr
    with SQLiteStore.open(here / "fix.reins.db") as led:
        locked = led.get("tests/test_calc.py::test_add")
    assert locked.state is State.PASS
    # A wider scan finds the collection error too; the locked item stays as it is.
    text = (folder / "quest.toml").read_text().replace('["tests/test_calc.py"]', '["tests"]')
    (folder / "quest.toml").write_text(text)
    said = scan("fix")
    assert (said["added"], said["present"]) == (1, 4)
    # What the source found (all five, the locked one too), beside what the ledger added.
    assert said["source"] == {"kind": "pytest", "base": base_of("fix"), "found": 5}
    out = cli("-q", "fix", "scan")
    assert out.stdout.startswith(f"pytest found 5 item(s) at base {base_of('fix')[:12]}\n")
    assert "added 0 item(s), 5 already present" in out.stdout
    with SQLiteStore.open(here / "fix.reins.db") as led:
        assert led.get("tests/test_calc.py::test_add").state is State.PASS
        assert led.get("tests/test_broken.py").state is State.TODO
    assert scan("fix")["added"] == 0


def test_a_scan_reads_the_recorded_base_and_refuses_a_moved_one(here: Path) -> None:
    quest(here / "fix", here / "calc", 'from = "pytest"\nargs = ["tests"]\ngroup = "test"')
    scan("fix")
    (here / "calc" / "calc" / "__init__.py").write_text(CALC.replace("a - b", "a + b"))
    git(here / "calc", "commit", "--quiet", "-am", "fix add")
    out = cli("-q", "fix", "scan")
    assert out.exit_code != 0 and "the workspace base moved" in out.output + out.stderr


def test_uncommitted_changes_in_the_checkout_are_not_what_is_scanned(here: Path) -> None:
    quest(here / "fix", here / "calc", 'from = "pytest"\nargs = ["tests"]\ngroup = "test"')
    (here / "calc" / "calc" / "__init__.py").write_text(CALC.replace("a - b", "a + b"))
    scan("fix")
    items = {row["key"] for row in _items("fix")}
    assert "tests/test_calc.py::test_add" in items  # the base's add(), not the edited one


# -- a program's findings ----------------------------------------------------------------------


def test_command_finds_exactly_the_files_ruff_reports(here: Path) -> None:
    ruff = [sys.executable, "-m", "ruff"]
    argv = json.dumps(["{python}", "-m", "ruff", "check", "--no-cache", "--output-format", "json",
                       "--select", "F", "."])  # fmt: skip
    quest(here / "lint", here / "calc", f'from = "command"\ncommand = {argv}\ngroup = "filename"')
    scan("lint")
    items = {row["key"]: row for row in _items("lint")}
    check = clean_checkout(here / "calc", here / "check")
    done = subprocess.run([*ruff, "check", "--no-cache", "--output-format", "json", "--select",
                           "F", "."], cwd=check, capture_output=True, text=True)  # fmt: skip
    reported = {os.path.relpath(r["filename"], check) for r in json.loads(done.stdout)}
    assert reported == {"calc/extra.py", "tests/test_broken.py"}
    assert set(items) == reported
    extra = payload_of("lint", "calc/extra.py")
    assert extra["path"] == "calc/extra.py" and extra["count"] == 1
    assert extra["records"][0]["code"] == "F401"


def test_command_finds_exactly_the_files_mypy_names_with_errors(here: Path) -> None:
    argv = json.dumps(["{python}", "-m", "mypy", "--strict", "--no-incremental", "-O", "json",
                       "calc"])  # fmt: skip
    where = 'where = { severity = "error" }'
    quest(
        here / "typed",
        here / "calc",
        f'from = "command"\ncommand = {argv}\ngroup = "file"\n{where}',
    )
    scan("typed")
    check = clean_checkout(here / "calc", here / "check")
    done = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "-O",
                           "json", "calc"], cwd=check, capture_output=True, text=True)  # fmt: skip
    records = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    named = {r["file"] for r in records if r["severity"] == "error"}
    assert named == {"calc/__init__.py", "calc/extra.py"}
    assert {row["key"] for row in _items("typed")} == named


def test_a_command_that_crashes_or_prints_no_records_is_refused(here: Path) -> None:
    crash = json.dumps(
        ["{python}", "-c", "import sys; print('boom', file=sys.stderr); sys.exit(2)"]
    )
    quest(here / "a", here / "calc", f'from = "command"\ncommand = {crash}')
    out = cli("-q", "a", "scan")
    assert out.exit_code == int(Exit.USAGE) and "exited 2" in out.stderr and "boom" in out.stderr
    prose = json.dumps(["{python}", "-c", "print('all good, no findings!')"])
    quest(here / "b", here / "calc", f'from = "command"\ncommand = {prose}')
    out = cli("-q", "b", "scan")
    assert out.exit_code == int(Exit.USAGE) and "not a JSON record" in out.stderr
    ungrouped = json.dumps(["{python}", "-c", 'print(\'{"file": "x"}\')'])
    quest(here / "c", here / "calc", f'from = "command"\ncommand = {ungrouped}\ngroup = "path"')
    out = cli("-q", "c", "scan")
    assert out.exit_code == int(Exit.USAGE) and "no 'path' to group by" in out.stderr


# -- files ------------------------------------------------------------------------------------


def test_files_finds_the_tracked_files_the_globs_name(here: Path) -> None:
    (here / "calc" / "tests" / "test_untracked.py").write_text("x = 1\n")  # not in the base
    globs = 'include = ["tests/**/test_*.py"]\nexclude = ["tests/data/**"]'
    quest(here / "move", here / "calc", f'from = "files"\n{globs}')
    scan("move")
    listed = git(here / "calc", "ls-files").split()
    expected = {p for p in listed if p.startswith("tests/") and "/data/" not in p}
    assert {row["key"] for row in _items("move")} == expected == {
        "tests/test_calc.py", "tests/test_broken.py"}  # fmt: skip


# -- the document -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("items", "said"),
    [
        ('from = "grep"', 'from must be "pytest", "command" or "files"'),
        ('from = "pytest"\ninclude = ["x"]', "include is not read by from = 'pytest'"),
        ('from = "files"', "give include"),
        ('from = "files"\ninclude = ["../x"]', ". and .. have no meaning"),
        ('from = "command"', "give command"),
        ('from = "command"\ncommand = ["x"]\nok_codes = ["0"]', "ok_codes must be an array"),
        ('from = "pytest"\ntimeout = 0', "above 0"),
    ],
)
def test_a_bad_items_table_is_refused_at_its_line(here: Path, items: str, said: str) -> None:
    quest(here / "q", here / "calc", items)
    out = cli("-q", "q", "scan")
    assert out.exit_code != 0 and said in out.stderr
    assert "quest.toml:" in out.stderr


def test_items_found_in_a_repository_need_a_workspace(here: Path) -> None:
    folder = here / "q"
    folder.mkdir()
    (folder / "quest.toml").write_text(
        'name = "q"\n\n[items]\nfrom = "pytest"\n\n[prompt]\noutput = "text"\ntemplate = "x"\n'
    )
    (folder / "gate.md").write_text(GATE.replace('tests = ["{item.test}"], ', ""))
    out = cli("-q", "q", "scan")
    assert out.exit_code != 0 and "need a [workspace]" in out.stderr


# -- an item's fields in a rule's parameters --------------------------------------------------


def test_an_items_field_fills_a_rule_and_cannot_smuggle_an_option() -> None:
    from reins.checks._common import filled
    from reins.errors import JudgeError
    from reins.gate.rule import Context

    ctx = Context("k", None, payload={"test": "tests/t.py::test_a", "deep": {"n": 3}})
    assert filled("{item.test}", ctx, check="pytest") == "tests/t.py::test_a"
    assert filled("{key}:{item.deep.n}", ctx, check="pytest") == "k:3"
    assert filled("{item}", ctx, check="pytest") == "{item}"  # not a field: left as written
    # The attack: an item (a proposal, a crafted scan) whose field reads as an option.
    evil = Context("k", None, payload={"test": "-p evil_plugin"})
    with pytest.raises(JudgeError, match="would read as an option"):
        filled("{item.test}", evil, check="pytest")
    with pytest.raises(JudgeError, match="has no field 'path'"):
        filled("{item.path}", ctx, check="pytest")
    with pytest.raises(JudgeError, match="has no field 'deep'"):
        filled("{item.deep}", ctx, check="pytest")  # an object is not one argument


# -- a crash in a scan ------------------------------------------------------------------------

SLOW = """\
import os, time


def test_slow():
    open(os.path.join(os.path.dirname(os.path.dirname(__file__)), "started"), "w").close()
    if os.path.exists({flag!r}):
        time.sleep(120)
    assert False
"""


def test_a_scan_killed_midway_loses_nothing_and_adds_nothing_twice(here: Path) -> None:
    import signal

    # The scan runs the tests confined: they write only their tree (where the test looks for
    # "started") and read the toolchain, the interpreter's folder among it (the flag's place).
    flag = Path(sys.prefix) / f"reins-test-slow-{os.getpid()}-{here.name}.flag"
    flag.touch()
    (here / "calc" / "tests" / "test_slow.py").write_text(SLOW.format(flag=str(flag)))
    git(here / "calc", "add", "--all")
    git(here / "calc", "commit", "--quiet", "-m", "a slow test")
    quest(here / "fix", here / "calc", 'from = "pytest"\nargs = ["tests"]\ngroup = "test"')
    argv = [sys.executable, "-m", "reins.cli", "-q", "fix", "scan"]
    proc = subprocess.Popen(argv, cwd=here, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    started: list[Path] = []
    try:
        for _ in range(600):  # the suite is running in reins' tree
            started = list(here.glob(".reins*/**/judge/*/started"))
            if started or proc.poll() is not None:
                break
            import time

            time.sleep(0.1)
        assert started and proc.poll() is None
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        flag.unlink()
    said = scan("fix")
    items = {row["key"] for row in _items("fix")}
    assert "tests/test_slow.py::test_slow" in items and len(items) == 6
    assert said["added"] == 6
    assert scan("fix")["added"] == 0


def test_a_python_quest_finds_its_items_with_a_workspace_only() -> None:
    from reins import Quest
    from reins.errors import ConfigError
    from reins.sources.matching import MatchingFiles

    with pytest.raises(ConfigError, match="need the quest's workspace"):
        Quest("q", seed=lambda a: [], render=str, prepare=lambda i, s: None, rules=[],  # type: ignore[arg-type,return-value]
              found=MatchingFiles(["*.py"]))  # fmt: skip
