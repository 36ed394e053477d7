"""The registry: one class for backends, coding agents and storage engines, fed by entry points.

Plugins here are installed the way pip installs one: a ``*.dist-info`` folder with its
``entry_points.txt`` beside the plugin's module, on the path. The unit tests read them through
a registry of their own; the plugin tests run ``reins`` in a fresh process with the plugin on
its ``PYTHONPATH`` and use one plugin of each kind: a text backend, a coding agent (also one
still under the group's old name) and a storage engine.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reins.backends.registry import BACKENDS
from reins.coders.registry import CODERS
from reins.errors import ConfigError, NotFound
from reins.registry import Registry, takes_options
from reins.store.engines import ENGINES, engine_of
from tests.kit import CHILD_PATH
from tests.kit.codingkit import FILE_HOLDS_KEY, quest_repo

PLUGIN = '''\
"""Plugins of each kind, as a third party would write them: one module, one line each."""

import os
import sys

from reins.values import Completion


class Shout:
    """Answers every prompt with the item's key in capitals."""

    options = {"suffix": "appended to the answer"}

    def __init__(self, model, options):
        self.name, self.suffix = "shout", options.get("suffix", "")

    async def complete(self, prompt, *, seed, timeout):
        return Completion(text=prompt.key.upper() + self.suffix, model="shout")


class Copycat:
    """A coding agent: writes the word it is told into <key>.txt."""

    options = {}

    def __init__(self, model, options):
        self.name = "copycat"

    def launch(self, session):
        from reins.coders.protocol import Launch

        code = (
            "import re, sys; text = sys.stdin.read(); "
            "key = re.search(r'file (\\\\w+)[.]txt', text).group(1); "
            "open(key + '.txt', 'w').write(key)"
        )
        return Launch(argv=(sys.executable, "-c", code), stdin=session.prompt.user)

    def parser(self):
        from reins.coders.protocol import Ending

        class Quiet:
            def line(self, text):
                return ()

            def end(self, returncode, stderr):
                return Ending("done", None if returncode == 0 else stderr)

        return Quiet()


class Mirror:
    """mirror://PATH: an SQLite ledger at PATH, under a scheme of its own."""

    schemas = False

    def open(self, location, *, create, schema, owner):
        from reins.store.sqlite import SQLiteStore

        return SQLiteStore.open(self.path(location), create=create, owner=owner)

    def path(self, location):
        return location.removeprefix("mirror://")

    def names_schema(self, location):
        return False

    def folder(self, location):
        return os.path.dirname(self.path(location)) or "."


mirror = Mirror()


def capitals():
    """A text quest whose answer is the item's key in capitals."""
    from reins import Context, Fact, Level, Quest, Seed, rule

    @rule("capitals", Level.FAIL, "the answer is the key in capitals")
    def check(ctx):
        if ctx.submission != ctx.key.upper():
            return Fact(where="answer", expected=ctx.key.upper(), actual=ctx.submission)
        return None

    return Quest(
        name="capitals",
        seed=lambda args: [Seed(k, {}) for k in ("ab", "cd")],
        render=lambda item: f"Say {item.key} in capitals.",
        prepare=lambda item, raw: Context(key=item.key, submission=raw.strip()),
        rules=[check],
    )
