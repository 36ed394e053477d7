"""The test kit: what the tests of reins share. Fixtures come from ``tests/conftest.py``, by
name, as pytest gives them; everything else is imported from here. No test imports another test
module or the conftest.

What a test imports::

    from tests.kit import ROOT, TINY, TINY_REF  # the repository; the tiny quest, by value and
                                                # as ``--quest tests.kit:TINY``
    from tests.kit import Cli, FakeServer, Reply, Seen  # the fixtures' types, for annotations
    from tests.kit.loopkit import loop, make_ledger, registered  # the loop, fake backends
    from tests.kit.checkkit import build, run, HOSTILE  # one check of the library, run
    from tests.kit.declare_checks import register, write_quest  # quest folders, test checks
    from tests.kit.mcpclient import connect, call  # an MCP session (needs the mcp extra)
    from tests.kit.web import web_ledger, client  # the dashboard in TestClient (web extra)
    from tests.kit.browser import launch, served  # Chromium on ``reins serve`` (slow)
    from tests.kit.modelserver import ...  # a scripted model server for the real agent CLIs
    from tests.kit.agentclis import ...  # finds those CLIs (``npm ci`` of package.json)
    from tests.kit.ifeval import INPUTS, RESPONSES, need_the_extra  # the GPT-4 IFEval run
    from tests.kit.humaneval import reference, need_the_extra  # the package's own harness

and ``tests.kit.checkfuncs:NAME`` names a function for the ``python`` check. The fixtures:

- ``cli`` (a :class:`Cli`): ``reins`` in-process in the test's folder, on the tiny quest, with
  stdout and stderr apart: ``cli("submit", "-k", "a", input="bad").exit_code == 4``.
- ``http_server`` (a :class:`FakeServer`): a local HTTP server answering from a script and
  recording every request.
- ``quest`` (:data:`TINY`) and ``ledger`` (a SQLite ledger of it holding a, b and c).
- ``store_harness``: a :class:`~reins.testing.harness.StoreHarness` on each engine; a test that
  takes it runs on SQLite and on PostgreSQL. ``postgres_url`` and ``postgres_harness``: the
  session's PostgreSQL server (``pgserver``). Every test on PostgreSQL is marked ``postgres``.

Every test runs in a clean environment (``clean_environment``, autouse): its working folder is
its own empty ``tmp_path``; no ``REINS_*``, no API key of a backend, no ``PG*`` and no
``CLAUDE_PROJECT_DIR`` from the shell that started pytest; ``PYTHONPATH`` is
:data:`CHILD_PATH` (this tree's ``src`` and the repository), so a child process runs this
tree's reins and finds ``tests.kit`` (a test that starts one passes ``env`` only to add to or
narrow ``os.environ``). ``PATH``, ``HOME`` and ``CI`` are left alone: PostgreSQL, Chromium and
the CI policy (fail, rather than skip, when a tool is missing) come from there.

``slow`` marks a test that starts reins, or a server, in another process and waits on it (a
command run as a process, a loop, ``reins serve``, an MCP session, a hook, ``gate check``'s
judging processes, several processes on one ledger), kills processes, drives a browser or runs
a real model (llama.cpp, in-process or served). A program reins itself starts as the behaviour
under test (a fake ``claude`` of a CLI backend, a ``command`` check's program) does not make a
test slow. ``make test`` runs every test; ``pytest -m "not slow"`` is the quick loop.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.kit.cli import TINY_REF, Cli
from tests.kit.http import FakeServer, Reply, Seen
from tests.kit.quests import (
    ESCALATING,
    LENIENT,
    PROPOSING,
    TINY,
    not_bad,
    not_meh,
    tiny_prepare,
    tiny_render,
    tiny_seed,
)

ROOT = Path(__file__).resolve().parent.parent.parent
"""The repository's root folder."""
CHILD_PATH = os.pathsep.join([str(ROOT / "src"), str(ROOT)])
"""A child process's ``PYTHONPATH``: this tree's ``reins`` (not the one an editable install of
another checkout points at) and ``tests.kit``."""

__all__ = [
    "CHILD_PATH",
    "ESCALATING",
    "LENIENT",
    "PROPOSING",
    "ROOT",
    "TINY",
    "TINY_REF",
    "Cli",
    "FakeServer",
    "Reply",
    "Seen",
    "not_bad",
    "not_meh",
    "tiny_prepare",
    "tiny_render",
    "tiny_seed",
]
