"""The import budget of the commands an agent runs once per turn: ``next``, ``submit``, ``status``.

Start-up is most of what a turn costs a coding agent, and most of start-up is imports: every
module and every dataclass built at import is paid again by every process. Each command runs
here as the ``reins`` script runs it, in a fresh interpreter, on a Python quest beside the
ledger (as ``reins init`` makes one), and the modules it leaves in ``sys.modules`` are read at
exit (``-X importtime`` misses what ``importlib.import_module`` loads). It fails when a heavy
module appears, or when the count of reins modules grows past the budget below. The time
itself is measured in bench/ (bench/bench_startup.py), never asserted here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

QUEST = '''\
"""A tiny Python quest: item kN's answer is N."""

from reins import Context, Fact, Level, Quest, Seed, rule


def seed(args):
    for n in range(int(args[0]) if args else 3):
        yield Seed(f"k{n}", {"n": n})


def render(item):
    return f"Answer with the number {item.payload['n']}."


def prepare(item, raw):
    return Context(key=item.key, submission=raw.strip(), payload=item.payload)


@rule("equals", Level.FAIL, "the answer is the item's number")
def equals(ctx):
    if ctx.submission != str(ctx.payload["n"]):
        return Fact(where="answer", expected=str(ctx.payload["n"]), actual=ctx.submission)
    return None


