"""The humaneval pack's check: run the problem's own tests on the answer, and say what failed.

Every rule of the pack's ``gate.md`` calls :func:`outcome` through the ``python`` check, with
``params = { part = "…" }``. The first call of a judgment runs the answer once
(:mod:`reins.packs.humaneval.run`); each rule then reports the one way that run can have
failed that is its own, so exactly one rule fires on a failed answer and its coaching is the
one that fits:

=========  ===============================================================================
``code``   the answer is too long, or its program does not compile (a syntax error)
``defines`` running the code raised, or left no function of the problem's name
``tests``  an assertion of the problem's tests failed, or a call raised, or returned a value
           that is not plain Python data
``time``   the tests ran past the time limit
``returns`` the answer's process ended during a call (an exit, a kill, a crash)
=========  ===============================================================================

The run's limits are parameters of the first rule (the others give none and share its run):
``timeout`` (seconds, 3 as in the official harness), ``memory_mb`` (1024), ``sandbox``
(``auto``: bubblewrap where it works) and ``max_chars`` (50,000 characters of answer). A fact
says how the run was confined when it was not under bubblewrap.

A fact says what the answer did, as behaviour: the call the tests made, the value they
expected (read from the failed assertion when it compares the call with a literal), and what
came back or was raised. It never quotes the tests' code, nor a line of the answer's (a line
is named as a place, ``line 3 of your code``): a small model shown an ``assert`` pastes it into
its answer, and shown its own line, keeps it.

What is not the answer's doing is the judge's failure (:class:`~reins.errors.JudgeError`, no
try used): the extra is not installed, the item is not a HumanEval problem, the sandbox asked
for does not work, the tests' process gave no report.
"""

from __future__ import annotations

import ast
import threading
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from reins.errors import ConfigError, JudgeError
from reins.gate.rule import Context
from reins.packs.humaneval.answer import Program, read_answer
from reins.packs.humaneval.confine import confinement
from reins.packs.humaneval.problems import Problem, hidden, problem
from reins.packs.humaneval.run import GRACE, Run, Settings, run
from reins.values import Fact

__all__ = ["MAX_CHARS", "PARTS", "Finding", "judge", "outcome"]

PARTS = ("code", "defines", "tests", "time", "returns")
MAX_CHARS = 50_000
CHECK = "humaneval"


@dataclass(frozen=True, slots=True)
class Finding:
    """Why an answer failed: the part (the rule) it belongs to, and the fact."""

    part: str
    fact: Fact


@dataclass(frozen=True, slots=True)
class HarnessLimits:
    """What one rule of gate.md sets for the harness: its run's settings and the answer's size."""

    settings: Settings
    max_chars: int = MAX_CHARS


_last = threading.local()  # the judgment in progress on this thread: its context and its run


def outcome(ctx: Context, params: Mapping[str, object]) -> Fact | None:
    """The ``python`` check of every rule in the pack's ``gate.md``.

    Raises:
        JudgeError: bad parameters, the extra missing, an item that is not a HumanEval
            problem, or a run that gave no report.
    """
    part = params.get("part")
    if part not in PARTS:
        raise JudgeError(CHECK, f"the rule's part must be one of {', '.join(PARTS)}, not {part!r}")
    limits = _limits(params)
    last = getattr(_last, "judgment", None)
    if last is not None and last[0] is ctx:
        if limits is not None and limits != last[1]:
            raise JudgeError(
                CHECK,
                "two rules of gate.md give different limits (timeout, memory_mb, sandbox, "
                "max_chars): give them on the first rule only",
            )
        finding = last[2]
    else:
        limits = limits or HarnessLimits(Settings())
        finding = judge(ctx, limits.settings, max_chars=limits.max_chars)
        _last.judgment = (ctx, limits, finding)
    return finding.fact if finding is not None and finding.part == part else None


def judge(ctx: Context, settings: Settings, *, max_chars: int = MAX_CHARS) -> Finding | None:
    """Why the answer in ``ctx`` fails the problem's tests, or None when it passes.

    Raises:
        JudgeError: as :func:`outcome`.
    """
    task, answer = _item(ctx)
    try:
        given = problem(task)
        where = confinement(settings.sandbox, hidden())
    except ConfigError as exc:
        raise JudgeError(CHECK, str(exc)) from None
    if isinstance(ctx.payload, Mapping) and ctx.payload.get("prompt") != given.prompt:
        raise JudgeError(CHECK, f"item {ctx.key}'s prompt is not the package's for {task}")
    if len(answer) > max_chars:
        fact = Fact(
            where=task,
            expected=f"an answer of at most {max_chars:,} characters",
            actual=f"{len(answer):,} characters",
        )
        return Finding("code", fact)
    program = read_answer(given.prompt, given.entry_point, answer)
    ran = run(given, program, settings, where)
    if ran.passed:
        return None
    found = _finding(ran, given, program, settings)
    said = where.said()
    if not said:
        return found
    return Finding(found.part, replace(found.fact, where=f"{found.fact.where} [{said}]"))


