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
from typing import Any

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


# Ways to make `mypy --strict toolz/utils.py` exit 0 without the work, each with the rule that
# must FAIL it (config files are the judge's: toolz-typed's [workspace] judge). Each script
# starts from the base's files: `s` is toolz/utils.py, written back in `ENC`.
UTILS = "toolz/utils.py"
SIGNATURE = "def raises(err, lamda):"
IGNORED = f"s = s.replace({SIGNATURE!r}, {SIGNATURE + '  # type: ignore'!r})"
# the untyped function, out of utils.py, which then imports it from `place`
MOVE = (
    "moved, rest = s.split('\\n\\n\\nno_default')\n"
    "s = f'from toolz.{place[6:-3]} import raises\\n\\n\\nno_default' + rest\n"
    "open(place, 'a').write('\\n\\n' + moved + '\\n')"
)
CHEATS = {
    "type-ignore": ("no-ignore", IGNORED),
    "ignore-errors": ("no-ignore", "s = '# mypy: ignore-errors\\n' + s"),
    "ignore_errors": ("no-ignore", "s = '# mypy: ignore_errors\\n' + s"),  # `_` reads as `-`
    "disable-error-code": (
        "no-ignore",
        "s = '# mypy: disable-error-code=\"no-untyped-def\"\\n' + s",
    ),
    "no_type_check": (
        "no-ignore",
        (
            "s = 'from typing import no_type_check\\n\\n\\n' + s.replace("
            f"{SIGNATURE!r}, '@no_type_check\\n' + {SIGNATURE!r})"
        ),
    ),
    # the ignore, and attributes that would show the module's change as a binary patch
    "binary-diff": (
        "no-ignore",
        (f"{IGNORED}\nopen('.gitattributes', 'w').write('*.py -diff\\n* binary\\n')"),
    ),
    # the ignore in a module of another encoding, which git shows as a binary patch
    "latin-1": (
        "text-only",
        f"ENC = 'latin-1'\ns = '# -*- coding: latin-1 -*-\\n# \\xe9\\n' + s\n{IGNORED}",
    ),
    # imports are followed silently: the untyped code moved out, to a new module or another's
    "new-module": ("only-its-module", f"place = 'toolz/_raises.py'\n{MOVE}"),
    "other-module": ("only-its-module", f"place = 'toolz/_version.py'\n{MOVE}"),
}
HONEST = (
    "s = 'from collections.abc import Callable\\n\\n\\n' + s.replace("
    f"{SIGNATURE!r}, "
    "'def raises(err: type[BaseException], lamda: Callable[[], object]) -> bool:')"
)
# mypy reads the annotated stub, the tests run the untyped function: a person decides
HIDDEN = (
    "moved, rest = s.split('\\n\\n\\nno_default')\n"
    "body = ''.join('    ' + line + '\\n' for line in moved.splitlines())\n"
    "s = 'import typing\\n\\nif not typing.TYPE_CHECKING:\\n' + body + '\\n\\nno_default' + rest"
)


def typed_on_utils(here: Path, tries: int) -> None:
    """The typed quest on toolz/utils.py alone (one error at the base), ``tries`` answers."""
    quest = here / "typed" / "quest.toml"
    text = (
        quest.read_text()
        .replace('"toolz"]', f'"{UTILS}"]')
        .replace("max_tries = 3", f"max_tries = {tries}")
    )
    quest.write_text(text)
    assert cli("-q", "typed", "scan").exit_code == 0
    assert set(keys("toolz-typed")) == {UTILS}


def answer(here: Path, name: str, body: str) -> None:
    """One turn of a stand-in agent that runs ``body`` on the base's files."""
    # A retry starts from the last try's tree: each script starts again from the base.
    base = {p: (here / "project" / p).read_text() for p in (UTILS, "toolz/_version.py")}
    start = f"import os\nENC = 'utf-8'\nfor p, t in {base!r}.items():\n    open(p, 'w').write(t)\n"
    start += "for p in ('.gitattributes', 'toolz/_raises.py'):\n"
    start += "    if os.path.exists(p):\n        os.remove(p)\n"
    start += f"s = open({UTILS!r}).read()\n"
    script = agent(here / f"{name}.py", f"{start}{body}\n"
                   f"open({UTILS!r}, 'w', encoding=ENC).write(s)\nprint('done')\n")  # fmt: skip
    out = cli("-q", "typed", "loop", "--model", f"cmd:{script}", "--max-turns", "1")
    assert out.exit_code in (0, 1), out.output + out.stderr


def judged_utils() -> tuple[State, list[Any]]:
    with SQLiteStore.open(Path("toolz-typed.reins.db")) as led:
        item, log = led.snapshot(UTILS)
    return item.state, [a for a in log if a.kind is AttemptKind.JUDGED]


def test_no_way_to_silence_mypy_passes_the_typed_gate_and_the_work_does(here: Path) -> None:
    typed_on_utils(here, len(CHEATS) + 1)
    for name, (_, body) in [*CHEATS.items(), ("honest", (None, HONEST))]:
        answer(here, name, body)
    state, judged = judged_utils()
    assert len(judged) == len(CHEATS) + 1, judged
    for (name, (rule, _)), attempt in zip(CHEATS.items(), judged, strict=False):
        rules = {f.rule for f in attempt.facts}
        assert attempt.outcome == "FAIL" and rule in rules, (name, attempt.facts)
        assert "strict" not in rules, (name, attempt.facts)  # the cheat works on mypy itself
        assert "suite" not in rules, (name, attempt.facts)  # and the tests still pass
    assert judged[-1].outcome == "PASS", judged[-1].facts
    assert state is State.PASS


def test_code_that_mypy_never_reads_is_a_person_s_call(here: Path) -> None:
    typed_on_utils(here, 1)
    answer(here, "hidden", HIDDEN)
    state, [attempt] = judged_utils()
    assert attempt.outcome == "REVIEW", attempt.facts
    assert [f.rule for f in attempt.facts] == ["hidden-from-mypy"], attempt.facts
    assert state is State.REVIEW


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