quest = Quest(name="budget", seed=seed, render=render, prepare=prepare, rules=[equals])
'''

# The reins script's own start: `from reins.cli import main; sys.exit(main())`. After the
# command's own exit handling has run, the probe lists on stderr the modules loaded and the
# dataclasses the reins modules among them define (each was built at import).
PROBE = (
    "import sys\n"
    "from reins.cli import main\n"
    "try:\n"
    "    main()\n"
    "except SystemExit as exc:\n"
    "    code = exc.code\n"
    "else:\n"
    "    code = 0\n"
    "built = sorted(\n"
    "    f'{n}.{v.__qualname__}'\n"
    "    for n, m in list(sys.modules.items()) if n == 'reins' or n.startswith('reins.')\n"
    "    for v in list(vars(m).values())\n"
    "    if isinstance(v, type) and v.__module__ == n and '__dataclass_fields__' in vars(v)\n"
    ")\n"
    "sys.stderr.write('\\nDATACLASSES ' + ' '.join(built))\n"
    "sys.stderr.write('\\nMODULES ' + ' '.join(sorted(sys.modules)) + '\\n')\n"
    "sys.exit(code)\n"
)

# What no command an agent runs per turn may load: the network and async stacks, the web, the
# unattended loop and its backends, the MCP server, document machinery a Python quest does not
# need, the shapes of --json (only --json needs them), replay, and test tools.
HEAVY = {
    "asyncio",
    "httpx",
    "httpcore",
    "anyio",
    "ssl",
    "jinja2",
    "jsonschema",
    "starlette",
    "uvicorn",
    "mcp",
    "pydantic",
    "psycopg",
    "psycopg_pool",
    "tomllib",
    "hashlib",
    "subprocess",
    "multiprocessing",
    "concurrent.futures",
    "hypothesis",
    "pytest",
    "importlib.metadata",
    "reins.turn.replay",
    "reins.turn.lane",
    "reins.turn.determinism",
    "reins.declare.questdoc",
    "reins.declare.gatedoc",
    "reins.store.postgres",
}
HEAVY_PACKAGES = (
    "reins.loop",
    "reins.backends",
    "reins.web",
    "reins.host",
    "reins.testing",
    "reins.checks",
    "reins.packs",
    "reins.verify",
    "reins.cli.shapes",
)
# `reins --version` prints a line: no click, no ledger, nothing of reins but its version.
VERSION_HEAVY = {"click", "sqlite3", "json", "typing", "re", "dataclasses", "pathlib"}

# The reins modules (the package, its subpackages and modules) each command may import, and
# the dataclasses they may build: each costs about half a millisecond at every start (six
# generated methods compiled), more than loading a module. Each budget is two above what the
# command loaded when it was set (issue 22), so that a change which adds to every turn is a
# choice made here, in the open.
# reins.retry (issue 41: a retry policy is a schedule, checked when a quest is made and read
# when a turn is composed) is one small module that imports only reins.errors, and two small
# dataclasses (RetryPolicy, RetryStep): about a millisecond more at each start, chosen here.
BUDGET = {
    "next": (47, 34),
    "submit": (54, 42),
    "status": (45, 34),
    "version": (4, 0),
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A folder holding the quest module and its ledger of three items, as an agent finds it."""
    folder = tmp_path
    (folder / "budgetquest.py").write_text(QUEST, encoding="utf-8")
    (folder / "answer.txt").write_text("0\n", encoding="utf-8")
    (folder / "wrong.txt").write_text("7\n", encoding="utf-8")
    scan = run(folder, "scan")
    assert scan.returncode == 0, scan.stderr
    return folder


def run(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``reins ARGS`` in ``folder``, its quest given as an agent's environment gives it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("REINS_")}
    env["REINS_QUEST"] = "budgetquest:quest"
    argv = [sys.executable, "-c", PROBE, *args]
    return subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True, check=False)


def modules(done: subprocess.CompletedProcess[str]) -> set[str]:
    """The modules a probe left loaded."""
    marker = done.stderr.rpartition("\nMODULES ")
    assert marker[1], f"the probe listed no modules:\n{done.stderr}"
    return set(marker[2].split())


def dataclasses_built(done: subprocess.CompletedProcess[str]) -> list[str]:
    """The dataclasses the probe's reins modules define, as module.Class."""
    marker = done.stderr.rpartition("\nDATACLASSES ")
    assert marker[1], f"the probe listed no dataclasses:\n{done.stderr}"
    return marker[2].split("\nMODULES ", 1)[0].split()


def heavy(loaded: set[str]) -> list[str]:
    return sorted(m for m in loaded if m in HEAVY or m.startswith(tuple(p + "." for p in HEAVY)))


def heavy_packages(loaded: set[str]) -> list[str]:
    return sorted(m for m in loaded if m in HEAVY_PACKAGES or m.startswith(HEAVY_PACKAGES))


def reins_modules(loaded: set[str]) -> list[str]:
    return sorted(m for m in loaded if m == "reins" or m.startswith("reins."))


COMMANDS = {
    "next": (["next", "--driver", "agent"], 0),
    # A PASS: it locks the item and appends it to the results file, as an agent's turn does.
    "submit": (["submit", "--key", "k0", "--in", "answer.txt", "--driver", "agent"], 0),
    "submit-fail": (["submit", "--key", "k1", "--in", "wrong.txt", "--driver", "other"], 4),
    "status": (["status"], 0),
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_command_of_an_agent_s_turn_loads_nothing_heavy(project: Path, name: str) -> None:
    args, code = COMMANDS[name]
    done = run(project, *args)
    assert done.returncode == code, done.stderr
    loaded = modules(done)
    assert "reins.cli.work" in loaded or "reins.cli.inspect" in loaded  # it ran the command
    assert heavy(loaded) == []
    assert heavy_packages(loaded) == []


@pytest.mark.parametrize("name", ["next", "submit", "status"])
def test_a_command_of_an_agent_s_turn_keeps_to_its_module_budget(project: Path, name: str) -> None:
    args, code = COMMANDS[name]
    done = run(project, *args)
    assert done.returncode == code, done.stderr
    mine, built = reins_modules(modules(done)), dataclasses_built(done)
    most_modules, most_dataclasses = BUDGET[name]
    assert len(mine) <= most_modules, (
        f"`reins {name}` imports {len(mine)} reins modules, over its budget of {most_modules}: "
        + " ".join(mine)
    )
    assert len(built) <= most_dataclasses, (
        f"`reins {name}` builds {len(built)} dataclasses, over its budget of {most_dataclasses}: "
        + " ".join(built)
    )


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_loads_neither_click_nor_the_ledger(project: Path, flag: str) -> None:
    done = run(project, flag)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("reins, version ")
    loaded = modules(done)
    assert sorted(loaded & VERSION_HEAVY) == []
    assert [m for m in loaded if m.startswith("reins.store")] == []
    mine = reins_modules(loaded)
    assert len(mine) <= BUDGET["version"][0], " ".join(mine)
    assert dataclasses_built(done) == []


def test_the_json_of_a_submit_still_loads_its_shape(project: Path) -> None:
    """--json is what a program reads: its shapes load then, and only then."""
    done = run(project, "submit", "--key", "k2", "--in", "wrong.txt", "--driver", "x", "--json")
    assert done.returncode == 4, done.stderr
    assert json.loads(done.stdout)["key"] == "k2"
    assert "reins.cli.shapes.work" in modules(done)
