"""The worked example on a real project nobody here wrote: toolz 1.0.0 from PyPI (its sdist,
pinned, ships its tests), broken by an "upgrade" (examples/toolz/make_project.py).

Each item source finds exactly what the tool itself reports at the base (pytest's FAILED
lines, the files mypy --strict names), and the ``cmd:`` stand-in passes every item of
``toolz-fix-tests`` in the sandbox, each a branch of the user's repository."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reins import SQLiteStore, State
from reins.store.model import AttemptKind
from reins.store.walk import iter_items
from tests.kit.codingkit import agent, checkout_state, cli, git

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "toolz"


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The example copied out of the checkout, its project made (the user's repository)."""
    monkeypatch.chdir(tmp_path)
    for name in ("REINS_LEDGER", "REINS_QUEST", "REINS_DRIVER"):
        monkeypatch.delenv(name, raising=False)
    for part in ("fix-tests", "typed", "make_project.py", "stand_in.py", "toolz-1.0.0.tar.gz"):
        source = EXAMPLE / part
        if source.is_dir():
            shutil.copytree(source, tmp_path / part)
        else:
            shutil.copy2(source, tmp_path / part)
    done = subprocess.run([sys.executable, "make_project.py"], cwd=tmp_path, capture_output=True)
    assert done.returncode == 0, done.stderr
    return tmp_path


def keys(name: str) -> dict[str, State]:
    with SQLiteStore.open(Path(f"{name}.reins.db")) as led:
        return {item.key: item.state for item in iter_items(led)}


def base_checkout(here: Path) -> Path:
    git(here, "clone", "--quiet", str(here / "project"), str(here / "check"))
    return here / "check"


def test_the_failing_tests_are_the_ones_pytest_itself_reports(here: Path) -> None:
    out = cli("-q", "fix-tests", "scan")
    assert out.exit_code == 0, out.output + out.stderr
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider", "toolz/tests"],
        cwd=base_checkout(here), capture_output=True, text=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )  # fmt: skip
    reported = set(re.findall(r"^(?:FAILED|ERROR) (\S+)", done.stdout, re.M))
    assert len(reported) == 5, done.stdout[-2000:]
    assert set(keys("toolz-fix-tests")) == reported


def test_the_modules_are_the_files_mypy_itself_names(here: Path) -> None:
    out = cli("-q", "typed", "scan")
    assert out.exit_code == 0, out.output + out.stderr
    argv = [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "-O", "json", "toolz"]
    done = subprocess.run(argv, cwd=base_checkout(here), capture_output=True, text=True)
    records = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    named = {r["file"] for r in records if r["severity"] == "error"}
    # Its tests are the judge's (no agent may change them), so they are no items.
    modules = {f for f in named if f.startswith("toolz/") and not f.startswith("toolz/tests/")}
    assert len(modules) > 10 and "toolz/itertoolz.py" in modules
    assert set(keys("toolz-typed")) == modules


# Ways to make `mypy --strict toolz/utils.py` exit 0 without the work, each FAILed by no-ignore
# (config files are the judge's: toolz-typed's [workspace] judge).
UTILS = "toolz/utils.py"
SIGNATURE = "def raises(err, lamda):"
CHEATS = {
    "type-ignore": f"s = s.replace({SIGNATURE!r}, {SIGNATURE + '  # type: ignore'!r})",
    "ignore-errors": "s = '# mypy: ignore-errors\\n' + s",
    "ignore_errors": "s = '# mypy: ignore_errors\\n' + s",  # mypy reads `_` as `-` there
    "disable-error-code": "s = '# mypy: disable-error-code=\"no-untyped-def\"\\n' + s",
    # the ignore, and attributes that would show the module's change as a binary patch
    "binary-diff": (
        f"s = s.replace({SIGNATURE!r}, {SIGNATURE + '  # type: ignore'!r})\n"
        "open('.gitattributes', 'w').write('*.py -diff\\n* binary\\n')"
    ),
}
HONEST = (
    "s = 'from collections.abc import Callable\\n\\n\\n' + s.replace("
    f"{SIGNATURE!r}, "
    "'def raises(err: type[BaseException], lamda: Callable[[], object]) -> bool:')"
)


