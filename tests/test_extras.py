"""The extras of reins-quest: a pack or a backend names the one it needs, and reins says when it
is missing, with the pip line, instead of failing on every item.

A package is made missing the way Python itself knows one to be absent: ``sys.modules[NAME]``
set to None (``import NAME`` raises ImportError, ``find_spec`` finds nothing), restored after
the test. The wheel installed without extras (tests/test_install.py) sees the same for real.
"""

from __future__ import annotations

import json
import re
import sys
import tomllib

import pytest

from tests.kit import ROOT, Cli

IFEVAL_MODULES = ("lm_eval", "nltk", "punkt", "langdetect", "immutabledict")


def without(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    """Make ``modules`` absent for the test."""
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)


def requirement_names(line: str) -> set[str]:
    """The package a requirement names, and those its own extras bring as packages named
    after them (``psycopg[binary,pool]`` → psycopg, psycopg-binary, psycopg-pool)."""
    found = re.match(r"([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[([^]]*)\])?", line)
    assert found, line
    name = re.sub(r"[-_.]+", "-", found.group(1)).lower()
    extras = [e.strip() for e in (found.group(2) or "").split(",") if e.strip()]
    return {name, *(f"{name}-{e}" for e in extras)}


def test_the_table_of_extras_is_pyproject_s() -> None:
    from reins.extras import EXTRAS

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = {k: v for k, v in declared["optional-dependencies"].items() if k != "dev"}
    assert set(EXTRAS) == set(extras)
    for extra, packages in EXTRAS.items():
        names = {n for line in extras[extra] for n in requirement_names(line)}
        for package in packages:
            assert package.name in names, (extra, package.name)


def test_every_shipped_pack_that_imports_an_extra_declares_it() -> None:
    for name in ("ifeval", "humaneval", "coding"):
        text = (ROOT / "src" / "reins" / "packs" / name / "quest.toml").read_text()
        assert tomllib.loads(text).get("extra") == name, name


def test_packs_says_what_is_missing_and_the_pip_line(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    without(monkeypatch, "lm_eval", "langdetect")
    out = cli("packs", quest=None)
    line = next(x for x in out.stdout.splitlines() if x.startswith("ifeval "))
    assert "lm-eval, langdetect missing" in line
    assert "pip install 'reins-quest[ifeval]'" in line
    rows = {r["name"]: r for r in json.loads(cli("packs", "--json", quest=None).stdout)}
    assert rows["ifeval"]["extra"] == "reins-quest[ifeval]"
    assert rows["ifeval"]["missing"] == ["lm-eval", "langdetect"]
    assert rows["ifeval"]["install"] == "pip install 'reins-quest[ifeval]'"
    assert rows["emails"]["missing"] == [] and rows["emails"]["install"] is None


def test_packs_says_an_installed_extra_is_installed(cli: Cli) -> None:
    pytest.importorskip("lm_eval")
    out = cli("packs", quest=None)
    line = next(x for x in out.stdout.splitlines() if x.startswith("ifeval "))
    assert line.endswith("(needs reins-quest[ifeval], installed)")


def test_a_submit_without_the_extra_is_refused_up_front_with_the_pip_line(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    without(monkeypatch, *IFEVAL_MODULES)
    scanned = cli("scan", quest="ifeval")
    assert scanned.exit_code == 0, scanned.output
    assert "pip install 'reins-quest[ifeval]'" in scanned.stderr  # said at once, as a note
    key = json.loads(cli("items", "--json", quest="ifeval").stdout)["items"][0]["key"]
    out = cli("submit", "-k", key, input="An answer.", quest="ifeval")
    assert out.exit_code == 2, out.output
    assert "quest ifeval needs reins-quest[ifeval]" in out.stderr
    assert "pip install 'reins-quest[ifeval]'" in out.stderr
    log = json.loads(cli("log", key, "--json", quest="ifeval").stdout)
    assert log["attempts"] == []  # nothing recorded: no judge error, no try
    failure = json.loads(cli("submit", "-k", key, "--json", input="x", quest="ifeval").stdout)
    assert failure["exit_code"] == 2 and failure["extras"] == ["ifeval"]
    assert failure["install"] == "pip install 'reins-quest[ifeval]'"


def test_next_and_loop_refuse_a_quest_whose_extra_is_missing(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    without(monkeypatch, "lm_eval")
    assert cli("scan", quest="ifeval").exit_code == 0
    for args in (("next",), ("loop", "--model", "ollama:m", "--max-turns", "1")):
        out = cli(*args, quest="ifeval")
        assert out.exit_code == 2, (args, out.output)
        assert "missing: lm-eval" in out.stderr and "reins-quest[ifeval]" in out.stderr
    assert json.loads(cli("status", "--json", quest="ifeval").stdout)["leased"] == 0


def test_backends_says_what_a_backend_is_missing(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    without(monkeypatch, "llama_cpp")
    out = cli("backends", "local", quest=None)
    assert "llama-cpp-python missing" in out.stdout
    assert "pip install 'reins-quest[local]'" in out.stdout
    (row,) = json.loads(cli("backends", "local", "--json", quest=None).stdout)
    assert row["extra"] == "local" and row["missing"] == ["llama-cpp-python"]
    assert row["install"] == "pip install 'reins-quest[local]'"
    (other,) = json.loads(cli("backends", "ollama", "--json", quest=None).stdout)
    assert other["extra"] is None and other["install"] is None


def test_an_unknown_extra_is_a_load_error_at_its_line(cli: Cli) -> None:
    assert cli("new", "--pack", "example", "q", quest=None).exit_code == 0
    toml = cli.folder / "q" / "quest.toml"
    lines = toml.read_text().splitlines(keepends=True)
    lines.insert(1, 'extra = "ifevla"\n')
    toml.write_text("".join(lines))
    out = cli("rules", quest="q")
    assert out.exit_code == 2, out.output
    assert "quest.toml:2" in out.stderr and "'ifevla'" in out.stderr and "ifeval" in out.stderr
