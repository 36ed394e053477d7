"""Issue 39, doctests: an example's expected output is the judge's. A change that passes a
failing doctest by rewriting what the docstring expects (or by dropping the example) is a FAIL
fact naming the example; a change that fixes the code passes."""

from __future__ import annotations

from pathlib import Path

import pytest

from reins import SQLiteStore, State
from reins.checks._doctests import edited_examples
from tests.kit.codingkit import agent, cli, quest_repo

CALC = 'def double(x):\n    """\n    >>> double(2)\n    4\n    """\n    return x + 3\n'
RULE = (
    '| doc | FAIL | pytest | tests = ["calc.py::calc.double"], '
    'args = ["--doctest-modules", "calc.py"] | Fix double. |'
)


@pytest.fixture
def here(tmp_path: Path) -> Path:
    return tmp_path


def judged(here: Path, edit: str) -> tuple[State, str]:
    """The item's state after one agent that applies ``edit`` (Python, on ``text``)."""
    quest_repo(here / "q", ["double"], RULE)
    (here / "q" / "calc.py").write_text(CALC)
    from tests.kit.codingkit import git

    git(here / "q", "add", "calc.py")
    git(here / "q", "commit", "-q", "-m", "calc")
    assert cli("-q", "q", "scan").exit_code == 0
    script = agent(here / "a.py", "from pathlib import Path\np = Path('calc.py')\n"
                   f"text = p.read_text()\n{edit}\np.write_text(text)\n")  # fmt: skip
    out = cli("-q", "q", "loop", "--model", f"cmd:{script}", "--max-items", "1")
    assert out.exit_code == 0, out.output
    with SQLiteStore.open(here / "q.reins.db") as led:
        item, log = led.snapshot("double")
    return item.state, " | ".join(f"{f.where}: {f.expected} / {f.actual}" for f in log[-1].facts)


def test_rewriting_the_expected_output_is_a_fact_not_a_pass(here: Path) -> None:
    state, facts = judged(here, "text = text.replace('    4\\n', '    5\\n')")
    assert state is not State.PASS
    assert "calc.py: the example `double(2)`" in facts, facts
    assert "'4\\n'" in facts and "'5\\n'" in facts, facts


def test_fixing_the_code_passes(here: Path) -> None:
    state, facts = judged(here, "text = text.replace('x + 3', 'x * 2')")
    assert state is State.PASS, facts


def test_an_example_dropped_or_rewritten_is_a_fact() -> None:
    def module(examples: str) -> str:
        return f'"""{examples}"""\n\n\ndef f():\n    """\n    >>> 1 + 1\n    2\n    """\n'

    before = module(">>> double(2)\n4\n>>> double(0)\n0\n")
    facts = edited_examples("calc.py", before, module(">>> double(2)\n4\n"))
    assert [f.actual for f in facts] == ["the change removed or rewrote it"]
    more = module(">>> double(2)\n4\n>>> double(0)\n0\n>>> double(1)\n2\n")
    assert edited_examples("calc.py", before, more) == []
    changed = before.replace("    2\n", "    3\n")  # the function's example, not the module's
    assert [f.where for f in edited_examples("calc.py", before, changed)] == [
        "calc.py: the example `1 + 1`"
    ]
