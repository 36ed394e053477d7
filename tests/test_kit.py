"""The test kit holds: tests share helpers through ``tests.kit`` and fixtures through the
conftest, never by importing one another, and each starts in a clean environment of its own."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.kit import CHILD_PATH, ROOT, Cli
from tests.kit.environment import foreign

TESTS = ROOT / "tests"
# A reference to a test module by name: an import, or a quest's ``module:attr`` in a string.
TEST_MODULE = re.compile(r"\btests\.(test_\w+|conftest)\b")


def references(path: Path) -> list[str]:
    """Every test module or conftest ``path`` names, with the line it does so on."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names = [m.group(0) for m in TEST_MODULE.finditer(node.value)]
        else:
            continue
        for name in names:
            match = TEST_MODULE.fullmatch(name) or TEST_MODULE.match(name)
            if match and match.group(0) != f"tests.{path.stem}":  # a module may name itself
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {match.group(0)}")
    return list(dict.fromkeys(found))  # `from tests.conftest import X` names it once


def test_no_test_imports_another_test_module_or_the_conftest() -> None:
    files = sorted(TESTS.rglob("*.py"))
    assert len(files) > 90
    found = [r for p in files for r in references(p)]
    assert not found, "take helpers from tests.kit and fixtures by name:\n" + "\n".join(found)


def test_each_test_starts_in_its_own_empty_folder_in_a_clean_environment(tmp_path: Path) -> None:
    assert Path.cwd() == tmp_path and list(tmp_path.iterdir()) == []
    assert [name for name in os.environ if foreign(name)] == []
    assert os.environ["PYTHONPATH"] == CHILD_PATH  # a child process finds tests.kit


@pytest.mark.slow  # pytest in a process of its own
def test_the_shell_s_settings_never_reach_a_test(tmp_path: Path) -> None:
    leaks = {
        "REINS_LEDGER": "leaked.reins.db",
        "REINS_QUEST": "emails",
        "REINS_DRIVER": "shell",
        "OPENAI_API_KEY": "sk-from-the-shell",
        "PGHOST": "db.example.org",
        "CLAUDE_PROJECT_DIR": str(tmp_path),
    }
    clean = test_each_test_starts_in_its_own_empty_folder_in_a_clean_environment
    test = f"{TESTS / 'test_kit.py'}::{clean.__name__}"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test],
        cwd=ROOT,
        env={**os.environ, **leaks},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


def test_the_cli_fixture_runs_reins_in_its_folder_with_stdout_and_stderr_apart(
    cli: Cli, tmp_path: Path
) -> None:
    scanned = cli("scan", "--json")
    assert scanned.exit_code == 0 and scanned.stderr == ""
    assert json.loads(scanned.stdout)["ledger"] == "tiny.reins.db"
    assert (tmp_path / "tiny.reins.db").exists()
    refused = cli("submit", "-k", "zzz", input="good")
    assert refused.exit_code == 2 and refused.stdout == ""
    assert "no item with key 'zzz'" in refused.stderr
    judged = cli("submit", "-k", "a", input="bad")
    assert judged.exit_code == 4 and judged.stdout.startswith("a -> FAIL")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    cli.folder, cli.driver = elsewhere, "ann"
    assert "no ledger" in cli("status").stderr  # a folder of its own: no ledger there
    assert cli("--version", quest=None).stdout.startswith("reins, version ")
    cli.ledger = str(tmp_path / "tiny.reins.db")
    status = json.loads(cli("status", "--json").stdout)
    assert status["counts"]["TODO"] == 3 and status["attempts"] == 1
    assert Path.cwd() == tmp_path  # the call ran in its folder and came back