def _item(ctx: Context) -> tuple[str, str]:
    payload = ctx.payload
    task = payload.get("task_id") if isinstance(payload, Mapping) else None
    if not isinstance(task, str):
        raise JudgeError(CHECK, f"item {ctx.key} is not a HumanEval problem (no task_id)")
    answer = ctx.submission if isinstance(ctx.submission, str) else ctx.raw
    return task, answer


def _limits(params: Mapping[str, object]) -> HarnessLimits | None:
    """The limits a rule gives, or None when it gives none (it shares the first rule's run)."""
    names = {f.name for f in fields(Settings)} | {"max_chars"}
    given = {k: v for k, v in params.items() if k in names}
    unknown = sorted(set(params) - names - {"part"})
    if unknown:
        raise JudgeError(CHECK, f"unknown parameter {unknown[0]!r}; known: {', '.join(names)}")
    if not given:
        return None
    timeout, memory = given.get("timeout", 3.0), given.get("memory_mb", 1024)
    sandbox, most = given.get("sandbox", "auto"), given.get("max_chars", MAX_CHARS)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise JudgeError(CHECK, f"timeout must be a number of seconds above 0, not {timeout!r}")
    if isinstance(memory, bool) or not isinstance(memory, int) or memory < 64:
        raise JudgeError(CHECK, f"memory_mb must be a whole number from 64, not {memory!r}")
    if not isinstance(sandbox, str):
        raise JudgeError(CHECK, f"sandbox must be a string, not {sandbox!r}")
    if isinstance(most, bool) or not isinstance(most, int) or most < 1:
        raise JudgeError(CHECK, f"max_chars must be a whole number from 1, not {most!r}")
    return HarnessLimits(Settings(float(timeout), memory, sandbox), most)


def _finding(ran: Run, given: Problem, program: Program, settings: Settings) -> Finding:
    report, name, where = ran.report, given.entry_point, given.task_id
    end = report.get("end")
    if end == "answer":
        return _not_defined(report.get("error") or {}, where, name, program)
    if end == "tests":
        return Finding("tests", _failed(report, where, program))
    if end == "time":
        during = report.get("last") or ""
        if report.get("killed"):
            doing = f"and still {GRACE:g} s later, when the judge killed it"
        elif during and " returned " not in during:
            doing = f"during {during}"
        elif report.get("calls"):
            doing = f"after {report['calls']} calls, the last {during}"
        else:
            doing = "before the first call (while the answer's code was being defined)"
        limit = f"{settings.timeout:g} s"
        fact = _fact(
            where, f"the tests finish within {limit}", f"still running at {limit}, {doing}"
        )
        return Finding("time", fact)
    if end == "ended":
        status = ran.answer_status
        how = "killed by the judge" if status is None else _status(status)
        during = report.get("last") or "the answer's definition"
        actual = f"the answer's process {how} during {during}: {report.get('why', '')}"
        return Finding("returns", _fact(where, f"{name} returns its value to the tests", actual))
    raise JudgeError(CHECK, f"the tests' process reported {end!r} and did not pass")


def _not_defined(error: Mapping[str, Any], where: str, name: str, program: Program) -> Finding:
    kind = error.get("kind")
    if kind == "missing":
        names = ", ".join(error.get("defined") or []) or "no function"
        fact = _fact(
            where,
            f"a function named {name}",
            f"{error.get('found', 'nothing')} by that name; the code defines {names}",
        )
        return Finding("defines", fact)
    # the line is named as a place, never quoted: a model shown its line keeps it
    at = _answer_line(int(error.get("line") or 0), program)
    said = f"{error.get('type', 'error')}: {error.get('message', '')}"
    if kind == "code":
        expected = (
            f"Python code that compiles after the problem's prompt (read as a {program.form})"
        )
        return Finding("code", _fact(f"{where}, {at}", expected, said))
    expected = "the code runs to its end when it is defined (no error at import time)"
    return Finding("defines", _fact(f"{where}, {at}", expected, said))


def _failed(report: Mapping[str, Any], where: str, program: Program) -> Fact:
    """The failed test as behaviour: the call, the value expected, what came back."""
    line = f"the tests, line {report['line']}" if report.get("line") else "the tests"
    last = report.get("last") or ""
    call = last.partition(" returned ")[0]
    expected = expectation(report.get("text") or "", call, report.get("wanted"))
    if "raised" in report:
        detail = report["raised"]
        if detail.get("type") == "unreadable":
            actual = f"{last} returned {detail.get('message')}: the tests read plain values only"
            return _fact(f"{where}, {line}", expected, actual)
        at = _answer_line(int(detail.get("line") or 0), program)
        said = f"{detail.get('type')}: {detail.get('message', '')}"
        return _fact(f"{where}, {line}", expected, f"{call} raised {said} at {at}")
    if "error" in report:
        actual = f"the tests' check of what it returned raised {report['error']} ({last})"
        return _fact(f"{where}, {line}", expected, actual)
    message = report.get("assertion")
    actual = last + (f" ({message})" if message else "") if last else "the assertion failed"
    return _fact(f"{where}, {line}", expected, actual)