'''


def install(folder: Path, groups: dict[str, dict[str, str]]) -> Path:
    """The plugin module and a dist-info declaring ``groups`` (group → name → target) in
    ``folder``, as pip would leave them; the folder goes on a path."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "reins_test_plugins.py").write_text(PLUGIN, encoding="utf-8")
    info = folder / "reins_test_plugins-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: reins-test-plugins\nVersion: 0.1\n", encoding="utf-8"
    )
    lines = []
    for group, entries in groups.items():
        lines.append(f"[{group}]")
        lines += [f"{name} = {target}" for name, target in entries.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def reins(folder: Path, plugins: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``reins ARGS`` in a fresh process, in ``folder``, with the plugins installed."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([CHILD_PATH, str(plugins)])}
    return subprocess.run(
        [sys.executable, "-c", "from reins.cli import main; main()", *args],
        cwd=folder, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


# -- the registry itself, on entry points of its own -----------------------------------------


@pytest.fixture
def plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = install(
        tmp_path / "site",
        {
            "test.things": {
                "shout": "reins_test_plugins:Shout",
                "gone": "reins_test_plugins_missing:Nothing",
                "notone": "reins_test_plugins:mirror",
            },
            "test.old": {"copycat": "reins_test_plugins:Copycat", "shout": "nowhere:X"},
        },
    )
    monkeypatch.syspath_prepend(str(folder))
    yield folder
    sys.modules.pop("reins_test_plugins", None)


def things(**kwargs: Any) -> Registry[Any]:
    return Registry("thing", "test.things", takes_options, **kwargs)


def test_names_come_from_the_group_without_loading_any(plugins: Path) -> None:
    registry = things()
    assert registry.names() == ["gone", "notone", "shout"]
    assert "shout" in registry and "copycat" not in registry
    assert registry.target("shout") == "reins_test_plugins:Shout"
    assert "reins_test_plugins" not in sys.modules  # named, not imported
    shout = registry.find("shout")
    assert shout.__name__ == "Shout" and registry.find("shout") is shout


def test_the_group_is_read_once(plugins: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[dict[str, Any]] = []
    real = importlib.metadata.entry_points

    def counting(**kwargs: Any) -> Any:
        calls.append(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(importlib.metadata, "entry_points", counting)
    registry = things()
    registry.names()
    registry.find("shout")
    registry.names()
    assert calls == [{"group": "test.things"}]


def test_a_broken_entry_point_says_which_and_why(plugins: Path) -> None:
    registry = things()
    with pytest.raises(ConfigError, match=r"thing 'gone' \(reins_test_plugins_missing:Nothing\) "
                       "cannot be loaded"):  # fmt: skip
        registry.find("gone")
    with pytest.raises(ConfigError, match=r"'notone' .* is not a thing: it needs to be callable"):
        registry.find("notone")


def test_an_unknown_name_lists_the_known_ones_or_says_the_registry_s_own_words(
    plugins: Path,
) -> None:
    with pytest.raises(NotFound, match=r"^No thing named 'shuot'. Known: gone, notone, shout.$"):
        things().find("shuot")
    with pytest.raises(NotFound, match=r"^try shout$"):
        things(missing=lambda name: "try shout").find("shuot")


def test_the_old_group_is_read_after_the_new_with_a_warning(plugins: Path) -> None:
    registry = things(formerly=("test.old",))
    assert registry.names() == ["copycat", "gone", "notone", "shout"]
    assert registry.target("shout") == "reins_test_plugins:Shout"  # the new group wins
    with pytest.warns(FutureWarning, match="'copycat' is registered under .*'test.old'"):
        registry.find("copycat")
    registry.find("shout")  # found in the new group: no warning (warnings are errors here)


def test_registered_in_process_wins_and_unregistering_brings_the_entry_point_back(
    plugins: Path,
) -> None:
    registry = things(builtins={"built": "a built-in"})
    registry.register("shout", Registry)
    assert registry.find("shout") is Registry and registry.find("built") == "a built-in"
    assert registry.target("shout") == "reins.registry:Registry"
    registry.unregister("shout")
    assert registry.find("shout").__name__ == "Shout"
    with pytest.raises(ConfigError, match="not a thing name"):
        registry.register("Bad Name", "x")


def test_the_three_registries_are_one_class_over_their_groups() -> None:
    assert [r.group for r in (BACKENDS, CODERS, ENGINES)] == [
        "reins.backends",
        "reins.coders",
        "reins.stores",
    ]
    assert CODERS.formerly == ("reins.agents",)
    assert {"anthropic", "ollama", "local"} <= set(BACKENDS.names())
    assert {"cmd", "claude-code", "codex", "aider"} <= set(CODERS.names())
    assert {"sqlite", "postgresql", "postgres"} <= set(ENGINES.names())


def test_a_ledger_s_scheme_names_its_engine() -> None:
    assert engine_of("q.reins.db") is ENGINES.find("sqlite")
    assert engine_of("sqlite:///tmp/q.db").folder("sqlite:///tmp/q.db") == "/tmp"
    assert engine_of("postgresql://u@h/db") is ENGINES.find("postgresql")
    assert engine_of("postgres://u@h/db").schemas
    assert engine_of("postgresql://u@h/db?schema=x").names_schema("postgresql://u@h/db?schema=x")
    with pytest.raises(NotFound, match=r"no storage engine for mysql:// ledgers. Known: "):
        engine_of("mysql://u@h/db")


# -- one plugin of each kind, installed through its entry point ------------------------------


@pytest.mark.slow  # reins in a fresh process, with the plugin installed
def test_a_backend_plugin_runs_the_loop(tmp_path: Path) -> None:
    plugins = install(
        tmp_path / "site",
        {"reins.backends": {"shout": "reins_test_plugins:Shout"}},
    )
    quest = ("--quest", "reins_test_plugins:capitals", "--ledger", "c.db")
    assert reins(tmp_path, plugins, *quest, "scan").returncode == 0
    listed = reins(tmp_path, plugins, "backends", "shout", "--json")
    assert listed.returncode == 0, listed.stderr
    row = json.loads(listed.stdout)[0]
    assert row["target"] == "reins_test_plugins:Shout" and row["options"] == {
        "suffix": "appended to the answer"
    }
    done = reins(tmp_path, plugins, *quest, "loop", "--model", "shout:any", "--json")
    assert done.returncode == 0, done.stderr
    status = json.loads(reins(tmp_path, plugins, *quest, "status", "--json").stdout)
    assert status["counts"]["PASS"] == 2
    # a wrong answer is judged like any other: the option reached the backend
    rerun = ("--quest", "reins_test_plugins:capitals", "--ledger", "d.db")
    reins(tmp_path, plugins, *rerun, "scan")
    failed = reins(tmp_path, plugins, *rerun, "loop", "--model", "shout:any?suffix=!")
    assert failed.returncode == 0 and "FAIL (capitals)" in failed.stderr, failed.stderr
    status = json.loads(reins(tmp_path, plugins, *rerun, "status", "--json").stdout)
    assert status["counts"]["DONE"] == 2


@pytest.mark.slow
@pytest.mark.parametrize("group", ["reins.coders", "reins.agents"])
def test_a_coding_agent_plugin_works_a_coding_quest(tmp_path: Path, group: str) -> None:
    plugins = install(tmp_path / "site", {group: {"copycat": "reins_test_plugins:Copycat"}})
    quest_repo(tmp_path / "q", ["k1", "k2"], FILE_HOLDS_KEY)
    assert reins(tmp_path, plugins, "-q", "q", "scan").returncode == 0
    done = reins(tmp_path, plugins, "-q", "q", "loop", "--model", "copycat:x", "--sandbox", "none")
    assert done.returncode == 0, done.stderr
    status = json.loads(reins(tmp_path, plugins, "-q", "q", "status", "--json").stdout)
    assert status["counts"]["PASS"] == 2
    warned = "registered under the entry-point group 'reins.agents', renamed 'reins.coders'"
    assert (warned in done.stderr) == (group == "reins.agents")


@pytest.mark.slow
def test_a_storage_engine_plugin_is_opened_by_its_scheme(tmp_path: Path) -> None:
    plugins = install(
        tmp_path / "site",
        {
            "reins.stores": {"mirror": "reins_test_plugins:mirror"},
            "reins.backends": {"shout": "reins_test_plugins:Shout"},
        },
    )
    quest = ("--quest", "reins_test_plugins:capitals")
    ledger = ("--ledger", f"mirror://{tmp_path / 'm.db'}")
    scanned = reins(tmp_path, plugins, *quest, *ledger, "scan")
    assert scanned.returncode == 0, scanned.stderr
    assert (tmp_path / "m.db").is_file()
    done = reins(tmp_path, plugins, *quest, *ledger, "loop", "--model", "shout:any")
    assert done.returncode == 0, done.stderr
    status = json.loads(reins(tmp_path, plugins, *quest, *ledger, "status", "--json").stdout)
    assert status["counts"]["PASS"] == 2
    checked = reins(tmp_path, plugins, *quest, *ledger, "ledger", "check")
    assert checked.returncode == 0, checked.stderr
    # the same file, opened as SQLite, holds what the plugin engine wrote
    plain = reins(tmp_path, plugins, *quest, "--ledger", "m.db", "status", "--json")
    assert json.loads(plain.stdout)["counts"]["PASS"] == 2
    unknown = reins(tmp_path, plugins, *quest, "--ledger", "nosuch://x", "status")
    assert unknown.returncode != 0
    assert "no storage engine for nosuch:// ledgers. Known: mirror, postgres" in unknown.stderr