def test_an_ignore_comment_never_passes_the_typed_gate_and_the_work_does(here: Path) -> None:
    # One item, toolz/utils.py (one error at the base); a try for each cheat and the honest fix.
    quest = here / "typed" / "quest.toml"
    text = (
        quest.read_text()
        .replace('"toolz"]', f'"{UTILS}"]')
        .replace("max_tries = 3", f"max_tries = {len(CHEATS) + 1}")
    )
    quest.write_text(text)
    assert cli("-q", "typed", "scan").exit_code == 0
    assert set(keys("toolz-typed")) == {UTILS}
    # A retry starts from the last try's tree: each script starts again from the base's module.
    start = f"import os\ns = {(here / 'project' / UTILS).read_text()!r}\n"
    start += "if os.path.exists('.gitattributes'):\n    os.remove('.gitattributes')\n"
    for name, body in [*CHEATS.items(), ("honest", HONEST)]:
        script = agent(here / f"{name}.py", f"{start}{body}\n"
                       f"open({UTILS!r}, 'w').write(s)\nprint('done')\n")  # fmt: skip
        out = cli("-q", "typed", "loop", "--model", f"cmd:{script}", "--max-turns", "1")
        assert out.exit_code in (0, 1), out.output + out.stderr
    with SQLiteStore.open(Path("toolz-typed.reins.db")) as led:
        item, log = led.snapshot(UTILS)
    judged = [a for a in log if a.kind is AttemptKind.JUDGED]
    assert len(judged) == len(CHEATS) + 1, [a.kind for a in log]
    for name, attempt in zip(CHEATS, judged, strict=False):
        rules = {f.rule for f in attempt.facts}
        assert attempt.outcome == "FAIL" and "no-ignore" in rules, (name, attempt.facts)
        assert "strict" not in rules, (name, attempt.facts)  # the cheat works on mypy itself
    assert judged[-1].outcome == "PASS", judged[-1].facts
    assert item.state is State.PASS


def test_the_stand_in_passes_every_item_and_every_pass_lands_on_one_branch(here: Path) -> None:
    project = here / "project"
    before = checkout_state(project)
    assert cli("-q", "fix-tests", "scan").exit_code == 0
    model = f"cmd:{here / 'stand_in.py'}"
    out = cli("-q", "fix-tests", "loop", "--model", model, "-c", "2")
    assert out.exit_code == 0, out.output + out.stderr
    states = keys("toolz-fix-tests")
    assert set(states.values()) == {State.PASS} and len(states) == 5
    assert checkout_state(project) == before
    branches = git(project, "branch", "--list", "reins/*").split()
    assert len(branches) == 5
    # Landing: the two itertoolz fixes each add a line at the same place (the planted
    # conflict), so the second becomes an item of its own, based on the integration.
    out = cli("-q", "fix-tests", "land", "integration", "--order", "key")
    assert out.exit_code == 13, out.output + out.stderr  # a PASS is left unlanded
    second = "toolz/tests/test_itertoolz.py::test_remove"
    assert f"conflict in AUTHORS.md: added item land/{second}" in out.stdout
    assert keys("toolz-fix-tests")[f"land/{second}"] is State.TODO
    assert keys("toolz-fix-tests")[second] is State.PASS  # the PASS itself never moves
    out = cli("-q", "fix-tests", "loop", "--model", model)
    assert out.exit_code == 0, out.output + out.stderr
    out = cli("-q", "fix-tests", "land", "integration", "--order", "key")
    assert out.exit_code == 0, out.output + out.stderr
    assert f"landed {second} (through land/{second})" in out.stdout
    # The integration branch holds every fix, and the whole suite passes there.
    landed = base_checkout(here)
    git(landed, "checkout", "--quiet", "integration")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "toolz/tests"],
        cwd=landed, capture_output=True, text=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )  # fmt: skip
    assert done.returncode == 0 and "180 passed" in done.stdout, done.stdout[-2000:]
    assert git(landed, "show", "integration:AUTHORS.md").count("- reins fixed") == 2
    after = checkout_state(project)
    after["refs"] = [r for r in after["refs"] if not r.startswith("refs/heads/integration ")]
    assert after == before  # only the integration branch (and the reins/ branches) moved