def expectation(test: str, call: str, wanted: object = None) -> str:
    """What the failed assertion ``test`` expected of ``call``, in words: ``f(3.5) returns
    0.5`` when it compares the call with a literal, or with ``wanted``, the value the tests'
    process found the assertion compared it with (a value the tests computed, a literal over
    several lines); else a sentence that quotes no test code."""
    if not call:
        return "the tests pass"
    shown = _expected_value(test)
    if shown is None and isinstance(wanted, str) and wanted:
        shown = wanted
    if shown is None:
        return f"{call} returns what the docstring asks for (a check of the tests on it failed)"
    return f"{call} returns {shown}"


def _expected_value(test: str) -> str | None:
    """The literal an ``assert`` compares a call's value with (``== 0.5`` → ``0.5``; ``abs(
    f(x) - 0.5) < 1e-6`` → ``0.5 (within 1e-06)``; ``not f(x)`` → ``a false value``)."""
    try:
        tree = ast.parse(test.strip())
    except SyntaxError:
        return None
    stmt = tree.body[0] if len(tree.body) == 1 else None
    if not isinstance(stmt, ast.Assert):
        return None
    check = stmt.test
    if isinstance(check, ast.Compare) and len(check.ops) == 1:
        left, right, op = check.left, check.comparators[0], check.ops[0]
        if isinstance(op, ast.Eq | ast.Is):
            if isinstance(left, ast.Call):
                return _unwrapped(left, right) or _literal(right)
            return _literal(left) if isinstance(right, ast.Call) else None
        if isinstance(op, ast.Lt | ast.LtE) and _is_abs_difference(left):
            wanted = _literal(left.args[0].right)  # type: ignore[attr-defined]
            tolerance = _literal(right)
            return f"{wanted} (within {tolerance})" if wanted and tolerance else None
    if isinstance(check, ast.UnaryOp) and isinstance(check.op, ast.Not):
        return "a false value" if isinstance(check.operand, ast.Call) else None
    return "a true value" if isinstance(check, ast.Call) else None


# A conversion the tests apply to both sides of ``==``: what it keeps of the call's value.
_SAME_ORDER = frozenset({"tuple", "list"})
_ANY_ORDER = frozenset({"set", "sorted"})


def _unwrapped(left: ast.Call, right: ast.expr) -> str | None:
    """The literal of ``tuple(f(x)) == tuple([1, 2])`` as the value ``f(x)`` must hold: ``[1,
    2]`` (``in any order`` under ``set``/``sorted``), not ``tuple([1, 2])``, which would tell a
    reader that a tuple is wanted where any sequence of those items passes."""
    mine, theirs = _converted(left), _converted(right)
    if mine is None or theirs is None or mine[0] != theirs[0]:
        return None
    if not isinstance(mine[1], ast.Call):  # the converted side is the call under test
        return None
    inner = _literal(theirs[1])
    if inner is None:
        return None
    return inner if mine[0] in _SAME_ORDER else f"{inner} in any order"


def _converted(node: ast.expr) -> tuple[str, ast.expr] | None:
    """``("tuple", x)`` for ``tuple(x)``, and the like for the other conversions; else None."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
        return None
    if len(node.args) != 1 or node.keywords or node.func.id not in _SAME_ORDER | _ANY_ORDER:
        return None
    return node.func.id, node.args[0]


def _is_abs_difference(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "abs"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.BinOp)
        and isinstance(node.args[0].op, ast.Sub)
        and isinstance(node.args[0].left, ast.Call)
    )


_PLAIN_CALLS = frozenset({"tuple", "list", "set", "sorted", "float", "int", "abs"})


def _literal(node: ast.expr) -> str | None:
    """``node`` as written when it is a value, not code: literals and arithmetic on them
    (``2.0/3.0``), through ``tuple(…)`` and the like; None when it names anything else (a
    variable, a helper of the tests)."""
    for part in ast.walk(node):
        if isinstance(part, ast.Call):
            if not isinstance(part.func, ast.Name) or part.func.id not in _PLAIN_CALLS:
                return None
        elif isinstance(part, ast.Name):
            if part.id not in _PLAIN_CALLS:
                return None
        elif isinstance(part, ast.Attribute | ast.Lambda | ast.NamedExpr | ast.comprehension):
            return None
    return ast.unparse(node)


def _fact(where: str, expected: str, actual: str) -> Fact:
    return Fact(where=where, expected=expected, actual=actual)


def _answer_line(n: int, program: Program) -> str:
    if n <= 0:
        return "an unknown line"
    if n > program.offset:
        return f"line {n - program.offset} of your code"
    return f"line {n} of the problem's prompt"


def _status(code: int) -> str:
    if code < 0:
        return f"was killed by signal {-code}"
    return f"exited with status {code}"
