"""``bench_convergence.py --ceiling``: how far any fact could take this model at answer 3.

A fact says one failed call: its input, what was expected, what came back. The most a gate
that holds the tests could say as behaviour is every call the tests make and the value each
must return. So each policy's answer-3 prompt, as ``--draws`` draws it, is drawn again with that
whole table after it ("Every call the tests make, and the value each must return"), on the same
problems, seeds and temperature. If the model cannot use the whole table, no wording of one
fact will do better: the row bounds what feedback can gain on this model.

The table is the package's canonical solution run on the tests' own calls (each input copied
before the call, so the solution cannot change what is shown; ``random`` seeded, so HumanEval/38's
random strings, and the prompt, are the same on every run), at most :data:`LIMIT` calls, in the
tests' order. It is run here, in the bench's process: it is the package's reference code, not
an answer. It never enters a quest: a gate that said this much would hand the tests over.
"""

from __future__ import annotations

import copy
import dataclasses
import random
from collections.abc import Mapping, Sequence

from bench.convergence_draws import Drawer, PolicyDraws, answer3_prompts
from reins.loop.compare import PolicyRun
from reins.packs.humaneval.problems import problem
from reins.values import Prompt

LIMIT = 12
"""Calls the table shows at most: HumanEval/38's tests make 100, and a longer prompt only
crowds the problem out of a small model's view."""
HEADER = "Every call the tests make, and the value each must return:"
SUFFIX = " + every case"
"""Added to a policy's name in the draws' table for its row with the table."""


def behaviour(key: str, limit: int = LIMIT) -> list[str]:
    """``f(x) returns y`` for each distinct call the tests of ``key`` make, in their order."""
    given = problem(key)
    space: dict[str, object] = {}
    exec(given.prompt + given.canonical_solution, space)  # the package's reference code
    solution = space[given.entry_point]
    assert callable(solution)
    said: list[str] = []

    def recorded(*args: object) -> object:
        shown = ", ".join(repr(a) for a in args)
        value = solution(*copy.deepcopy(args))
        line = f"{given.entry_point}({shown}) returns {value!r}"
        if line not in said:
            said.append(line)
        return value

    tests = dict(space)  # the tests may use the prompt's helpers (HumanEval/32's poly)
    exec(given.test, tests)
    state = random.getstate()
    random.seed(0)
    try:
        tests["check"](recorded)  # type: ignore[operator]
    finally:
        random.setstate(state)
    return said[:limit]


def with_every_case(prompt: Prompt) -> Prompt:
    """``prompt`` with the table of its problem's calls after it (same key, turn, temperature)."""
    table = "\n".join(f"- {line}" for line in behaviour(prompt.key))
    return dataclasses.replace(prompt, user=f"{prompt.user}\n\n{HEADER}\n{table}")


def ceiling_all(
    drawer: Drawer,
    runs: Sequence[PolicyRun],
    calls: Sequence[Mapping[str, Sequence[Prompt]]],
    rows: Sequence[PolicyDraws],
    answers: int,
) -> list[PolicyDraws]:
    """Each run's drawn answer-3 prompts (``rows[i]``'s problems) drawn again with the table;
    a row per run, its estimate counted as ``--draws`` counts it."""
    out = []
    for run, called, row in zip(runs, calls, rows, strict=True):
        prompts = answer3_prompts(run, called, answers)
        name = run.policy + SUFFIX
        drawn = tuple(drawer.draw(name, with_every_case(prompts[d.key])) for d in row.drawn)
        out.append(
            PolicyDraws(
                name,
                by_two=row.by_two,
                by_three=row.by_three,
                drawn=drawn,
                alone=row.alone,
                alone_solved=row.alone_solved,
            )
        )
    return out
